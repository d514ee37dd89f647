// The learner's driver (learner.hpp): the steps of learn/steps.hpp between safe
// points, the rounds and their selection, the final round, resuming.
#include "learn/learner.hpp"

#include "learn/checkpoint.hpp"
#include "learn/reference_checks.hpp"
#include "learn/steps.hpp"
#include "util/format.hpp"
#include "util/memory.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace mha {

namespace {

// A round is followed by another while its layer's validation error or stage 3's
// standard error of W_Σ falls by this factor (a third or more) against the best so far.
constexpr double kRoundImprovement = 1.5;

// ---- The driver: steps between safe points ------------------------------------

// Stages 2, 4 and 5 (hull oracle) or 6 (stage-6 oracle) replaced: nothing a later
// round changes feeds them. The paper variant runs one pass: stage 2 (round 0), then 4.
int max_rounds(const LearnOptions& o) {
  return o.oracle.hull || o.oracle.stage6 ? 1 : o.variant == LearnVariant::paper ? 2 : o.max_rounds;
}

// The extended variant's final stage-4 round, once, with the stage-3 W_Σ of
// smallest standard error (none under the hull or stage-6 oracles).
bool wants_final_round(const LearnOptions& o, const LearnState& s) {
  return o.variant == LearnVariant::extended && !o.oracle.hull && !o.oracle.stage6 && final_sculpt_budget(o) > 0 &&
         !s.final_round && std::isfinite(s.final_w_standard_error);
}

// Whether another final round follows the `done` ones, the last of which (round
// `round`) validated at `validation_error`. Automatic (final_rounds = 0): recorded
// as a diagnostic, the rule of kAutoFinalRoundValidation (learner.hpp).
bool another_final_round(Pipeline& p, int round, int done, double validation_error) {
  if (p.o.final_rounds > 0) return done < p.o.final_rounds;
  if (done >= kAutoFinalRoundsMax) return false;
  const double bar = automatic_final_round_bar(p.o.label_noise);
  const bool another = automatic_final_round_wanted(validation_error, p.o.label_noise);
  p.diagnose({"4", round, "automatic final rounds",
              format("validation error %.3g %s %.3g (0.36·(1e-3)² + the declared noise² %.3g): %s", validation_error,
                     another ? "above" : "at most", bar, p.o.label_noise * p.o.label_noise,
                     another ? "another final round, with twice the samples" : "no further final round"),
              false});
  return another;
}

// One run of the driver: the pipeline, the state it advances, the shared
// validation set, and the clock (the state's seconds count earlier parts).
struct Run {
  Pipeline& p;
  LearnState& s;
  const LabelledBatch& validation;
  const SampleSource& full_source;  // polishing draws from the reserved tail of a finite dataset
  bool finite;
  std::chrono::steady_clock::time_point start;
  double seconds_before;            // of the parts before this process's

