#include "learn/learner.hpp"

#include "learn/format.hpp"

#include "stages/stage1_wsum.hpp"
#include "stages/stage5_span.hpp"

#include <cstdarg>
#include <limits>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace mha {

using nlohmann::json;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

double w_sum_error(const MatD& w, const Layer* truth) {
  if (!truth) return NAN;
  const MatD ws = truth->w_sum();
  return (w - ws).norm() / ws.norm();
}

// One round's products, kept for the selection.
struct Round {
  SculptResult sculpt;
  SpanResult span;
  NetResult net;
  double validation_error = INFINITY;
};

}  // namespace

ResculptOptions sculpt_round_options(const LearnOptions& o, int round, int d, int k, double w_error) {
  ResculptOptions ro = o.sculpt;
  ro.sculpt.threads = o.threads;
  ro.sculpt.certify.sigma_min = round == 0 ? o.crude_sigma_min : default_sigma_min(d, k, o.m);
  ro.sculpt.certify.w_error = round == 0 ? 0 : w_error;
  if (round == 0 && o.crude_sculpt_samples > 0) ro.sculpt.max_samples = std::min(ro.sculpt.max_samples, o.crude_sculpt_samples);
  return ro;
}

std::string check_learn_input(int k, int d, int m) {
  if (m < 1) return "the number of heads m must be at least 1, got " + std::to_string(m);
  if (k < 2) return "k = 1: every attention row is trivial, nothing to learn about Θ";
  return "";
}

