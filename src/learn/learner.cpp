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
#include <stdexcept>

#include <Eigen/QR>

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
  std::optional<SculptResult> sculpt;  // absent under the hull oracle
  SpanResult span;
  NetResult net;
  double validation_error = INFINITY;
};

// What every stage of a run shares: the sample stream (each stage takes the
// next disjoint range, from `offset`), the options, the truth and the report.
struct Pipeline {
  const SampleSource& source;
  const LearnOptions& o;
  const Instance* truth_instance;
  const Layer* truth;
  LearnReport& rep;
  int k, d, m;
  int64_t polish_reserve;  // samples at a finite dataset's end kept for polishing
  uint64_t offset = 0;     // next unused sample of the stream

  void record(StageRecord r) { rep.stages.push_back(std::move(r)); }
};

StageRecord oracle_record(const char* stage, int round, const std::string& what) {
  return StageRecord{stage, round, 0, 0, "oracle: " + what, {{"oracle", true}, {"supplied", what}}};
}

MatD true_w_sum(const Pipeline& p) { return p.truth->w_sum(); }

// ---- Stage 1 -----------------------------------------------------------------

StageRecord stage1_record(const Stage1Result& s1, const Layer* truth) {
  StageRecord r{"1", -1, s1.samples, s1.seconds, "", {}};
  r.details = {{"standard_error_rel", s1.standard_error.norm() / std::max(s1.w_hat.norm(), 1e-300)}};
  if (truth) r.details["w_sum_rel_error"] = w_sum_error(s1.w_hat, truth);
  r.summary = format("W_sum crude estimate, relative SE %.2e", r.details["standard_error_rel"].get<double>());
  if (truth) r.summary += format("; true error %.3e", w_sum_error(s1.w_hat, truth));
  return r;
}

MatD run_stage1(Pipeline& p) {
  if (p.o.oracle.stage1) {
    p.record(oracle_record("1", -1, "W_sum = Σ W_i from the truth"));
    return true_w_sum(p);
  }
  Stage1Options s1o;
  s1o.samples = p.o.stage1_samples;
  s1o.threads = p.o.threads;
  s1o.first_sample = p.offset;
  const Stage1Result s1 = stage1_estimate_wsum(p.source, s1o);
  p.offset += s1.samples;
  p.record(stage1_record(s1, p.truth));
  return s1.w_hat;
}

// ---- Stages 2 and 4 ------------------------------------------------------------

// Round 0's Ŵ is crude (the W-sum bias, ~10–20%), which makes the lemma's
// widths vacuous (δ ≥ v̂); its slabs are kept with an optimistic σ_min so that
// they act as weighted estimates for the least-squares centre — the planning
// prototype's use — and the report marks them heuristic. From round 1 (or in
// round 0 with an exact W_Σ from the stage-1 oracle) the widths rest on the
// stated assumptions σ_min(C) ≥ default_sigma_min and ‖W_Σ − Ŵ‖_op ≤ w_error.
bool crude_widths(const Pipeline& p, int round) { return round == 0 && !p.o.oracle.stage1; }

StageRecord sculpt_record(const ResculptResult& rs, const ResculptOptions& ro, int round, bool heuristic_widths) {
  const SculptReport& sr = rs.sculpt.report;
  StageRecord r{round == 0 ? "2" : "4", round, rs.pilot_samples + sr.samples, sr.seconds, "", {}};
  r.details = {{"tau", rs.tau}, {"pilot_samples", rs.pilot_samples}, {"pilot_eligible_rows", rs.pilot_eligible_rows},
               {"rows_certified", sr.rows_certified}, {"constraints", sr.constraints}, {"budget_exhausted", sr.budget_exhausted},
               {"sigma_min_assumed", ro.sculpt.certify.sigma_min}, {"w_error_assumed", ro.sculpt.certify.w_error},
               {"widths", heuristic_widths ? "heuristic (crude W_sum: optimistic sigma_min)" : "certification lemma under the stated assumptions"},
               {"numerical_rank", sr.numerical_rank}, {"gap", sr.gap}};
  r.summary = format("tau %.2e: %lld constraints, gap %.2e, %s widths", rs.tau, (long long)sr.constraints, sr.gap,
                     heuristic_widths ? "heuristic" : "lemma");
  if (ro.sculpt.certify.label_noise > 0 || ro.sculpt.certify.float32_labels) {
    r.details["label_noise_assumed"] = ro.sculpt.certify.label_noise;
    r.details["float32_labels"] = ro.sculpt.certify.float32_labels;
    r.details["noise_failure_probability"] = ro.sculpt.certify.noise_failure_probability;
  }
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
  return r;
}

