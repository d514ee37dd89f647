#include "learn/steps.hpp"

#include "learn/reference_checks.hpp"
#include "stages/polish/record.hpp"
#include "stages/stage1/record.hpp"
#include "stages/stage3/proxy.hpp"
#include "stages/stage3/record.hpp"
#include "stages/stage4/record.hpp"
#include "stages/stage5/record.hpp"
#include "stages/stage6/record.hpp"
#include "numeric/tolerance.hpp"
#include "util/format.hpp"


#include <algorithm>
#include <cmath>

namespace mha {

namespace {

MatD true_w_sum(const Pipeline& p) { return p.truth->w_sum(); }

// Round 0's Ŵ is crude (the W-sum bias, ~10–20%), which makes the lemma's
// widths vacuous (δ ≥ v̂); its slabs are kept with an optimistic σ_min so that
// they act as weighted estimates for the least-squares centre — the planning
// prototype's use — and the report marks them heuristic. From round 1 (or in
// round 0 with an exact W_Σ from the stage-1 oracle) the widths rest on the
// stated assumptions σ_min(C) ≥ default_sigma_min and ‖W_Σ − Ŵ‖_op ≤ w_error.
bool crude_widths(const Pipeline& p, int round) { return round == 0 && !p.o.oracle.stage1; }

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
  if (rs.pilot_samples > 0 && rs.pilot_eligible_rows == 0) {
    // No row of the pilot was certifiable at any τ: the same rows come with any budget.
    const double rows = std::max(1.0, double(rs.sculpt.report.rows_examined));
    return format("round %d certified no row: none of the rows of its %lld-sample pilot could be certified at any tau "
                  "(of the %lld rows examined after it, %.0f%% have two equal tokens and %.0f%% a rank-deficient "
                  "B = X·W_sum), so no sample budget would help",
                  round, (long long)rs.pilot_samples, (long long)rs.sculpt.report.rows_examined,
                  100.0 * double(v[static_cast<int>(RowVerdict::duplicate_tokens)]) / rows,
                  100.0 * double(rank_deficient) / rows);
  }
  return format("round %d certified no row (tau %.2e) within its budget of %lld samples; raise the sculpt budget "
                "(--sculpt-samples, --crude-sculpt-samples for round 0)", round, rs.tau,
                (long long)rs.sculpt.report.samples);
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

// Stage 3's proxies in the extended variant: the net's heads once the round's layer
// fits (relative validation error below this), so that an event needs every
// estimated head large-margin on one token (measured at (16,2,3): 1.5% of events
// with a true head not large-margin against 48% with the centre;
// docs/variants.md). A layer that does not fit (round 0's crude body) says
// nothing about the heads' margins.
constexpr double kHeadsAsProxiesFit = 1e-2;

// The margin-stability lemma: with both margins ≥ M, each softmax is within
// 2(k−1)e^{−M} of the same one-hot vector in ℓ1 (proofs/margin_stability.md), so
// M = ln(2(k−1)/target) bounds an event's pattern error by the target.
double paper_margin_threshold(const LearnOptions& o, int k) { return std::log(2.0 * (k - 1) / o.paper_margin_target); }

}  // namespace

int64_t final_sculpt_budget(const LearnOptions& o) {
  if (o.final_sculpt_samples != 0) return o.final_sculpt_samples;
  // m = 3: the body's error falls ∝ 1/√S, so 8× the samples buy ~2.8× (1e−3 at
  // (16,2,3)); m ≥ 4 (∝ S^{−1/3} or slower) gains too little for the time.
  return o.m == 3 ? 256000000 : 32000000;
}

// ---- Stage 1 -----------------------------------------------------------------

// The samples each process drew in a sample loop the processes share.
static void count_shared_samples(Pipeline& p, const std::vector<int64_t>& mine) {
  std::vector<int64_t>& all = p.rep.shared_samples_by_process;
  all.resize(std::max(all.size(), mine.size()), 0);
  for (size_t r = 0; r < mine.size(); ++r) all[r] += mine[r];
}

MatD run_stage1(Pipeline& p) {
  if (p.o.oracle.stage1) {
    p.record(oracle_record("1", -1, "W_sum = Σ W_i from the truth"));
    return true_w_sum(p);
  }
  Stage1Options s1o;
  s1o.samples = p.o.stage1_samples;
  s1o.threads = p.o.threads;
  s1o.processes = p.o.processes;
  s1o.first_sample = p.offset;
  const Stage1Result s1 = p.o.fast.stage1(p.source, s1o);
  count_shared_samples(p, s1.samples_by_process);
  check_stage1_run(p, p.offset, s1.samples);
  p.offset += s1.samples;
  p.record(stage1_record(s1, p.truth));
  return s1.w_hat;
}

// ---- Stages 2 and 4 ------------------------------------------------------------

SculptResult run_sculpt(Pipeline& p, int round, const MatD& w_sum, double w_error, int final_index) {
  const bool crude = crude_widths(p, round);
  ResculptOptions ro = sculpt_round_options(p.o, crude ? 0 : std::max(round, 1), p.d, p.k, w_error);
  if (final_index >= 0) ro.sculpt.max_samples = final_sculpt_budget(p.o) << final_index;
  if (ro.fixed_tau) ro.sculpt.certify.tau = paper_tau(p.o, w_sum, w_error);
  ro.sculpt.first_sample = p.offset;
  ResculptResult rs = resculpt(p.source, w_sum, p.m, ro, p.truth);
  count_shared_samples(p, rs.sculpt.report.samples_by_process);
  bool heuristic_widths = crude;
  double retry_seconds = 0, retry_loop_seconds = 0;  // the attempt the fallback below discards
  if (!crude && lemma_widths_too_few(p, rs)) {
    // Under the stated assumptions every row's width is vacuous (δ ≥ v̂): the
    // refined W_Σ is not yet accurate enough. Fall back to round 0's heuristic
    // widths rather than certify nothing; the report says so. (Without a pilot
    // the same samples are read again: they gave nothing.)
    p.offset += rs.pilot_samples;
    ro.sculpt.first_sample = p.offset;
    ro.sculpt.certify.sigma_min = p.o.crude_sigma_min;
    ro.sculpt.certify.w_error = 0;
    retry_seconds = rs.sculpt.report.seconds;
    retry_loop_seconds = rs.sculpt.report.loop_seconds;
    rs = resculpt(p.source, w_sum, p.m, ro, p.truth);
    count_shared_samples(p, rs.sculpt.report.samples_by_process);
    heuristic_widths = true;
  }
  check_sculpt_run(p, round, w_sum, ro, rs);
  p.offset += rs.pilot_samples + rs.sculpt.report.samples;
  StageRecord record = sculpt_record(rs, ro, round, heuristic_widths);
  if (retry_seconds > 0) {  // the stage's time includes the discarded attempt's
    record.seconds += retry_seconds;
    record.details["shared_loop_seconds"] = rs.sculpt.report.loop_seconds + retry_loop_seconds;
    record.details["discarded_attempt_seconds"] = retry_seconds;
  }
  p.record(std::move(record));
  if (rs.sculpt.body.size() == 0) p.rep.message = empty_body_message(p, rs, round);
  return std::move(rs.sculpt);
}

// ---- Stage 5 -------------------------------------------------------------------

// The paper variant's stage 5: the span from membership queries to K (stages/stage5/
// span_membership.hpp) around K's minimum-norm point; its hull point and directions are
// what the round keeps (stage 6 nets their span). An empty hull point: no span (the
// report's message says why).
SpanResult membership_span(Pipeline& p, int round, const SculptResult& sculpt) {
  const ActiveSetResult base = p.o.fast.min_norm(sculpt.body);
  const MembershipSpan ms = p.o.fast.span_membership(sculpt.body, p.m, base, p.o.membership);
  StageRecord r{"5", round, 0, ms.seconds, "", {}};
  r.details = {{"method", "membership queries (cutting planes through the separation oracle)"},
               {"directions", ms.optima.size()}, {"oracle_queries", ms.oracle_queries}, {"gap", ms.gap}};
  SpanResult span;
  span.seconds = ms.seconds;
  if (!ms.ok()) {
    r.summary = ms.failure;
    p.record(std::move(r));
    p.rep.message = format("round %d: %s", round, ms.failure.c_str());
    return span;
  }
  std::vector<double> singular(ms.singular_values.data(), ms.singular_values.data() + ms.singular_values.size());
  r.details["singular_values"] = singular;
  r.details["base_point_norm"] = ms.base_point.norm();
  span.hull_point = ms.hull_point;
  span.hull_directions = ms.hull_directions;
  span.span_basis = ms.span_basis;
  span.gap = ms.gap;
  span.dimension_fast = ms.gap >= SpanOptions{}.min_gap ? p.m - 1 : 0;
  span.message = ms.message;
  r.summary = format("span of dimension %d from %lld membership queries along %d directions (gap %.2e)",
                     int(ms.span_basis.rows()), (long long)ms.oracle_queries, int(ms.optima.size()), ms.gap);
  if (p.truth) {
    // How far the heads lie from the hull and from the span read off (relative to ‖Θ_i‖).
    double hull_error = 0, span_error = 0;
    for (const auto& h : p.truth->heads) {
      const Eigen::Map<const Eigen::VectorXd> t(h.theta.data(), h.theta.size());
      const Eigen::VectorXd from_hull = t - ms.hull_point;
      const Eigen::VectorXd across = from_hull - ms.hull_directions.transpose() * (ms.hull_directions * from_hull);
      const Eigen::VectorXd off_span = t - ms.span_basis.transpose() * (ms.span_basis * t);
      hull_error = std::max(hull_error, across.norm() / t.norm());
      span_error = std::max(span_error, off_span.norm() / t.norm());
    }
    r.details["hull_error"] = hull_error;
    r.details["span_error"] = span_error;
    r.summary += format("; hull error %.2e, span error %.2e", hull_error, span_error);
  }
  p.record(std::move(r));
  return span;
}

SpanResult run_span(Pipeline& p, int round, const SculptResult& sculpt) {
  if (p.o.variant == LearnVariant::paper) return membership_span(p, round, sculpt);
  SpanResult span = p.o.fast.span(sculpt.body, sculpt.centre, p.m, SpanOptions{});
  p.record(span_record(span, round));
  return span;
}

// The true affine hull aff{Θ_i}: its minimum-norm point and orthonormal
// directions (the hull oracle, in place of stages 2, 4 and 5).
SpanResult true_hull(const Pipeline& p) {
  const int64_t n = int64_t{p.d} * p.d;
  const Eigen::Map<const Eigen::VectorXd> first(p.truth->heads[0].theta.data(), n);
  SpanResult span;
  span.dimension_fast = p.m - 1;
  span.hull_directions = head_hull_directions(*p.truth);
  span.hull_point = first - span.hull_directions.transpose() * (span.hull_directions * first);
  return span;
}

// ---- Stage 6 -------------------------------------------------------------------

// The ball stage 6 searches, ‖Θ‖_F ≤ R. The heads are x0 + Σ t_i v_i, so
// ‖Θ_i‖² = ‖x0‖² + ‖t‖² ≥ ‖x0‖²: a hull point beyond R/2 says the heads may lie
// outside the ball (at logit scale 24 every head did, with R = 20: docs/diagnosis.md).
// The extended variant then grows the ball to 2‖x0‖, which holds every head with
// ‖t‖ ≤ √3‖x0‖, from round 1 on (round 0's body is crude: its hull point says little
// about the heads); the paper's R is its a priori bound on the heads and stays.
double net_radius(const LearnOptions& o, int round, const Eigen::VectorXd& hull_point) {
  const double r = o.sculpt.sculpt.radius;
  return o.variant == LearnVariant::paper || round == 0 ? r : std::max(r, 2 * hull_point.norm());
}

NetDomain net_domain(const LearnOptions& o, const SpanResult& span) {
  if (o.variant != LearnVariant::paper) return {span.hull_point, span.hull_directions};
  const Eigen::Index n = span.hull_point.size(), free = span.hull_directions.rows();
  const double norm = span.hull_point.norm();
  NetDomain out{Eigen::VectorXd::Zero(n), Eigen::MatrixXd(free + (norm > 0 ? 1 : 0), n)};
  if (norm > 0) out.directions.row(0) = (span.hull_point / norm).transpose();
  out.directions.bottomRows(free) = span.hull_directions;
  return out;
}

bool run_net(Pipeline& p, int round, LearnRound& cur, const LabelledBatch& validation) {
  if (p.o.oracle.stage6) {
    cur.net.layer = cur.net.coarse_layer = *p.truth;
    cur.validation_error = relative_error(cur.net.layer, validation, p.o.threads, p.o.processes);
    p.rep.round_validation_error.push_back(cur.validation_error);
    p.record(oracle_record("6", round, "the true layer"));
    return true;
  }
  NetOptions no = p.o.net;
  if (p.o.variant == LearnVariant::paper) no.max_refine_iterations = 0;  // the exhaustive net alone
  no.threads = p.o.threads;
  no.processes = p.o.processes;
  no.radius = net_radius(p.o, round, cur.span.hull_point);
  no.first_sample = p.offset;
  if (p.o.variant == LearnVariant::paper) {
    // The sources' net: over span{Θ_i} (m axes about 0), not the (m − 1)-dimensional hull.
    const NetDomain span = net_domain(p.o, cur.span);
    cur.net = search_net(p.source, span.point, span.directions, p.m, no);
  } else {
    cur.net = search_net(p.source, cur.span.hull_point, cur.span.hull_directions, p.m, no);
  }
  if (!cur.net.ok()) {
    p.rep.message = format("round %d: %s", round, cur.net.failure.c_str());
    return false;
  }
  p.offset += cur.net.report.samples;
  cur.validation_error = relative_error(cur.net.layer, validation, p.o.threads, p.o.processes);
  p.rep.round_validation_error.push_back(cur.validation_error);
  std::optional<ParameterErrors> errors;
  if (p.truth_instance) {
    const LayerErrors e =
        compare_layers(cur.net.layer, *p.truth_instance, p.o.test_seed, 0, p.o.threads, p.o.processes);
    errors = ParameterErrors{e.theta_max_rel, e.w_max_rel};
  }
  StageRecord record = net_record(cur.net, cur.validation_error, round, errors ? &*errors : nullptr);
  if (p.o.variant == LearnVariant::paper) {
    record.details["net_over"] = "the span";
    record.summary += "; net over the span";
  }
  if (no.radius != p.o.sculpt.sculpt.radius) {
    record.details["radius"] = no.radius;
    record.summary += format("; ball grown to R = %.3g (hull point at %.3g)", no.radius, cur.span.hull_point.norm());
  }
  p.record(std::move(record));
  return true;
}

// ---- Stage 3 -------------------------------------------------------------------

// The paper variant: "the minimum norm point in this convex body as a proxy" (the
// sources' stage 3), by the fast dual active-set method. Round 0's heuristic widths
// can make K empty (its slabs contradict each other; measured: every paper run of
// docs/theorem_shape/): there is no such point, and the least-squares centre x0 — the
// point of least weighted violation — stands in. The report gives the least common
// factor t* by which the widths would have to grow for the slabs to meet
// (stages/stage3/proxy.hpp): the minimum-norm point of that widened body lies near 0,
// where no proxy margin reaches M (MATH.md §3.3, docs/diagnosis.md).
MarginProxies paper_proxy(const Pipeline& p, const SculptResult& body) {
  MarginProxies out;
  const Eigen::VectorXd& x0 = body.centre.x0;
  const ActiveSetResult point = p.o.fast.min_norm(body.body);
  if (point.status == ActiveSetResult::optimal && point.inside_ball) {
    out.thetas.push_back(Eigen::Map<const MatD>(point.x.data(), p.d, p.d));
    out.centre_distance = (point.x - x0).norm() / std::max(point.x.norm(), 1e-300);
    out.body = &body.body;
    out.what = "the minimum-norm point of K";
    return out;
  }
  std::string widening;
  out.least_widening = least_consistent_factor(body.body, widening);
  out.thetas.push_back(Eigen::Map<const MatD>(x0.data(), p.d, p.d));
  out.what = "the body's least-squares centre";
  out.fallback = (point.status == ActiveSetResult::optimal
                      ? format("K has no point in the ball (its slabs' minimum-norm point has norm %.3g > R)", point.x.norm())
                      : "K is empty by the active-set method (" + point.message + ")") +
                 "; " + widening;
  return out;
}

// The paper's minimum-norm point of K, or — extended — the body's least-squares
// centre x0 until the round has a layer that fits, then the net's heads.
MarginProxies margin_proxies(const Pipeline& p, const LearnRound& round) {
  if (p.o.variant == LearnVariant::paper) return paper_proxy(p, *round.sculpt);
  MarginProxies out;
  if (round.net.layer.m() == p.m && round.validation_error < kHeadsAsProxiesFit) {
    for (const auto& h : round.net.layer.heads) out.thetas.push_back(h.theta);
    out.heads = true;
    out.what = "the net's heads";
  } else {
    out.thetas.push_back(Eigen::Map<const MatD>(round.sculpt->centre.x0.data(), p.d, p.d));
    out.what = "the body's centre";
  }
  return out;
}

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
  if (p.o.variant == LearnVariant::paper) {
    mo.fixed_threshold = paper_margin_threshold(p.o, p.k);
    mo.top_events = true;  // the highest threshold the budget affords, at least M (MATH.md §3.3)
  }
  if (proxies.heads) mo.accept_fraction = p.o.heads_accept_fraction;
  mo.threads = p.o.threads;
  mo.processes = p.o.processes;
  mo.first_sample = p.offset;
  if (proxies.body) check_proxy_run(p, round, *proxies.body);
  MarginResult s3 = p.o.fast.margin(p.source, proxies.thetas, mo, p.truth);
  count_shared_samples(p, s3.report.samples_by_process);
  check_margin_run(p, round, proxies.thetas, s3, mo.first_sample);
  p.offset += s3.report.pilot_samples + s3.report.samples;
  StageRecord r = margin_record(s3, round);
  r.details["proxy"] = proxies.what;
  if (proxies.heads) r.summary += "; proxies: the net's heads";
  if (p.o.variant == LearnVariant::paper) {
    r.details["lemma_margin"] = mo.fixed_threshold;
    if (std::isfinite(proxies.least_widening)) r.details["least_consistent_widening"] = proxies.least_widening;
    r.summary += format("; proxy: %s", proxies.what.c_str());
    if (std::isfinite(proxies.centre_distance)) r.details["proxy_centre_distance"] = proxies.centre_distance;
    if (!proxies.fallback.empty()) {
      r.details["proxy_fallback"] = proxies.fallback;
      r.summary += " (" + proxies.fallback + ")";
    }
  }
  p.record(std::move(r));
  return s3;
}