LearnResult learn_layer(const SampleSource& full_source, const LearnOptions& o, const Instance* truth_instance) {
  const auto start = std::chrono::steady_clock::now();
  const Layer* truth = truth_instance ? &truth_instance->layer : nullptr;
  const int k = full_source.k(), d = full_source.d(), m = o.m;
  // A finite dataset keeps the samples polishing needs at its end, out of the stages' reach.
  const bool finite = full_source.available() < std::numeric_limits<int64_t>::max();
  const int64_t polish_reserve = finite && o.polish ? polish_samples_needed(d, k, m, o.polish_options) : 0;
  const PrefixSource source(full_source, full_source.available() - polish_reserve);
  LearnResult result;
  LearnReport& rep = result.report;
  uint64_t offset = 0;  // next unused sample of the stream
  auto record = [&](StageRecord r) { rep.stages.push_back(std::move(r)); };

  // The shared validation set comes first in the stream, so it is the same whatever the budgets.
  const LabelledBatch validation = source.draw(offset, o.validation_samples, o.threads);
  offset += validation.x.count;
  rep.validation_samples = validation.x.count;
  if (validation.x.count == 0) {
    rep.message = "no samples for validation";
    return result;
  }

  // Stage 1.
  Stage1Options s1o;
  s1o.samples = o.stage1_samples;
  s1o.threads = o.threads;
  s1o.first_sample = offset;
  const Stage1Result s1 = stage1_estimate_wsum(source, s1o);
  offset += s1.samples;
  {
    StageRecord r{"1", -1, s1.samples, s1.seconds, "", {}};
    r.details = {{"standard_error_rel", s1.standard_error.norm() / std::max(s1.w_hat.norm(), 1e-300)}};
    if (truth) r.details["w_sum_rel_error"] = w_sum_error(s1.w_hat, truth);
    r.summary = format("W_sum crude estimate, relative SE %.2e", r.details["standard_error_rel"].get<double>());
    if (truth) r.summary += format("; true error %.3e", w_sum_error(s1.w_hat, truth));
    record(std::move(r));
  }

  MatD w_sum = s1.w_hat;
  double w_error_assumed = 0;
  bool last_w_improved = true;
  double last_w_standard_error = INFINITY;
  std::vector<Round> rounds;
  for (int round = 0; round < o.max_rounds; ++round) {
    if (o.max_seconds > 0 && seconds_since(start) > o.max_seconds) {
      rep.message = format("time budget of %.0f s reached before round %d", o.max_seconds, round);
      break;
    }
    // Stage 2 (round 0) or 4: sculpt with the current W_Σ and an adaptive τ.
    // Round 0's Ŵ is crude (the W-sum bias, ~10–20%), which makes the lemma's
    // widths vacuous (δ ≥ v̂); its slabs are kept with an optimistic σ_min so that
    // they act as weighted estimates for the least-squares centre — the planning
    // prototype's use — and the report marks them heuristic. From round 1 the
    // widths rest on the stated assumptions σ_min(C) ≥ default_sigma_min and
    // ‖W_Σ − Ŵ‖_op ≤ w_error_factor · (stage 3's standard error).
    ResculptOptions ro = sculpt_round_options(o, round, d, k, w_error_assumed);
    ro.sculpt.first_sample = offset;
    ResculptResult rs = resculpt(source, w_sum, m, ro, truth);
    bool heuristic_widths = round == 0;
    if (round > 0 && rs.pilot_eligible_rows == 0) {
      // Under the stated assumptions every row's width is vacuous (δ ≥ v̂): the
      // refined W_Σ is not yet accurate enough. Fall back to round 0's heuristic
      // widths rather than certify nothing; the report says so.
      offset += rs.pilot_samples;
      ro.sculpt.first_sample = offset;
      ro.sculpt.certify.sigma_min = o.crude_sigma_min;
      ro.sculpt.certify.w_error = 0;
      rs = resculpt(source, w_sum, m, ro, truth);
      heuristic_widths = true;
    }
    offset += rs.pilot_samples + rs.sculpt.report.samples;
    {
      const SculptReport& sr = rs.sculpt.report;
      StageRecord r{round == 0 ? "2" : "4", round, rs.pilot_samples + sr.samples, sr.seconds, "", {}};
      r.details = {{"tau", rs.tau}, {"pilot_samples", rs.pilot_samples}, {"pilot_eligible_rows", rs.pilot_eligible_rows},
                   {"rows_certified", sr.rows_certified}, {"constraints", sr.constraints}, {"budget_exhausted", sr.budget_exhausted},
                   {"sigma_min_assumed", ro.sculpt.certify.sigma_min}, {"w_error_assumed", ro.sculpt.certify.w_error},
                   {"widths", heuristic_widths ? "heuristic (crude W_sum: optimistic sigma_min)" : "certification lemma under the stated assumptions"},
                   {"numerical_rank", sr.numerical_rank}, {"gap", sr.gap}};
      r.summary = format("tau %.2e: %lld constraints, gap %.2e, %s widths", rs.tau, (long long)sr.constraints, sr.gap,
                         heuristic_widths ? "heuristic" : "lemma");
      json verdicts;
      for (int v = 0; v < 6; ++v) verdicts[to_string(static_cast<RowVerdict>(v))] = sr.verdicts[v];
      r.details["verdicts"] = verdicts;
      if (sr.rows_examined == 0) {
        r.summary += "; no samples left";
      } else if (sr.constraints == 0) {
        int top = 0;
        for (int v = 1; v < 6; ++v)
          if (sr.verdicts[v] > sr.verdicts[top]) top = v;
        r.summary += format("; rows examined %lld, most frequent verdict %s (%lld)", (long long)sr.rows_examined,
                            to_string(static_cast<RowVerdict>(top)), (long long)sr.verdicts[top]);
      }
      if (sr.truth && sr.constraints > 0) {
        double violation = 0;
        for (double v : sr.truth->theta_violation) violation = std::max(violation, v);
        r.details["hull_error"] = sr.truth->hull_error;
        r.details["hull_angle"] = sr.truth->hull_angle;
        r.details["theta_max_violation"] = violation;
        r.details["sigma_assumption_violated"] = sr.truth->sigma_assumption_violated;
        r.summary += format("; hull error %.2e", sr.truth->hull_error);
      }
      record(std::move(r));
    }
    if (rs.sculpt.body.size() == 0) {
      const auto& v = rs.sculpt.report.verdicts;
      const int64_t rank_deficient = v[static_cast<int>(RowVerdict::rank_deficient)];
      if (rs.sculpt.report.rows_examined == 0 && samples_from(source, offset) == 0) {
        rep.message = format("the dataset ran out in round %d after %lld samples (%lld more kept for polishing)", round,
                             (long long)source.available(), (long long)polish_reserve);
        break;
      }
      rep.message = rank_deficient > 0 && rank_deficient >= 0.99 * double(rs.sculpt.report.rows_examined)
                        ? format("round %d certified no row: on %.0f%% of the rows B = X·W_sum is rank-deficient, so v̂ is not "
                                 "determined (the certification lemma needs σ_min(C) > 0, i.e. W_i of full rank)", round,
                                 100.0 * double(rank_deficient) / double(rs.sculpt.report.rows_examined))
                        : format("round %d certified no row (tau %.2e); raise the sculpt budget", round, rs.tau);
      break;
    }

    // Stage 5 (fast path; the reference runs on the selected round below).
    Round cur{std::move(rs.sculpt), {}, {}, INFINITY};
    SpanOptions so;
    so.reference = false;
    cur.span = find_span(cur.sculpt.body, cur.sculpt.centre, m, so);
    {
      StageRecord r{"5", round, 0, cur.span.seconds_fast, "", {}};
      r.details = {{"dimension_fast", cur.span.dimension_fast}, {"gap", cur.span.gap}};
      r.summary = format("hull dimension %d by the singular-value gap (%.2e)", cur.span.dimension_fast, cur.span.gap);
      record(std::move(r));
    }

    // Stage 6: the net over this round's hull.
    NetOptions no = o.net;
    no.threads = o.threads;
    no.radius = o.sculpt.sculpt.radius;
    no.first_sample = offset;
    try {
      cur.net = search_net(source, cur.span.hull_point, cur.span.hull_directions, m, no);
    } catch (const std::exception& e) {
      rep.message = format("round %d: %s", round, e.what());
      break;
    }
    offset += cur.net.report.samples;
    cur.validation_error = relative_error(cur.net.layer, validation, o.threads);
    rep.round_validation_error.push_back(cur.validation_error);
    {
      const NetReport& nr = cur.net.report;
      StageRecord r{"6", round, nr.samples, nr.seconds, "", {}};
      r.details = {{"grid_per_axis", nr.grid_per_axis}, {"coarse_resolution", nr.coarse_resolution},
                   {"tuples_exhaustive", nr.tuples_exhaustive}, {"coarse_validation_error", nr.coarse_validation_error},
                   {"refine_iterations", nr.refine_iterations}, {"tuples_refine", nr.tuples_refine},
                   {"refine_capped", nr.refine_capped},
                   {"final_resolution", nr.final_resolution}, {"validation_error", cur.validation_error}};
      r.summary = format("net %d/axis (%lld tuples) then refined to step %.1e%s: validation error %.2e",
                         nr.grid_per_axis, (long long)nr.tuples_exhaustive, nr.final_resolution,
                         nr.refine_capped ? " (iteration cap)" : "", cur.validation_error);
      if (truth_instance) {
        const LayerErrors e = compare_layers(cur.net.layer, *truth_instance, o.test_seed, 0, o.threads);
        r.details["theta_max_rel"] = e.theta_max_rel;
        r.details["w_max_rel"] = e.w_max_rel;
        r.summary += format("; Θ error %.2e, W error %.2e", e.theta_max_rel, e.w_max_rel);
      }
      record(std::move(r));
    }
    const bool layer_improved = rounds.empty() || cur.validation_error < rep.round_validation_error[rep.best_round];
    if (layer_improved) rep.best_round = round;
    rounds.push_back(std::move(cur));
    // Alternate while the estimates improve: this round's layer (validation) or
    // the last stage-3 W_Σ (its standard error fell by a third or more) — when the
    // hull is still crude, W_Σ can keep improving before the layer does.
    if (!layer_improved && !(last_w_improved)) {
      rep.message = format("stopped after round %d: neither the layer nor W_sum improved", round);
      break;
    }
    if (round + 1 == o.max_rounds) break;

    // Stage 3: refine W_Σ with large-margin events of the proxy (fast: the
    // minimum-norm point of the least-squares affine set).
    const Round& last = rounds.back();
    const Eigen::VectorXd& x0 = last.sculpt.centre.x0;
    const MatD proxy = Eigen::Map<const MatD>(x0.data(), d, d);
    MarginOptions mo = o.margin;
    mo.threads = o.threads;
    mo.first_sample = offset;
    const MarginResult s3 = refine_wsum(source, proxy, mo, truth);
    offset += s3.report.pilot_samples + s3.report.samples;
    {
      const MarginReport& mr = s3.report;
      StageRecord r{"3", round, mr.pilot_samples + mr.samples, mr.seconds, "", {}};
      r.details = {{"threshold", mr.threshold}, {"events", mr.events}, {"events_kept", mr.events_kept},
                   {"event_rank", mr.event_rank}, {"relative_standard_error", mr.relative_standard_error},
                   {"budget_exhausted", mr.budget_exhausted}};
      r.summary = format("margin > %.2f: %lld events (%lld kept), relative SE %.2e", mr.threshold, (long long)mr.events,
                         (long long)mr.events_kept, mr.relative_standard_error);
      if (mr.truth) {
        r.details["w_sum_rel_error"] = mr.truth->w_sum_rel_error;
        r.details["true_not_large_margin"] = mr.truth->true_not_large_margin;
        r.details["true_not_argmax"] = mr.truth->true_not_argmax;
        r.summary += format("; true error %.2e, not-large-margin %.1f%%", mr.truth->w_sum_rel_error,
                            100 * mr.truth->true_not_large_margin);
      }
      record(std::move(r));
    }
    if (s3.report.event_rank < d) {
      rep.message = format("round %d: stage 3 found too few events to refine W_sum (rank %d < d)", round, s3.report.event_rank);
      break;
    }
    w_sum = s3.w_sum;
    w_error_assumed = o.w_error_factor * s3.report.standard_error;
    last_w_improved = s3.report.relative_standard_error < last_w_standard_error / 1.5;
    last_w_standard_error = s3.report.relative_standard_error;
  }
  if (rounds.empty()) {
    rep.seconds = seconds_since(start);
    rep.samples_total = rep.samples_paper = offset;
    if (rep.message.empty()) rep.message = "no round completed";
    return result;
  }
  Round& best = rounds[rep.best_round];

  // Reference paths on the selected round.
  const bool run_reference = o.reference && d * d <= o.reference_max_unknowns;
  if (o.reference && !run_reference) {
    StageRecord r{"5", rep.best_round, 0, 0, "", {}};
    r.details = {{"reference", "skipped"}, {"unknowns", d * d}, {"reference_max_unknowns", o.reference_max_unknowns}};
    r.summary = format("reference paths skipped: d² = %d unknowns > %d (raise --reference-max-unknowns)", d * d,
                       o.reference_max_unknowns);
    record(std::move(r));
  }
  if (run_reference) {
    const auto t = std::chrono::steady_clock::now();
    const ConvexBody::QpResult qp = best.sculpt.body.min_norm_point();
    StageRecord r{"3", rep.best_round, 0, seconds_since(t), "", {}};
    r.details = {{"reference", "minimum-norm point of K (CLP QP, certified bound)"}, {"status", to_string(qp.status)},
                 {"certified", qp.certified}, {"inside_ball", qp.inside_ball}};
    if (qp.status == ConvexBody::QpResult::optimal) {
      const double dist = (qp.x - best.sculpt.centre.x0).norm();
      r.details["distance_to_fast_proxy"] = dist;
      r.details["fast_proxy_norm"] = best.sculpt.centre.x0.norm();
      r.summary = format("reference proxy (QP min-norm point of K): ‖P_ref − P_fast‖ = %.2e (‖P_fast‖ = %.2f)%s", dist,
                         best.sculpt.centre.x0.norm(), qp.certified ? "" : ", uncertified");
    } else {
      r.summary = format("reference proxy (QP min-norm point of K): %s — %s", to_string(qp.status), qp.message.c_str());
    }
    record(std::move(r));

    SpanOptions so;
    so.reference = true;
    const SpanResult span = find_span(best.sculpt.body, best.sculpt.centre, m, so);
    StageRecord s{"5", rep.best_round, 0, span.seconds_reference, "", {}};
    s.details = {{"reference", "LP widths of K"}, {"dimension_fast", span.dimension_fast},
                 {"dimension_reference", span.dimension_reference}, {"subspace_angle", span.subspace_angle},
                 {"candidate_widths", span.candidate_widths}, {"agree", span.agree}, {"message", span.message}};
    s.summary = format("reference (LP widths): dimension %d vs fast %d, angle %.2e rad: %s", span.dimension_reference,
                       span.dimension_fast, span.subspace_angle, span.agree ? "agree" : "DISAGREE");
    record(std::move(s));
  }

  result.paper_layer = best.net.layer;
  result.layer = best.net.layer;
  if (truth_instance) {
    rep.errors_coarse_net = compare_layers(best.net.coarse_layer, *truth_instance, o.test_seed, o.test_samples, o.threads);
    rep.errors_before_polish = compare_layers(best.net.layer, *truth_instance, o.test_seed, o.test_samples, o.threads);
  }
  rep.samples_paper = offset;

  if (o.polish) {
    PolishOptions po = o.polish_options;
    po.threads = o.threads;
    po.first_sample = finite ? static_cast<uint64_t>(source.available()) : offset;
    const PolishResult p = polish_layer(full_source, best.net.layer, po);
    offset += p.report.samples;
    rep.samples_polish = p.report.samples;
    StageRecord r{"polish", -1, p.report.samples, p.report.seconds, "", {}};
    r.details = {{"iterations", p.report.iterations}, {"train_error", p.report.train_error},
                 {"validation_error_before", p.report.validation_error_before},
                 {"validation_error_after", p.report.validation_error_after}, {"stop_reason", p.report.stop_reason}};
    // The dense solver's reports keep their earlier keys (committed (16,2,2)
    // reports stay byte-identical); the matrix-free one says so and why.
    if (!p.report.linear_solver.empty() && !polish_uses_dense_solver(d, m, po)) {
      r.details["linear_solver"] = p.report.linear_solver;
      r.details["linear_solver_reason"] = p.report.linear_solver_reason;
      r.details["cg_iterations"] = p.report.cg_iterations;
    }
    r.summary = format("Levenberg–Marquardt (variable projection): %d iterations, validation error %.2e -> %.2e (%s)",
                       p.report.iterations, p.report.validation_error_before, p.report.validation_error_after,
                       p.report.stop_reason.c_str());
    // Polishing is local: from a poor start it can fit the training samples
    // and generalise worse. Keep it only when validation agrees.
    if (p.report.validation_error_after <= p.report.validation_error_before) {
      result.layer = p.layer;
    } else {
      r.details["kept"] = false;
      r.summary += "; not kept: validation error rose";
    }
    record(std::move(r));
  }
  if (truth_instance) rep.errors = compare_layers(result.layer, *truth_instance, o.test_seed, o.test_samples, o.threads);
  rep.samples_total = offset;
  rep.seconds = seconds_since(start);
  rep.ok = true;
  return result;
}