// Why an empty body ends the run, as one line.
std::string empty_body_message(const Pipeline& p, const ResculptResult& rs, int round) {
  const auto& v = rs.sculpt.report.verdicts;
  const int64_t rank_deficient = v[static_cast<int>(RowVerdict::rank_deficient)];
  if (rs.sculpt.report.rows_examined == 0 && samples_from(p.source, p.offset) == 0)
    return format("the dataset ran out in round %d after %lld samples (%lld more kept for polishing)", round,
                  (long long)p.source.available(), (long long)p.polish_reserve);
  if (rank_deficient > 0 && rank_deficient >= 0.99 * double(rs.sculpt.report.rows_examined))
    return format("round %d certified no row: on %.0f%% of the rows B = X·W_sum is rank-deficient, so v̂ is not "
                  "determined (the certification lemma needs σ_min(C) > 0, i.e. W_i of full rank)", round,
                  100.0 * double(rank_deficient) / double(rs.sculpt.report.rows_examined));
  return format("round %d certified no row (tau %.2e); raise the sculpt budget", round, rs.tau);
}

// Stage 2 (round 0) or 4: sculpt with the current W_Σ and an adaptive τ. The
// body is empty when no row was certified.
SculptResult run_sculpt(Pipeline& p, int round, const MatD& w_sum, double w_error) {
  const bool crude = crude_widths(p, round);
  ResculptOptions ro = sculpt_round_options(p.o, crude ? 0 : std::max(round, 1), p.d, p.k, w_error);
  ro.sculpt.first_sample = p.offset;
  ResculptResult rs = resculpt(p.source, w_sum, p.m, ro, p.truth);
  bool heuristic_widths = crude;
  if (!crude && rs.pilot_eligible_rows == 0) {
    // Under the stated assumptions every row's width is vacuous (δ ≥ v̂): the
    // refined W_Σ is not yet accurate enough. Fall back to round 0's heuristic
    // widths rather than certify nothing; the report says so.
    p.offset += rs.pilot_samples;
    ro.sculpt.first_sample = p.offset;
    ro.sculpt.certify.sigma_min = p.o.crude_sigma_min;
    ro.sculpt.certify.w_error = 0;
    rs = resculpt(p.source, w_sum, p.m, ro, p.truth);
    heuristic_widths = true;
  }
  p.offset += rs.pilot_samples + rs.sculpt.report.samples;
  p.record(sculpt_record(rs, ro, round, heuristic_widths));
  if (rs.sculpt.body.size() == 0) p.rep.message = empty_body_message(p, rs, round);
  return std::move(rs.sculpt);
}

// ---- Stage 5 -------------------------------------------------------------------

SpanResult run_span(Pipeline& p, int round, const SculptResult& sculpt) {
  SpanOptions so;
  so.reference = false;
  SpanResult span = p.o.span(sculpt.body, sculpt.centre, p.m, so);
  StageRecord r{"5", round, 0, span.seconds_fast, "", {}};
  r.details = {{"dimension_fast", span.dimension_fast}, {"gap", span.gap}};
  r.summary = format("hull dimension %d by the singular-value gap (%.2e)", span.dimension_fast, span.gap);
  p.record(std::move(r));
  return span;
}

// The true affine hull aff{Θ_i}: its minimum-norm point and orthonormal
// directions (the hull oracle, in place of stages 2, 4 and 5).
SpanResult true_hull(const Pipeline& p) {
  const int64_t n = int64_t{p.d} * p.d;
  auto flat = [&](int i) { return Eigen::Map<const Eigen::VectorXd>(p.truth->heads[i].theta.data(), n); };
  Eigen::MatrixXd differences(n, p.m - 1);
  for (int i = 1; i < p.m; ++i) differences.col(i - 1) = flat(i) - flat(0);
  SpanResult span;
  span.dimension_fast = p.m - 1;
  span.hull_directions.resize(p.m - 1, n);
  if (p.m > 1) {
    const Eigen::HouseholderQR<Eigen::MatrixXd> qr(differences);
    span.hull_directions = (qr.householderQ() * Eigen::MatrixXd::Identity(n, p.m - 1)).transpose();
  }
  span.hull_point = flat(0) - span.hull_directions.transpose() * (span.hull_directions * flat(0));
  return span;
}

// ---- Stage 6 -------------------------------------------------------------------