  double elapsed() const { return seconds_before + seconds_since(start); }
  // The rounds end — by their rule (`completed`: the extended variant's final
  // round follows) or by a failure or the time budget (straight to the reference paths).
  void end_rounds(bool completed = false) {
    s.current.reset();
    release_freed_memory();  // the round's body: its slabs' pages back to the system
    if (completed && wants_final_round(p.o, s)) {
      s.final_round = true;
      ++s.round;
      s.next = LearnStep::sculpt;
      return;
    }
    s.next = LearnStep::reference;
  }
};

// Stage 2 or 4 (or the hull oracle) opens round s.round, unless the time budget is spent.
void step_sculpt(Run& run) {
  Pipeline& p = run.p;
  LearnState& s = run.s;
  // Under MPI (o.processes) every rank follows rank 0's clock, so all run the same rounds.
  if (first_process_value(p.o.processes, p.o.max_seconds > 0 && run.elapsed() > p.o.max_seconds)) {
    p.rep.message = format("time budget of %.0f s reached before round %d", p.o.max_seconds, s.round);
    return run.end_rounds();
  }
  s.current.emplace();
  if (p.o.oracle.hull) {
    p.record(oracle_record(s.round == 0 ? "2" : "4", s.round, "the true affine hull of the Θ_i (stages 2, 4, 5)"));
    s.current->span = true_hull(p);
    s.next = LearnStep::net;
    return;
  }
  const MatD& w_sum = s.final_round ? s.final_w_sum : s.w_sum;
  const double w_error = s.final_round ? s.final_w_error : s.w_error_assumed;
  s.current->sculpt = run_sculpt(p, s.round, w_sum, w_error, s.final_round ? s.final_rounds_done : -1);
  if (s.current->sculpt->body.size() == 0) return run.end_rounds();  // run_sculpt said why
  if (p.o.variant == LearnVariant::paper && s.round + 1 < max_rounds(p.o)) {
    // The paper runs stages 5 and 6 once, on the stage-4 body: stage 2's goes to stage 3.
    p.rep.round_validation_error.push_back(NAN);  // no layer in this round
    s.next = LearnStep::margin;
    return;
  }
  s.next = LearnStep::span;
}

// Stage 5. After it only the reference paths read the round's slabs again
// (selected_body_checked); when they do not, the round keeps its centre, the
// body's dimension and radius, and not its slabs — at (64,2,2) those are 16384 ×
// 4096 doubles (537 MB), which stage 6's designs and the next round's body would
// otherwise join (docs/bench/memory.md).
void step_span(Run& run) {
  LearnRound& cur = *run.s.current;
  cur.span = run_span(run.p, run.s.round, *cur.sculpt);
  if (cur.span.hull_point.size() == 0) return run.end_rounds();  // no span: run_span said why
  if (!selected_body_checked(run.p)) {
    cur.sculpt->body = ConvexBody(cur.sculpt->body.dim(), cur.sculpt->body.radius());
    release_freed_memory();
  }
  run.s.next = LearnStep::net;
}

// Stage 6, then the selection: the round is kept when its layer validates
// better. Rounds alternate while the estimates improve by a third or more
// (kRoundImprovement): this round's layer (validation) or the last stage-3 W_Σ (its
// standard error) — when the hull is still crude, W_Σ can keep improving before the
// layer does. A gain under a third does not pay for a round: at (64,2,2) the fourth
// round's layer was 5 % better and the fifth 10 % worse (docs/bench/scaling.md).
void step_net(Run& run) {
  Pipeline& p = run.p;
  LearnState& s = run.s;
  const int round = s.round;
  if (!run_net(p, round, *s.current, run.validation)) return run.end_rounds();
  const double best_validation = s.best ? p.rep.round_validation_error[p.rep.best_round] : INFINITY;
  const bool layer_improved = s.current->validation_error < best_validation;
  const bool layer_improved_enough = s.current->validation_error < best_validation / kRoundImprovement;
  // The paper variant returns its stage-4 layer; the extended one the best by validation.
  if (layer_improved || p.o.variant == LearnVariant::paper) {
    p.rep.best_round = round;
    s.best = *s.current;
  }
  if (s.final_round) {
    // Another final round: stage 3 first, with this round's heads as proxies when its layer fits.
    if (another_final_round(p, round, ++s.final_rounds_done, s.current->validation_error)) {
      s.next = LearnStep::margin;
      return;
    }
    return run.end_rounds();
  }
  if (p.o.variant == LearnVariant::extended && !layer_improved_enough && !s.last_w_improved) {
    p.rep.message = format("stopped after round %d: neither the layer nor W_sum improved by a third", round);
    return run.end_rounds(true);
  }
  if (round + 1 == max_rounds(p.o)) return run.end_rounds(true);
  s.next = LearnStep::margin;
}

// Stage 3 refines W_Σ from this round's proxy for the next round.
void step_margin(Run& run) {
  Pipeline& p = run.p;
  LearnState& s = run.s;
  const MarginResult s3 = run_margin(p, s.round, margin_proxies(p, *s.current));
  if (s3.report.event_rank < p.d) {
    p.rep.message = format("round %d: stage 3 found too few events to refine W_sum (rank %d < d)", s.round,
                           s3.report.event_rank);
    return run.end_rounds();
  }
  s.w_sum = s3.w_sum;
  s.w_error_assumed = p.o.w_error_factor * s3.report.standard_error;
  s.last_w_improved = s3.report.relative_standard_error < s.last_w_standard_error / kRoundImprovement;
  s.last_w_standard_error = s3.report.relative_standard_error;
  if (s3.report.relative_standard_error < s.final_w_standard_error) {
    s.final_w_sum = s.w_sum;
    s.final_w_error = s.w_error_assumed;
    s.final_w_standard_error = s3.report.relative_standard_error;
  }
  s.current.reset();
  release_freed_memory();
  ++s.round;
  s.next = LearnStep::sculpt;
}

// The reference paths on the selected round and the paper's stages' errors;
// the run fails here when no round completed.
void step_reference(Run& run) {
  Pipeline& p = run.p;
  LearnState& s = run.s;
  if (!s.best) {
    p.rep.seconds = run.elapsed();
    p.rep.samples_total = p.rep.samples_paper = p.offset;
    if (p.rep.message.empty()) p.rep.message = "no round completed";
    s.next = LearnStep::done;
    return;
  }
  const LearnRound& best = *s.best;
  check_selected_round(p, best);
  if (p.truth_instance) {
    const Instance& truth = *p.truth_instance;
    const auto errors = [&](const Layer& layer) {
      return compare_layers(layer, truth, p.o.test_seed, p.o.test_samples, p.o.threads, p.o.processes);
    };
    p.rep.errors_coarse_net = errors(best.net.coarse_layer);
    p.rep.errors_before_polish = errors(best.net.layer);
  }
  p.rep.samples_paper = p.offset;
  s.layer = best.net.layer;
  s.next = p.o.polish ? LearnStep::polish : LearnStep::finish;
}

// Polishing, then the final fit when polishing stopped at a noise floor, and
// the noise report from the last fit (learn/noise.hpp).
void step_polish(Run& run) {
  Pipeline& p = run.p;
  LearnResult polished;
  polished.layer = run.s.layer;
  const uint64_t first = run.finite ? static_cast<uint64_t>(p.source.available()) : p.offset;
  const PolishReport polish = run_polish(p, run.full_source, first, run.s.best->net.layer, polished, run.finite);
  run_final_fit(p, run.full_source, run.finite, run.finite ? static_cast<uint64_t>(p.rep.samples_paper) : p.offset,
                polish, polished);
  run.s.layer = std::move(polished.layer);
  check_polish_start(p, run.s.best->net.layer);
  run.s.next = LearnStep::finish;
}

void step_finish(Run& run) {
  Pipeline& p = run.p;
  if (!p.o.polish)
    p.rep.noise = unpolished_noise(p.rep.round_validation_error[p.rep.best_round], p.rep.validation_samples,
                                   p.o.float32_labels, p.o.label_noise);
  if (p.truth_instance)
    p.rep.errors =
        compare_layers(run.s.layer, *p.truth_instance, p.o.test_seed, p.o.test_samples, p.o.threads, p.o.processes);
  p.rep.samples_total = p.offset;
  p.rep.seconds = run.elapsed();
  p.rep.ok = true;
  run.s.next = LearnStep::done;
}

void advance(Run& run) {
  switch (run.s.next) {
    case LearnStep::stage1:
      run.s.w_sum = run_stage1(run.p);
      run.s.next = LearnStep::sculpt;
      return;
    case LearnStep::sculpt: return step_sculpt(run);
    case LearnStep::span: return step_span(run);
    case LearnStep::net: return step_net(run);
    case LearnStep::margin: return step_margin(run);
    case LearnStep::reference: return step_reference(run);
    case LearnStep::polish: return step_polish(run);
    case LearnStep::finish: return step_finish(run);
    case LearnStep::done: return;
  }
}

// CRC-64 of the validation set's inputs and labels: a resumed run must draw the
// same samples (same source, seed, label noise), whatever else the caller checked.
uint64_t validation_digest(const LabelledBatch& batch) {
  Crc64 crc;
  for (int64_t i = 0; i < batch.x.count; ++i) {
    const MatD x = batch.x.sample(i);
    crc.process_bytes(x.data(), sizeof(double) * static_cast<size_t>(x.size()));
  }
  crc.process_bytes(batch.y.data(), sizeof(double) * batch.y.size());
  return crc.checksum();
}

LearnResult interrupted(LearnState s, const Pipeline& p) {
  LearnResult result;
  result.report = std::move(s.report);
  LearnReport& rep = result.report;
  rep.ok = false;
  rep.interrupted = true;
  rep.safe_point = safe_point_name(s);
  rep.message = "interrupted " + rep.safe_point;
  rep.samples_total = p.offset;
  rep.seconds = s.seconds;
  return result;
}

}  // namespace

