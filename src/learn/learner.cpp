#include "learn/learner.hpp"

#include "learn/checkpoint.hpp"
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

// One round's products, kept for the selection (learner.hpp).
using Round = LearnRound;

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
               {"numerical_rank", sr.numerical_rank}, {"gap", sr.gap}, {"tau_effective", sr.tau_effective},
               {"duplicate_constraints", sr.duplicate_constraints},
               {"hull_error_bound", sr.hull_distance_bound / sr.hull_point_norm},
               {"hull_error_typical", sr.hull_distance_typical / sr.hull_point_norm}};
  r.summary = format("tau %.2e: %lld constraints, gap %.2e, %s widths; lemma's hull error ≤ %.1e (typical %.1e)", rs.tau,
                     (long long)sr.constraints, sr.gap, heuristic_widths ? "heuristic" : "lemma",
                     sr.hull_distance_bound / sr.hull_point_norm, sr.hull_distance_typical / sr.hull_point_norm);
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

// The least-squares centre costs O(N·d⁴) time and N·d² doubles: at d = 64, 8·d² slabs
// would take 1 GB and a 32768 × 4096 QR; 2¹⁴ slabs (4 per unknown there) keep most of
// the gain (at d = 32, 4·d² slabs gave 1.4e−4 against 1.2e−4 for 8·d²: docs/variants.md).
constexpr int64_t kMaxExtendedSlabs = int64_t{1} << 14;

int64_t final_sculpt_budget(const LearnOptions& o) {
  if (o.final_sculpt_samples != 0) return o.final_sculpt_samples;
  // m = 3: the body's error falls ∝ 1/√S, so 8× the samples buy ~2.8× (1e−3 at
  // (16,2,3)); m ≥ 4 (∝ S^{−1/3} or slower) gains too little for the time.
  return o.m == 3 ? 256000000 : 32000000;
}

// The paper variant's stage-4 τ: rows where every head agrees exactly still have
// the residual ‖v̂X(W_Σ − Ŵ)‖ ≤ w_error‖v̂X‖ (the certification lemma's W term),
// about w_error·√d/‖Ŵ‖_F of ‖y_a‖ for a typical row; τ is twice that, and at
// least paper_tau.
double paper_tau(const LearnOptions& o, const MatD& w_sum, double w_error) {
  return std::max(o.paper_tau, 2 * w_error * std::sqrt(double(w_sum.rows())) / w_sum.norm());
}

// Whether the lemma's widths left too little to go on: no row (paper), or — extended —
// fewer independent slabs than the hull's constrained directions (d² − (m − 1)), so the
// hull is not determined (measured at (16,3,2): 15 slabs from 2·10⁶ samples when stage
// 3's W_Σ was 2% off; docs/variants.md).
bool lemma_widths_too_few(const Pipeline& p, const ResculptResult& rs) {
  if (p.o.variant == LearnVariant::paper) return rs.pilot_eligible_rows == 0;
  return rs.sculpt.report.numerical_rank < p.d * p.d - (p.m - 1);
}