StageRecord net_record(const Pipeline& p, const Round& cur, int round) {
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
  if (p.truth_instance) {
    const LayerErrors e = compare_layers(cur.net.layer, *p.truth_instance, p.o.test_seed, 0, p.o.threads);
    r.details["theta_max_rel"] = e.theta_max_rel;
    r.details["w_max_rel"] = e.w_max_rel;
    r.summary += format("; Θ error %.2e, W error %.2e", e.theta_max_rel, e.w_max_rel);
  }
  return r;
}

// The net over `cur.span`'s hull, or the true layer (stage-6 oracle); false
// (with the report's message set) when the net cannot run.
bool run_net(Pipeline& p, int round, Round& cur, const LabelledBatch& validation) {
  if (p.o.oracle.stage6) {
    cur.net.layer = cur.net.coarse_layer = *p.truth;
    cur.validation_error = relative_error(cur.net.layer, validation, p.o.threads);
    p.rep.round_validation_error.push_back(cur.validation_error);
    p.record(oracle_record("6", round, "the true layer"));
    return true;
  }
  NetOptions no = p.o.net;
  no.threads = p.o.threads;
  no.radius = p.o.sculpt.sculpt.radius;
  no.first_sample = p.offset;
  try {
    cur.net = search_net(p.source, cur.span.hull_point, cur.span.hull_directions, p.m, no);
  } catch (const std::exception& e) {
    p.rep.message = format("round %d: %s", round, e.what());
    return false;
  }
  p.offset += cur.net.report.samples;
  cur.validation_error = relative_error(cur.net.layer, validation, p.o.threads);
  p.rep.round_validation_error.push_back(cur.validation_error);
  p.record(net_record(p, cur, round));
  return true;
}

// ---- Stage 3 -------------------------------------------------------------------

StageRecord margin_record(const MarginResult& s3, int round) {
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
  return r;
}

// Stage 3: refine W_Σ with large-margin events of the proxy (fast: the
// minimum-norm point of the least-squares affine set), or the exact W_Σ.
MarginResult run_margin(Pipeline& p, int round, const MatD& proxy) {
  if (p.o.oracle.stage3) {
    MarginResult exact;
    exact.w_sum = true_w_sum(p);
    exact.report.event_rank = p.d;
    p.record(oracle_record("3", round, "W_sum = Σ W_i from the truth"));
    return exact;
  }
  MarginOptions mo = p.o.margin;
  mo.threads = p.o.threads;
  mo.first_sample = p.offset;
  MarginResult s3 = refine_wsum(p.source, proxy, mo, p.truth);
  p.offset += s3.report.pilot_samples + s3.report.samples;
  p.record(margin_record(s3, round));
  return s3;
}

// ---- Reference paths and polishing ---------------------------------------------

// The reference paths on the selected round: the minimum-norm point of K by a
// certified QP (against the fast proxy) and the hull by LP widths.
void run_reference_paths(Pipeline& p, const SculptResult& best) {
  const bool run_reference = p.o.reference && p.d * p.d <= p.o.reference_max_unknowns;
  if (p.o.reference && !run_reference) {
    StageRecord r{"5", p.rep.best_round, 0, 0, "", {}};
    r.details = {{"reference", "skipped"}, {"unknowns", p.d * p.d}, {"reference_max_unknowns", p.o.reference_max_unknowns}};
    r.summary = format("reference paths skipped: d² = %d unknowns > %d (raise --reference-max-unknowns)", p.d * p.d,
                       p.o.reference_max_unknowns);
    p.record(std::move(r));
  }
  if (!run_reference) return;
  const auto t = std::chrono::steady_clock::now();
  const ConvexBody::QpResult qp = best.body.min_norm_point();
  StageRecord r{"3", p.rep.best_round, 0, seconds_since(t), "", {}};
  r.details = {{"reference", "minimum-norm point of K (CLP QP, certified bound)"}, {"status", to_string(qp.status)},
               {"certified", qp.certified}, {"inside_ball", qp.inside_ball}};
  if (qp.status == ConvexBody::QpResult::optimal) {
    const double dist = (qp.x - best.centre.x0).norm();
    r.details["distance_to_fast_proxy"] = dist;
    r.details["fast_proxy_norm"] = best.centre.x0.norm();
    r.summary = format("reference proxy (QP min-norm point of K): ‖P_ref − P_fast‖ = %.2e (‖P_fast‖ = %.2f)%s", dist,
                       best.centre.x0.norm(), qp.certified ? "" : ", uncertified");
  } else {
    r.summary = format("reference proxy (QP min-norm point of K): %s — %s", to_string(qp.status), qp.message.c_str());
  }
  p.record(std::move(r));

  SpanOptions so;
  so.reference = true;
  const SpanResult span = p.o.span(best.body, best.centre, p.m, so);
  StageRecord s{"5", p.rep.best_round, 0, span.seconds_reference, "", {}};
  s.details = {{"reference", "LP widths of K"}, {"dimension_fast", span.dimension_fast},
               {"dimension_reference", span.dimension_reference}, {"subspace_angle", span.subspace_angle},
               {"candidate_widths", span.candidate_widths}, {"agree", span.agree}, {"message", span.message}};
  s.summary = format("reference (LP widths): dimension %d vs fast %d, angle %.2e rad: %s", span.dimension_reference,
                     span.dimension_fast, span.subspace_angle, span.agree ? "agree" : "DISAGREE");
  p.record(std::move(s));
}