json to_json(const LearnReport& r) {
  json stages = json::array();
  for (const auto& s : r.stages) {
    json j = s.details;
    j["stage"] = s.stage;
    if (s.round >= 0) j["round"] = s.round;
    j["samples"] = s.samples;
    j["seconds"] = s.seconds;
    j["summary"] = s.summary;
    stages.push_back(j);
  }
  json out = {{"stages", stages}, {"round_validation_error", r.round_validation_error}, {"best_round", r.best_round},
              {"samples_paper_stages", r.samples_paper}, {"samples_polish", r.samples_polish},
              {"samples_total", r.samples_total}, {"validation_samples", r.validation_samples}, {"seconds", r.seconds}, {"ok", r.ok}, {"message", r.message}};
  if (r.errors_coarse_net) out["errors_coarse_net"] = errors_json(*r.errors_coarse_net);
  if (r.errors_before_polish) out["errors_before_polish"] = errors_json(*r.errors_before_polish);
  if (r.errors) out["errors"] = errors_json(*r.errors);
  return out;
}

std::string format_table(const LearnReport& r) {
  std::ostringstream out;
  out << format("%-7s %5s %11s %8s  %s\n", "stage", "round", "samples", "seconds", "what it did");
  for (const auto& s : r.stages)
    out << format("%-7s %5s %11lld %8.2f  %s\n", s.stage.c_str(), s.round >= 0 ? std::to_string(s.round).c_str() : "-",
                  (long long)s.samples, s.seconds, s.summary.c_str());
  out << format("\nsamples: %lld by the paper's stages (incl. %lld-sample validation set), %lld by polishing; %.1f s in all\n",
                (long long)r.samples_paper, (long long)r.validation_samples,
                (long long)r.samples_polish, r.seconds);
  if (r.best_round >= 0) out << format("best round by validation: %d\n", r.best_round);
  if (!r.message.empty()) out << "note: " << r.message << "\n";
  auto errors = [&](const char* label, const std::optional<LayerErrors>& e) {
    if (!e) return;
    out << format("%-34s max Θ error %.3e   max W error %.3e   test error %.3e\n", label, e->theta_max_rel, e->w_max_rel,
                  e->test_relative_error);
  };
  errors("errors (exhaustive net only):", r.errors_coarse_net);
  errors("errors (paper's stages):", r.errors_before_polish);
  errors("errors (after polishing):", r.errors);
  return out.str();
}

std::string reference_disagreement(const LearnReport& report) {
  for (const auto& s : report.stages)
    if (s.details.is_object() && s.details.contains("agree") && s.details["agree"] == false)
      return "stage " + s.stage + "'s reference path disagrees with its fast path: " + s.summary;
  return "";
}

}  // namespace mha