// Stage 2 (round 0) or 4: sculpt with the current W_Σ and an adaptive τ. The
// body is empty when no row was certified.
// `final_index`: which final round this is (0, 1, …; −1: not a final round); the j-th has 2^j times the budget.
SculptResult run_sculpt(Pipeline& p, int round, const MatD& w_sum, double w_error, int final_index = -1) {
  const bool crude = crude_widths(p, round);
  ResculptOptions ro = sculpt_round_options(p.o, crude ? 0 : std::max(round, 1), p.d, p.k, w_error);
  if (final_index >= 0) ro.sculpt.max_samples = final_sculpt_budget(p.o) << final_index;
  if (ro.fixed_tau) ro.sculpt.certify.tau = paper_tau(p.o, w_sum, w_error);
  ro.sculpt.first_sample = p.offset;
  ResculptResult rs = resculpt(p.source, w_sum, p.m, ro, p.truth);
  bool heuristic_widths = crude;
  if (!crude && lemma_widths_too_few(p, rs)) {
    // Under the stated assumptions every row's width is vacuous (δ ≥ v̂): the
    // refined W_Σ is not yet accurate enough. Fall back to round 0's heuristic
    // widths rather than certify nothing; the report says so. (Without a pilot
    // the same samples are read again: they gave nothing.)
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
  // m ≥ 3: the grid pruned to the ball, refined head by head (m = 2 keeps its committed keys and line).
  if (nr.grid_centred || nr.refine_head_wise) {
    r.details["grid_cells"] = nr.grid_cells;
    r.details["grid_points"] = nr.grid_points;
    r.details["grid"] = nr.grid_centred ? "cell centres meeting the ball (proofs/net_pruning.md)" : "interval vertices";
    r.details["refinement"] = nr.refine_head_wise ? "head by head" : "joint";
    r.details["refine_extrapolations"] = nr.refine_extrapolations;
    r.summary = format("net %d/axis, %lld of %lld cells in the ball (%lld tuples), then %s to step %.1e%s: "
                       "validation error %.2e",
                       nr.grid_per_axis, (long long)nr.grid_points, (long long)nr.grid_cells,
                       (long long)nr.tuples_exhaustive, nr.refine_head_wise ? "head by head" : "jointly",
                       nr.final_resolution, nr.refine_capped ? " (iteration cap)" : "", cur.validation_error);
  }
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
  if (p.o.variant == LearnVariant::paper) no.max_refine_iterations = 0;  // the exhaustive net alone
  no.threads = p.o.threads;
  no.radius = p.o.sculpt.sculpt.radius;
  no.first_sample = p.offset;
  try {
    cur.net = search_net(p.source, cur.span.hull_point, cur.span.hull_directions, p.m, no);
  } catch (const DatasetError&) {
    throw;  // bad data, not a failed round: the caller reports it
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

// Stage 3's proxies: the paper's minimum-norm point of K (the centre of the
// body's least squares), or — extended, once the round has a layer that fits
// (relative validation error below kHeadsAsProxiesFit) — the net's heads, so that
// an event needs every estimated head large-margin on one token (measured at
// (16,2,3): 1.5% of events with a true head not large-margin against 48% with
// the centre; docs/variants.md). A layer that does not fit (round 0's
// crude body) says nothing about the heads' margins.
constexpr double kHeadsAsProxiesFit = 1e-2;

struct MarginProxies {
  std::vector<MatD> thetas;
  bool heads = false;  // the net's heads (else the body's centre)
};

MarginProxies margin_proxies(const Pipeline& p, const LearnRound& round) {
  MarginProxies out;
  if (p.o.variant == LearnVariant::extended && round.net.layer.m() == p.m && round.validation_error < kHeadsAsProxiesFit) {
    for (const auto& h : round.net.layer.heads) out.thetas.push_back(h.theta);
    out.heads = true;
  } else {
    out.thetas.push_back(Eigen::Map<const MatD>(round.sculpt->centre.x0.data(), p.d, p.d));
  }
  return out;
}

// The margin-stability lemma: with both margins ≥ M, each softmax is within
// 2(k−1)e^{−M} of the same one-hot vector in ℓ1 (proofs/margin_stability.md), so
// M = ln(2(k−1)/target) bounds an event's pattern error by the target.
double paper_margin_threshold(const LearnOptions& o, int k) { return std::log(2.0 * (k - 1) / o.paper_margin_target); }

// Stage 3: refine W_Σ with large-margin events of the proxy (fast: the
// minimum-norm point of the least-squares affine set), or the exact W_Σ.
MarginResult run_margin(Pipeline& p, int round, const MarginProxies& proxies) {
  if (p.o.oracle.stage3) {
    MarginResult exact;
    exact.w_sum = true_w_sum(p);
    exact.report.event_rank = p.d;
    p.record(oracle_record("3", round, "W_sum = Σ W_i from the truth"));
    return exact;
  }
  MarginOptions mo = p.o.margin;
  if (p.o.variant == LearnVariant::paper) mo.fixed_threshold = paper_margin_threshold(p.o, p.k);
  if (proxies.heads) mo.accept_fraction = p.o.heads_accept_fraction;
  mo.threads = p.o.threads;
  mo.first_sample = p.offset;
  MarginResult s3 = refine_wsum(p.source, proxies.thetas, mo, p.truth);
  p.offset += s3.report.pilot_samples + s3.report.samples;
  StageRecord r = margin_record(s3, round);
  r.details["proxy"] = proxies.heads ? "the net's heads" : "the body's centre";
  if (proxies.heads) r.summary += "; proxies: the net's heads";
  p.record(std::move(r));
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
  limits.noiseless = full_source.noiseless();
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
  p.rep.noise = assess_noise(last, last_train, p.k, p.d, p.m, p.o.float32_labels, p.o.label_noise, limits.noiseless);
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
  if (o.variant == LearnVariant::paper) {
    ro.sculpt.all_rows = false;
    ro.sculpt.certify.v_min = 0;
    ro.sculpt.selection = SculptOptions::Selection::threshold;
    // Stage 4 with the fixed τ, over its whole budget. Stage 2's residuals cannot go
    // below the crude Ŵ's error (10–20%, which the W-sum lemma does not bound), so
    // there τ is the pilot's quantile, as in the extended variant's round 0.
    if (round > 0) {
      ro.sculpt.certify.tau = o.paper_tau;
      ro.fixed_tau = true;
      if (ro.sculpt.target_constraints == 0) ro.sculpt.target_constraints = std::numeric_limits<int64_t>::max();
    }
  } else {
    // Every round counts distinct slabs: at d = 8 round 0's 205 slabs had rank 6 of 64, and
    // stage 3 then found events of rank 3 < d (docs/diagnosis.md).
    ro.sculpt.distinct_constraints = true;
  }
  if (o.variant == LearnVariant::extended && round > 0) {
    ro.sculpt.certify.v_min_rule = CertifyOptions::VMinRule::pairwise;
    ro.sculpt.selection = SculptOptions::Selection::best_rows;
    if (ro.sculpt.target_constraints == 0)
      ro.sculpt.target_constraints = std::min<int64_t>(o.extended_constraints_per_unknown * int64_t{d} * d, kMaxExtendedSlabs);
  }
  return ro;
}


std::vector<std::pair<std::string, std::string>> variant_choices(LearnVariant v) {
  if (v == LearnVariant::paper)
    return {{"rows", "row 1 of each sample only"},
            {"v_min", "none beyond the lemma's v̂_j > δ"},
            {"tau", "stage 4: twice the residual the lemma's W-error term leaves (at least paper_tau), over the whole budget; stage 2: a pilot's quantile (the crude Ŵ's error is not bounded)"},
            {"stage 3 margin", "fixed M = ln(2(k−1)/paper_margin_target) (margin-stability lemma)"},
            {"rounds", "one pass: 1, 2, 3, 4, 5, 6; the stage-4 layer is returned"},
            {"stage 6", "the exhaustive net only"}};
  return {{"rows", "every row"},
          {"v_min", "0.05, per pair of entries (rounds ≥ 1; every entry in round 0)"},
          {"tau", "adaptive: the smallest residuals over the whole budget for 8·d² slabs (rounds ≥ 1; a pilot's quantile in round 0)"},
          {"duplicates", "identical slabs dropped (every round)"},
          {"stage 3 margin", "adaptive: the top accept_fraction of a pilot's margins"},
          {"rounds", "3 ⇄ 4 while the estimates improve, then a final stage-4 round with final_sculpt_samples; the best by validation"},
          {"stage 6", "the exhaustive net, then pattern-search refinement"}};
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

namespace {

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
  // Under MPI (o.net.processes) every rank follows rank 0's clock, so all run the same rounds.
  if (first_process_value(p.o.net.processes, p.o.max_seconds > 0 && run.elapsed() > p.o.max_seconds)) {
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

void step_span(Run& run) {
  LearnRound& cur = *run.s.current;
  cur.span = run_span(run.p, run.s.round, *cur.sculpt);
  run.s.next = LearnStep::net;
}

// Stage 6, then the selection: the round is kept when its layer validates
// better. Rounds alternate while the estimates improve: this round's layer
// (validation) or the last stage-3 W_Σ (its standard error fell by a third or
// more) — when the hull is still crude, W_Σ can keep improving before the layer does.
void step_net(Run& run) {
  Pipeline& p = run.p;
  LearnState& s = run.s;
  const int round = s.round;
  if (!run_net(p, round, *s.current, run.validation)) return run.end_rounds();
  const bool layer_improved = !s.best || s.current->validation_error < p.rep.round_validation_error[p.rep.best_round];
  // The paper variant returns its stage-4 layer; the extended one the best by validation.
  if (layer_improved || p.o.variant == LearnVariant::paper) {
    p.rep.best_round = round;
    s.best = *s.current;
  }
  if (s.final_round) {
    // Another final round: stage 3 first, with this round's heads as proxies when its layer fits.
    if (++s.final_rounds_done < p.o.final_rounds) {
      s.next = LearnStep::margin;
      return;
    }
    return run.end_rounds();
  }
  if (p.o.variant == LearnVariant::extended && !layer_improved && !s.last_w_improved) {
    p.rep.message = format("stopped after round %d: neither the layer nor W_sum improved", round);
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
  s.last_w_improved = s3.report.relative_standard_error < s.last_w_standard_error / 1.5;
  s.last_w_standard_error = s3.report.relative_standard_error;
  if (s3.report.relative_standard_error < s.final_w_standard_error) {
    s.final_w_sum = s.w_sum;
    s.final_w_error = s.w_error_assumed;
    s.final_w_standard_error = s3.report.relative_standard_error;
  }
  s.current.reset();
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
  // The reference paths check the body the selected layer came from: none under
  // the hull oracle, and an unused one under the stage-6 oracle.
  if (best.sculpt && !p.o.oracle.stage6) run_reference_paths(p, *best.sculpt);
  if (p.truth_instance) {
    const Instance& truth = *p.truth_instance;
    p.rep.errors_coarse_net = compare_layers(best.net.coarse_layer, truth, p.o.test_seed, p.o.test_samples, p.o.threads);
    p.rep.errors_before_polish = compare_layers(best.net.layer, truth, p.o.test_seed, p.o.test_samples, p.o.threads);
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
  const PolishReport polish = run_polish(p, run.full_source, first, run.s.best->net.layer, polished);
  run_final_fit(p, run.full_source, run.finite, run.finite ? static_cast<uint64_t>(p.rep.samples_paper) : p.offset,
                polish, polished);
  run.s.layer = std::move(polished.layer);
  run.s.next = LearnStep::finish;
}

void step_finish(Run& run) {
  Pipeline& p = run.p;
  if (!p.o.polish)
    p.rep.noise = unpolished_noise(p.rep.round_validation_error[p.rep.best_round], p.rep.validation_samples,
                                   p.o.float32_labels, p.o.label_noise);
  if (p.truth_instance)
    p.rep.errors = compare_layers(run.s.layer, *p.truth_instance, p.o.test_seed, p.o.test_samples, p.o.threads);
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
  json choices = json::object();
  for (const auto& [name, value] : variant_choices(r.variant)) choices[name] = value;
  json out = {{"variant", to_string(r.variant)}, {"variant_choices", choices}, {"stages", stages}, {"round_validation_error", r.round_validation_error}, {"best_round", r.best_round},
              {"samples_paper_stages", r.samples_paper}, {"samples_polish", r.samples_polish},
              {"samples_total", r.samples_total}, {"validation_samples", r.validation_samples}, {"seconds", r.seconds}, {"ok", r.ok}, {"message", r.message}};
  if (r.noise) out["noise"] = to_json(*r.noise);
  if (r.samples_final_fit > 0) out["samples_final_fit"] = r.samples_final_fit;
  if (r.errors_before_final_fit) out["errors_before_final_fit"] = errors_json(*r.errors_before_final_fit);
  if (r.errors_coarse_net) out["errors_coarse_net"] = errors_json(*r.errors_coarse_net);
  if (r.errors_before_polish) out["errors_before_polish"] = errors_json(*r.errors_before_polish);
  if (r.errors) out["errors"] = errors_json(*r.errors);
  // Only when they apply: an uninterrupted run's report keeps its earlier keys.
  if (r.interrupted) {
    out["interrupted"] = true;
    out["safe_point"] = r.safe_point;
  }
  if (!r.resumed_at.empty()) out["resumed_at"] = r.resumed_at;
  return out;
}

std::string format_table(const LearnReport& r) {
  std::ostringstream out;
  out << format("variant: %s\n", to_string(r.variant));
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