// Polishing from `start` on the samples from `first_sample`; the result
// replaces the layer only when validation agrees.
PolishReport run_polish(Pipeline& p, const SampleSource& full_source, uint64_t first_sample, const Layer& start,
                        LearnResult& result) {
  PolishOptions po = p.o.polish_options;
  po.threads = p.o.threads;
  po.first_sample = first_sample;
  const PolishResult pr = polish_layer(full_source, start, po);
  p.offset += pr.report.samples;
  p.rep.samples_polish = pr.report.samples;
  StageRecord r{"polish", -1, pr.report.samples, pr.report.seconds, "", {}};
  r.details = {{"iterations", pr.report.iterations}, {"train_error", pr.report.train_error},
               {"validation_error_before", pr.report.validation_error_before},
               {"validation_error_after", pr.report.validation_error_after}, {"stop_reason", pr.report.stop_reason}};
  // The dense solver's reports keep their earlier keys (committed (16,2,2)
  // reports stay byte-identical); the matrix-free one says so and why.
  if (!pr.report.linear_solver.empty() && !polish_uses_dense_solver(p.d, p.m, po)) {
    r.details["linear_solver"] = pr.report.linear_solver;
    r.details["linear_solver_reason"] = pr.report.linear_solver_reason;
    r.details["cg_iterations"] = pr.report.cg_iterations;
  }
  r.summary = format("Levenberg–Marquardt (variable projection): %d iterations, validation error %.2e -> %.2e (%s)",
                     pr.report.iterations, pr.report.validation_error_before, pr.report.validation_error_after,
                     pr.report.stop_reason.c_str());
  // Polishing is local: from a poor start it can fit the training samples
  // and generalise worse. Keep it only when validation agrees.
  if (pr.report.validation_error_after <= pr.report.validation_error_before) {
    result.layer = pr.layer;
  } else {
    r.details["kept"] = false;
    r.summary += "; not kept: validation error rose";
  }
  p.record(std::move(r));
  return pr.report;
}

// The final fit (learn/noise.hpp) when polishing reached a noise floor: the
// training samples from `first` (a dataset: all it has left, less the held-out
// samples; an oracle: the budget), kept when its held-out error is lower; then
// the noise report from the last fit.
void run_final_fit(Pipeline& p, const SampleSource& full_source, bool finite, uint64_t first,
                   const PolishReport& polish, LearnResult& result) {
  FinalFitLimits limits;
  limits.dataset = finite;
  limits.max_bytes = p.o.final_fit_max_bytes;
  limits.available = p.o.final_fit_samples == 0 ? 0
                     : finite                   ? samples_from(full_source, first) - limits.validation_samples
                                                : p.o.final_fit_samples;
  const int64_t polish_train = polish.residual_entries / (int64_t{p.k} * p.d);
  const FinalFitPlan plan = plan_final_fit(polish, polish_train, p.k, p.d, p.m, limits);
  PolishReport last = polish;
  int64_t last_train = polish_train;
  if (plan.samples > 0) {
    if (p.truth_instance)
      p.rep.errors_before_final_fit =
          compare_layers(result.layer, *p.truth_instance, p.o.test_seed, p.o.test_samples, p.o.threads);
    const PolishResult fit = polish_layer(
        full_source, result.layer, final_fit_options(p.o.polish_options, plan, limits.validation_samples, first, p.o.threads));
    p.rep.samples_final_fit = fit.report.samples;
    if (!finite) p.offset += fit.report.samples;
    StageRecord r{"fit", -1, fit.report.samples, fit.report.seconds, "", {}};
    r.details = {{"train_samples", plan.samples}, {"iterations", fit.report.iterations},
                 {"train_error", fit.report.train_error}, {"validation_error_before", fit.report.validation_error_before},
                 {"validation_error_after", fit.report.validation_error_after}, {"stop_reason", fit.report.stop_reason},
                 {"cg_iterations", fit.report.cg_iterations}, {"why_this_many", plan.reason}};
    r.summary = format("final fit on %lld samples (%s): %d iterations, validation error %.2e -> %.2e (%s)",
                       (long long)plan.samples, plan.reason.c_str(), fit.report.iterations,
                       fit.report.validation_error_before, fit.report.validation_error_after,
                       fit.report.stop_reason.c_str());
    if (fit.report.validation_error_after <= fit.report.validation_error_before) {
      result.layer = fit.layer;
      last = fit.report;
      last_train = plan.samples;
    } else {
      r.details["kept"] = false;
      r.summary += "; not kept: validation error rose";
    }
    p.record(std::move(r));
  }
  p.rep.noise = assess_noise(last, last_train, p.k, p.d, p.m, p.o.float32_labels, p.o.label_noise);
  p.rep.noise->final_fit = plan;
}

}  // namespace