// ---- Polishing -------------------------------------------------------------------

namespace {

// A fit its held-out samples contradict is under-determined by its training samples
// (where the softmax saturates a sample tells Θ little: docs/bench/polish.md). It is
// polished again from the same start on this many times the samples (at most
// LearnOptions::polish_resamplings times).
constexpr int64_t kPolishResampleFactor = 4;

// The held-out residual limit (tolerance.hpp, heldout_residual_limit) when the fit
// exceeds it, or 0 when the fit generalises.
double exceeded_heldout_limit(const PolishReport& r, int k, int d) {
  const long long heldout_entries = r.samples * k * d - r.residual_entries;
  const double limit =
      tolerance::heldout_residual_limit(r.noise_train, r.rounding_level, r.residual_entries, r.parameters, heldout_entries);
  return r.noise_heldout > limit ? limit : 0;
}

}  // namespace

PolishReport run_polish(Pipeline& p, const SampleSource& full_source, uint64_t first_sample, const Layer& start,
                        LearnResult& result, bool finite) {
  PolishOptions po = p.o.polish_options;
  po.threads = p.o.threads;
  po.processes = p.o.processes;
  po.first_sample = first_sample;
  p.rep.samples_polish = 0;
  PolishReport last;
  for (int attempt = 0;; ++attempt) {
    const PolishResult pr = polish_layer(full_source, start, po);
    p.offset += pr.report.samples;
    p.rep.samples_polish += pr.report.samples;
    // Polishing is local: from a poor start it can fit the training samples
    // and generalise worse. Keep it only when validation agrees.
    const bool kept = pr.report.validation_error_after <= pr.report.validation_error_before;
    if (kept) result.layer = pr.layer;
    StageRecord r = polish_record(pr.report, !polish_uses_dense_solver(p.d, p.m, po), kept);
    const double limit = exceeded_heldout_limit(pr.report, p.k, p.d);
    const int64_t train = pr.report.residual_entries / (int64_t{p.k} * p.d);
    const int64_t more = kPolishResampleFactor * train;
    const bool again = limit > 0 && attempt < p.o.polish_resamplings && !finite;  // a dataset: its samples are counted
    if (limit > 0) {
      r.details["heldout_limit"] = limit;
      r.summary += format("; held-out residual %.2g above the %.2g its training residual allows: under-determined%s",
                          pr.report.noise_heldout, limit,
                          again ? format(", polished again on %lld samples", (long long)more).c_str() : "");
    }
    p.record(std::move(r));
    last = pr.report;
    if (!again) break;
    po.samples = more;
    po.first_sample += static_cast<uint64_t>(pr.report.samples);
  }
  return last;
}

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
          compare_layers(result.layer, *p.truth_instance, p.o.test_seed, p.o.test_samples, p.o.threads,
                         p.o.processes);
    PolishOptions fo = final_fit_options(p.o.polish_options, plan, limits.validation_samples, first, p.o.threads);
    fo.processes = p.o.processes;
    const PolishResult fit = polish_layer(full_source, result.layer, fo);
    p.rep.samples_final_fit = fit.report.samples;
    if (!finite) p.offset += fit.report.samples;
    const bool kept = fit.report.validation_error_after <= fit.report.validation_error_before;
    if (kept) {
      result.layer = fit.layer;
      last = fit.report;
      last_train = plan.samples;
    }
    p.record(final_fit_record(fit.report, plan.samples, plan.reason, kept));
  }
  p.rep.noise = assess_noise(last, last_train, p.k, p.d, p.m, p.o.float32_labels, p.o.label_noise, limits.noiseless);
  p.rep.noise->final_fit = plan;
}

}  // namespace mha
