#include "learn/reference_checks.hpp"

#include "learn/reference_samples.hpp"
#include "learn/steps.hpp"
#include "stages/stage5/check.hpp"
#include "stages/stage5/span_membership_reference.hpp"
#include "stages/stage5/widths.hpp"
#include "util/format.hpp"

#include <algorithm>

namespace mha {

namespace {

// How much of each stage's input the reference re-computes: the sizes `mhalearn
// verify` uses too (learn/reference_samples.hpp).
constexpr ReferenceSamples kSamples = kReferenceSamples;
// Diagnostic thresholds (stated, not derived: they choose when a statistical
// outcome is worth a warning, never a verdict): the proxy counts as far from the
// minimum-norm point of K beyond this relative distance.
constexpr double kProxyFar = 0.1;

bool checks_on(const Pipeline& p) { return p.o.reference; }

// Stages 3 (the QP) and 5 (the MPFR SVD) grow as (d²)³: beyond the option, a row
// that says so and compares nothing.
bool large_reference_allowed(Pipeline& p, const char* stage, const std::string& quantity) {
  if (large_references_fit(p.d, p.o.reference_max_unknowns)) return true;
  Comparison c;
  c.stage = stage;
  c.quantity = quantity;
  c.detail = format("not run: d² = %d unknowns > %d (raise --reference-max-unknowns)", p.d * p.d,
                    p.o.reference_max_unknowns);
  p.check(p.rep.best_round, c);
  return false;
}

// The proxy's reference row, and its diagnostics; false when the certified QP proves K empty.
bool check_proxy(Pipeline& p, const SculptResult& body) {
  if (!large_reference_allowed(p, "3", "the minimum-norm point of K")) return true;
  Eigen::VectorXd reference;
  p.check(p.rep.best_round, check_min_norm_point(body.body, p.o.fast.min_norm, &reference));
  if (reference.size() == 0) {
    p.diagnose({"3", p.rep.best_round, "K empty",
                "the certified QP finds no point of the selected body in the ball: the paper's proxy does not exist "
                "there (the learner's proxy is the least-squares centre)",
                true});
    return false;
  }
  p.diagnose(proxy_distance_diagnostic(p.rep.best_round, body.centre.x0, reference, p.o.variant == LearnVariant::paper));
  return true;
}

// `body_nonempty`: the LP-width diagnostic needs a point of K (else the "K empty" one says it all).
void check_span_of(Pipeline& p, const SculptResult& body, bool body_nonempty) {
  if (!large_reference_allowed(p, "5", "the span of the selected body")) return;
  if (p.o.variant == LearnVariant::paper) {  // stage 5 by membership queries, as the run computed it
    const MembershipSpan ms =
        p.o.fast.span_membership(body.body, p.m, p.o.fast.min_norm(body.body), p.o.membership);
    p.check(p.rep.best_round, check_span_membership(body.body, ms, p.m));
    return;
  }
  const SpanResult span = p.o.fast.span(body.body, body.centre, p.m, SpanOptions{});
  p.check(p.rep.best_round, check_span(body.body, span, p.m, SpanOptions{}));
  if (auto gap = hull_dimension_diagnostic(p.rep.best_round, span.dimension_fast, span.gap, p.m)) p.diagnose(*gap);
  if (!body_nonempty) return;
  const BodyWidths widths = body_widths(body.body, body.centre, p.m, WidthsOptions{});
  p.diagnose({"5", p.rep.best_round, "body thin across the hull",
              format("%d of %d candidate directions wide by LP widths (m − 1 = %d), largest angle to the SVD's hull "
                     "directions %.3g rad (at most %.2g to count as thin): %s",
                     widths.dimension, int(widths.candidate_widths.size()), p.m - 1, widths.angle, WidthsOptions{}.max_angle,
                     widths.thin ? "thin" : "not thin"),
              !widths.thin});
}

}  // namespace

bool large_references_fit(int d, int64_t max_unknowns) { return int64_t{d} * d <= max_unknowns; }

Diagnostic proxy_distance_diagnostic(int round, const Eigen::VectorXd& x0, const Eigen::VectorXd& p_min, bool paper) {
  const double difference = (x0 - p_min).norm();
  const double distance = difference == 0 ? 0.0 : difference / p_min.norm();  // +∞ off P_min = 0
  return {"3", round, "proxy against the minimum-norm point of K",
          format("‖x0 − P_min‖/‖P_min‖ = %.3g for the least-squares centre x0 %s (warning above %.2g)", distance,
                 paper ? "(the paper variant's stage 5 starts from P_min)" : "the learner uses", kProxyFar),
          !paper && distance > kProxyFar};
}

std::optional<Diagnostic> hull_dimension_diagnostic(int round, int dimension_fast, double gap, int m) {
  if (dimension_fast == m - 1) return std::nullopt;
  return Diagnostic{"5", round, "hull dimension by the gap",
                    format("%d free directions by the singular-value gap (largest ratio %.3g), m − 1 = %d", dimension_fast,
                           gap, m - 1),
                    true};
}

void check_stage1_run(Pipeline& p, uint64_t first, int64_t samples) {
  if (!checks_on(p)) return;
  p.check(-1, check_stage1(p.source, nullptr, first, std::min(samples, kSamples.stage1), p.o.fast.stage1));
}

void check_sculpt_run(Pipeline& p, int round, const MatD& w_sum, const ResculptOptions& options,
                      const ResculptResult& result) {
  if (!checks_on(p) || result.sculpt.report.samples == 0) return;
  const uint64_t first = options.sculpt.first_sample + static_cast<uint64_t>(result.pilot_samples);
  CertifyOptions co = options.sculpt.certify;
  co.tau = result.sculpt.report.tau_effective;
  BodyOptions bo;
  bo.radius = options.sculpt.radius;
  const auto rows = certification_rows(p.source, w_sum, first, std::min(result.sculpt.report.samples, kSamples.certification));
  p.check(round, check_certification(round == 0 ? "2" : "4", rows, co, p.m, p.truth, bo, p.o.fast.certify, p.o.fast.slabs));
}

void check_margin_run(Pipeline& p, int round, const std::vector<MatD>& proxies, const MarginResult& result,
                      uint64_t first) {
  if (!checks_on(p)) return;
  p.check(round, check_margin(p.source, proxies, result, first, kSamples.selection));
}

void check_proxy_run(Pipeline& p, int round, const ConvexBody& body) {
  if (!checks_on(p) || !large_references_fit(p.d, p.o.reference_max_unknowns)) return;
  p.check(round, check_min_norm_point(body, p.o.fast.min_norm));
}

bool selected_body_checked(const Pipeline& p) {
  return checks_on(p) && !p.o.oracle.stage6 && large_references_fit(p.d, p.o.reference_max_unknowns);
}

void check_selected_round(Pipeline& p, const LearnRound& best) {
  if (!checks_on(p)) return;
  const Layer& layer = best.net.layer;
  p.check(p.rep.best_round, check_forward(layer, p.source.draw(0, kSamples.forward, 1).x, p.o.fast.forward));
  // The body the selected layer came from: none under the hull oracle, an unused one under the stage-6 oracle.
  if (best.sculpt && !p.o.oracle.stage6) {
    const bool nonempty = check_proxy(p, *best.sculpt);
    check_span_of(p, *best.sculpt, nonempty);
  }
  std::vector<MatD> thetas;
  for (const auto& h : layer.heads) thetas.push_back(h.theta);
  NetOptions net;
  net.train_samples = net.validation_samples = kSamples.net;
  net.max_tuples = kSamples.net_tuples;
  net.radius = p.o.sculpt.sculpt.radius;
  const NetDomain domain = net_domain(p.o, best.span);  // the hull, or the paper variant's span
  p.check(p.rep.best_round, check_stage6(p.source, thetas, 0, kSamples.least_squares, domain.point, domain.directions,
                                         net, p.o.fast.w_least_squares, p.o.fast.net));
}

void check_polish_start(Pipeline& p, const Layer& start) {
  if (!checks_on(p)) return;
  p.check(-1, check_polish(start, p.source, 0, kSamples.polish, p.o.fast.polish_iteration));
}

}  // namespace mha