ResculptOptions sculpt_round_options(const LearnOptions& o, int round, int d, int k, double w_error) {
  ResculptOptions ro = o.sculpt;
  ro.sculpt.threads = o.threads;
  ro.sculpt.certify.sigma_min = round == 0 ? o.crude_sigma_min : default_sigma_min(d, k, o.m);
  ro.sculpt.certify.w_error = round == 0 ? 0 : w_error;
  ro.sculpt.certify.label_noise = o.label_noise;
  ro.sculpt.certify.float32_labels = o.float32_labels;
  if (round == 0 && o.crude_sculpt_samples > 0) ro.sculpt.max_samples = std::min(ro.sculpt.max_samples, o.crude_sculpt_samples);
  return ro;
}

std::string check_learn_input(int k, int d, int m) {
  if (m < 1) return "the number of heads m must be at least 1, got " + std::to_string(m);
  if (k < 2) return "k = 1: every attention row is trivial, nothing to learn about Θ";
  return "";
}

std::string parse_oracle_stages(const std::string& list, OracleStages& out) {
  OracleStages o;
  std::string item;
  std::istringstream in(list);
  while (std::getline(in, item, ',')) {
    if (item == "stage1") o.stage1 = true;
    else if (item == "hull" || item == "stage2" || item == "stage4" || item == "stage5") o.hull = true;
    else if (item == "stage3") o.stage3 = true;
    else if (item == "stage6") o.stage6 = true;
    else return "unknown oracle stage '" + item + "' (stage1, stage2, stage3, stage4, stage5, stage6 or hull)";
  }
  out = o;
  return "";
}

std::vector<std::string> oracle_stage_names(const OracleStages& o) {
  std::vector<std::string> names;
  if (o.stage1) names.push_back("stage1");
  if (o.hull) names.push_back("hull");
  if (o.stage3) names.push_back("stage3");
  if (o.stage6) names.push_back("stage6");
  return names;
}