std::string check_resume(const LearnState& s, int d, int k, int m, const LearnOptions& o) {
  if (s.d != d || s.k != k || s.m != m)
    return format("the checkpoint is of (d,k,m) = (%d,%d,%d), this run's (%d,%d,%d)", s.d, s.k, s.m, d, k, m);
  if (!s.final_round && s.round >= max_rounds(o))
    return format("the checkpoint is in round %d, this run has at most %d rounds", s.round, max_rounds(o));
  if (s.next == LearnStep::stage1 || s.next == LearnStep::done) return "the state is not at a safe point";
  return "";
}

LearnResult learn_layer(const SampleSource& full_source, const LearnOptions& options, const Instance* truth_instance,
                        const LearnState* resume) {
  LearnOptions o = options;  // float32_labels is set from the validation labels below
  if (o.oracle.any() && !truth_instance)
    throw std::invalid_argument("oracle stages need the true instance, not a dataset");
  const int k = full_source.k(), d = full_source.d(), m = o.m;
  if (resume)
    if (auto e = check_resume(*resume, d, k, m, o); !e.empty()) throw std::invalid_argument(e);
  const auto start = std::chrono::steady_clock::now();
  // A finite dataset keeps the samples polishing needs at its end, out of the stages' reach.
  const bool finite = full_source.available() < std::numeric_limits<int64_t>::max();
  const int64_t polish_reserve = finite && o.polish ? polish_samples_needed(d, k, m, o.polish_options) : 0;
  const PrefixSource source(full_source, full_source.available() - polish_reserve);
  LearnState s = resume ? *resume : LearnState{};
  if (o.processes.size > 1)  // count what the processes exchange (the report's processes record)
    o.processes.all_gather = [gather = o.processes.all_gather, &report = s.report](const std::vector<double>& mine) {
      std::vector<double> all = gather(mine);
      ++report.gathers;
      report.gathered_doubles_sent += static_cast<int64_t>(mine.size());
      report.gathered_doubles_received += static_cast<int64_t>(all.size());
      return all;
    };
  Pipeline p{source, o, truth_instance, truth_instance ? &truth_instance->layer : nullptr, s.report,
             k, d, m, polish_reserve};

  // The shared validation set comes first in the stream, so it is the same whatever the budgets.
  const LabelledBatch validation = source.draw(0, o.validation_samples, o.threads);
  o.float32_labels = o.float32_labels || labels_are_float32(validation.y);
  if (resume) {
    if (validation_digest(validation) != s.validation_digest)
      throw std::invalid_argument("the checkpoint was made from other samples (its validation set differs)");
    s.report.resumed_at.push_back(safe_point_name(s));
    p.offset = s.offset;
  } else {
    s.d = d, s.k = k, s.m = m;
    s.report.variant = o.variant;
    s.validation_digest = validation_digest(validation);
    p.offset = validation.x.count;
    s.report.validation_samples = validation.x.count;
    if (validation.x.count == 0) {
      s.report.message = "no samples for validation";
      return LearnResult{{}, {}, std::move(s.report)};
    }
  }

  Run run{p, s, validation, full_source, finite, start, s.seconds};
  while (s.next != LearnStep::done) {
    advance(run);
    s.offset = p.offset;
    s.seconds = run.elapsed();
    if (s.next != LearnStep::done && o.at_safe_point && !o.at_safe_point(s)) return interrupted(std::move(s), p);
  }
  LearnResult result;
  if (s.best && s.report.ok) {
    result.paper_layer = s.best->net.layer;
    result.layer = std::move(s.layer);
  }
  result.report = std::move(s.report);
  return result;
}

}  // namespace mha