LearnResult learn_layer(const SampleSource& full_source, const LearnOptions& options, const Instance* truth_instance) {
  LearnOptions o = options;  // float32_labels is set from the validation labels below
  if (o.oracle.any() && !truth_instance)
    throw std::invalid_argument("oracle stages need the true instance, not a dataset");
  const auto start = std::chrono::steady_clock::now();
  const int m = o.m;
  // A finite dataset keeps the samples polishing needs at its end, out of the stages' reach.
  const bool finite = full_source.available() < std::numeric_limits<int64_t>::max();
  const int64_t polish_reserve =
      finite && o.polish ? polish_samples_needed(full_source.d(), full_source.k(), m, o.polish_options) : 0;
  const PrefixSource source(full_source, full_source.available() - polish_reserve);
  LearnResult result;
  LearnReport& rep = result.report;
  Pipeline p{source, o, truth_instance, truth_instance ? &truth_instance->layer : nullptr, rep,
             full_source.k(), full_source.d(), m, polish_reserve};
  // Stages 2, 4 and 5 (hull oracle) or 6 (stage-6 oracle) replaced: nothing a later round changes feeds them.
  const int max_rounds = o.oracle.hull || o.oracle.stage6 ? 1 : o.max_rounds;

  // The shared validation set comes first in the stream, so it is the same whatever the budgets.
  const LabelledBatch validation = source.draw(p.offset, o.validation_samples, o.threads);
  p.offset += validation.x.count;
  rep.validation_samples = validation.x.count;
  if (validation.x.count == 0) {
    rep.message = "no samples for validation";
    return result;
  }
  o.float32_labels = o.float32_labels || labels_are_float32(validation.y);

  MatD w_sum = run_stage1(p);
  double w_error_assumed = 0;
  bool last_w_improved = true;
  double last_w_standard_error = INFINITY;
  std::vector<Round> rounds;
  for (int round = 0; round < max_rounds; ++round) {
    if (o.max_seconds > 0 && seconds_since(start) > o.max_seconds) {
      rep.message = format("time budget of %.0f s reached before round %d", o.max_seconds, round);
      break;
    }
    Round cur;
    if (o.oracle.hull) {
      p.record(oracle_record(round == 0 ? "2" : "4", round, "the true affine hull of the Θ_i (stages 2, 4, 5)"));
      cur.span = true_hull(p);
    } else {
      cur.sculpt = run_sculpt(p, round, w_sum, w_error_assumed);
      if (cur.sculpt->body.size() == 0) break;  // run_sculpt said why
      cur.span = run_span(p, round, *cur.sculpt);
    }
    if (!run_net(p, round, cur, validation)) break;
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
    if (round + 1 == max_rounds) break;

    const MatD proxy = Eigen::Map<const MatD>(rounds.back().sculpt->centre.x0.data(), p.d, p.d);
    const MarginResult s3 = run_margin(p, round, proxy);
    if (s3.report.event_rank < p.d) {
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
    rep.samples_total = rep.samples_paper = p.offset;
    if (rep.message.empty()) rep.message = "no round completed";
    return result;
  }
  const Round& best = rounds[rep.best_round];
  // The reference paths check the body the selected layer came from: none under
  // the hull oracle, and an unused one under the stage-6 oracle.
  if (best.sculpt && !o.oracle.stage6) run_reference_paths(p, *best.sculpt);

  result.paper_layer = best.net.layer;
  result.layer = best.net.layer;
  if (truth_instance) {
    rep.errors_coarse_net = compare_layers(best.net.coarse_layer, *truth_instance, o.test_seed, o.test_samples, o.threads);
    rep.errors_before_polish = compare_layers(best.net.layer, *truth_instance, o.test_seed, o.test_samples, o.threads);
  }
  rep.samples_paper = p.offset;
  if (o.polish) {
    const PolishReport polish =
        run_polish(p, full_source, finite ? static_cast<uint64_t>(source.available()) : p.offset, best.net.layer, result);
    run_final_fit(p, full_source, finite, finite ? static_cast<uint64_t>(rep.samples_paper) : p.offset, polish, result);
  } else {
    rep.noise = unpolished_noise(rep.round_validation_error[rep.best_round], rep.validation_samples, o.float32_labels,
                                 o.label_noise);
  }
  if (truth_instance) rep.errors = compare_layers(result.layer, *truth_instance, o.test_seed, o.test_samples, o.threads);
  rep.samples_total = p.offset;
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
  if (r.noise) out["noise"] = to_json(*r.noise);
  if (r.samples_final_fit > 0) out["samples_final_fit"] = r.samples_final_fit;
  if (r.errors_before_final_fit) out["errors_before_final_fit"] = errors_json(*r.errors_before_final_fit);
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
  if (r.noise) out << format_noise(*r.noise);
  auto errors = [&](const char* label, const std::optional<LayerErrors>& e) {
    if (!e) return;
    out << format("%-34s max Θ error %.3e   max W error %.3e   test error %.3e\n", label, e->theta_max_rel, e->w_max_rel,
                  e->test_relative_error);
  };
  errors("errors (exhaustive net only):", r.errors_coarse_net);
  errors("errors (paper's stages):", r.errors_before_polish);
  errors("errors (after polishing):", r.samples_final_fit > 0 ? r.errors_before_final_fit : r.errors);
  if (r.samples_final_fit > 0) errors("errors (after the final fit):", r.errors);
  return out.str();
}

std::string reference_disagreement(const LearnReport& report) {
  for (const auto& s : report.stages)
    if (s.details.is_object() && s.details.contains("agree") && s.details["agree"] == false)
      return "stage " + s.stage + "'s reference path disagrees with its fast path: " + s.summary;
  return "";
}

}  // namespace mha
