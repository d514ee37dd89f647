// Stage 5: the span of the attention matrices (proofs/span_by_widths.md): the
// fast path (find_span), its reference comparison (check_span: the same SVD in
// MPFR) and the LP-width diagnostic (body_widths: is the body thin across the hull?).
//
// Bodies: realistic ones from stage 2 (d = 10: the hull is found; d = 8: the
// constraints span only half of R^64, so it is not), and synthetic ones whose
// slabs contain a known affine hull H exactly (a_r ⟂ H, b_r = ⟨a_r, p⟩ + ξ_r with
// |ξ_r| ≤ η/2), which make the expected answers exact.
//
// Two bounds from the proof file are checked where they apply. For every θ, θ'
// in P, each weighted residual satisfies |(Mθ − c)_r| ≤ 1, so with δ = θ − θ':
//   (thin)   the width of P along the j-th right singular vector is ≤ 2√N / s_j;
//   (angle)  for m = 2, sin ∠(x_max − x_min, hull direction) ≤ (2√N / s_1) / width.
#include "test_tolerances.hpp"
#include "geometry/exact_programs.hpp"
#include "bodies.hpp"
#include "instances.hpp"
#include "stages/stage2/sculpt.hpp"
#include "stages/stage5/check.hpp"
#include "stages/stage5/span.hpp"
#include "stages/stage5/widths.hpp"

#include <catch2/catch.hpp>

#include <Eigen/Dense>

#include <cmath>
#include <stdexcept>

using namespace mha;

namespace {

Instance small_instance(int d, int m) { return test::generated_instance(d, 2, m, 3.0, 3); }

// Stage 2 with the oracle's true W_Σ, as in test_stage2.cpp.
SculptResult sculpt(const Instance& inst, int m) {
  const SampleOracle oracle(inst, 5);
  SculptOptions o;
  o.certify.sigma_min = default_sigma_min(inst.d(), 2, m);
  o.max_samples = 4000000;
  return sculpt_body(oracle, inst.layer.w_sum(), m, o, &inst.layer);
}

std::vector<Eigen::VectorXd> true_thetas(const Instance& inst) {
  std::vector<Eigen::VectorXd> out;
  const int d = inst.d();
  for (const auto& h : inst.layer.heads) out.push_back(Eigen::Map<const Eigen::VectorXd>(h.theta.data(), d * d));
  return out;
}

// max_i ‖Θ_i − proj_span(Θ_i)‖ / ‖Θ_i‖.
double span_residual(const Eigen::MatrixXd& basis, const std::vector<Eigen::VectorXd>& thetas) {
  double worst = 0;
  for (const auto& th : thetas)
    worst = std::max(worst, (th - basis.transpose() * (basis * th)).norm() / th.norm());
  return worst;
}

bool orthonormal_rows(const Eigen::MatrixXd& rows) {
  const Eigen::Index k = rows.rows();
  return (rows * rows.transpose() - Eigen::MatrixXd::Identity(k, k)).norm() < 1e-12;
}

// The (thin) bound: candidate widths beyond the free ones are ≤ 2√N/s_j (+ the LP error).
void check_thin_bound(const ConvexBody::Centre& centre, const BodyWidths& w, int m, size_t slabs) {
  const double root_n = std::sqrt(static_cast<double>(slabs));
  for (size_t c = m - 1; c < w.candidate_widths.size(); ++c) {
    const double bound = 2 * root_n / centre.singular_values(static_cast<Eigen::Index>(c));
    INFO("candidate " << c << ": width " << w.candidate_widths[c] << ", bound 2√N/s_j " << bound);
    CHECK(w.candidate_widths[c] <= bound * (1 + 1e-9) + w.width_error_bounds[c]);
  }
}

}  // namespace

TEST_CASE("stage-2 body at d = 10, m = 2: the span, its MPFR reference and the widths agree on the hull", "[stage5]") {
  const Instance inst = small_instance(10, 2);
  const SculptResult s = sculpt(inst, 2);
  REQUIRE(s.report.truth.has_value());
  for (double v : s.report.truth->theta_violation) REQUIRE(v == 0.0);  // the lower bound below needs Θ_i ∈ K
  const SpanResult r = find_span(s.body, s.centre, 2, SpanOptions{});
  INFO(r.message);
  CHECK(r.message.empty());
  CHECK(r.dimension_fast == 1);
  CHECK(orthonormal_rows(r.span_basis));
  CHECK(r.span_basis.rows() == 2);
  // The reference: every part compared and agreeing, at the first rung.
  const Comparison c = check_span(s.body, r, 2, SpanOptions{});
  INFO(c.detail);
  CHECK_FALSE(disagrees(c));
  CHECK(c.precision == 128u);
  CHECK(c.undecided == 0);
  REQUIRE(c.parts.size() == 3);
  for (const ComparisonPart& part : c.parts) CHECK(part.compared == 1);

  const BodyWidths w = body_widths(s.body, s.centre, 2, WidthsOptions{});
  INFO(w.message);
  CHECK(w.thin);
  CHECK(w.dimension == 1);
  REQUIRE(w.candidate_widths.size() == 3);  // 1 free + m = 2 constrained
  for (bool certified : w.width_certified) CHECK(certified);
  // Wide: Θ_1, Θ_2 ∈ K, so the width along the hull direction u is ≥ |⟨u, Θ_1 − Θ_2⟩|.
  const auto thetas = true_thetas(inst);
  const Eigen::VectorXd u = r.hull_directions.row(0).transpose();
  CHECK(w.candidate_widths[0] + w.width_error_bounds[0] >= std::abs(u.dot(thetas[0] - thetas[1])));
  CHECK(w.candidate_widths[0] >= w.wide_width);
  check_thin_bound(s.centre, w, 2, s.body.size());

  // (angle): measured 1.6e-3 rad against the bound's 8.5e-3 and max_angle 0.05.
  const double thin = 2 * std::sqrt(static_cast<double>(s.body.size())) / s.centre.singular_values(1);
  CHECK(w.angle <= std::asin(std::min(1.0, thin / w.candidate_widths[0])) * (1 + 1e-6) + 1e-12);
  CHECK(w.angle <= tolerance::span_angle_target());

  // The span holds the true heads up to the hull's error (stage 2 measures ~1e-3 here).
  CHECK(span_residual(r.span_basis, thetas) < tolerance::sculpt_hull_error_target());
  CHECK(span_residual(r.span_basis, thetas) <= s.report.truth->hull_error * (1 + 1e-9) + 1e-12);
}

TEST_CASE("stage-2 body at d = 8: constraints spanning half of R^64 — not thin (a diagnostic), yet both paths agree", "[stage5]") {
  // docs/stages12.md: at d = 8 the certified constraints span only ~32 of 64
  // directions, so K is wide in many directions besides the hull's. That is a
  // statistical outcome (the body), not a disagreement of the two computations.
  const Instance inst = small_instance(8, 2);
  const SculptResult s = sculpt(inst, 2);
  const SpanResult r = find_span(s.body, s.centre, 2, SpanOptions{});
  CHECK(r.dimension_fast != 1);  // no clear gap among the (zero) smallest singular values
  CHECK_FALSE(r.message.empty());
  const BodyWidths w = body_widths(s.body, s.centre, 2, WidthsOptions{});
  CHECK_FALSE(w.thin);
  CHECK(w.dimension > 1);  // the "constrained" candidates are wide too
  const Comparison c = check_span(s.body, r, 2, SpanOptions{});
  INFO(c.detail);
  CHECK_FALSE(disagrees(c));
  CHECK(c.compared > 0);
}

TEST_CASE("synthetic hull of m = 3 points: the plane found, the reference agrees, the span holds the points", "[stage5]") {
  const int m = 3;
  const double eta = 0.01;
  const test::SyntheticBody b = test::synthetic_body(10, m, 200, eta, 0, 11);
  const ConvexBody::Centre centre = b.body.least_squares_centre(m - 1);
  const SpanResult r = find_span(b.body, centre, m, SpanOptions{});
  INFO(r.message);
  CHECK(r.dimension_fast == 2);
  CHECK(orthonormal_rows(r.span_basis));
  CHECK_FALSE(disagrees(check_span(b.body, r, m, SpanOptions{})));
  const BodyWidths w = body_widths(b.body, centre, m, WidthsOptions{});
  CHECK(w.thin);
  CHECK(w.dimension == 2);
  REQUIRE(w.candidate_widths.size() == 5);
  CHECK(w.directions.rows() == 2);
  CHECK(orthonormal_rows(w.directions));
  CHECK(w.angle <= tolerance::synthetic_span_angle_target());
  check_thin_bound(centre, w, m, b.body.size());
  // The slabs are blind to H exactly, so the free basis is H to rounding and the
  // residual comes from x0 alone. With p⊥ the point of H nearest 0, c = M p⊥ + (ξ_r/η)_r,
  // so ‖x0 − p⊥‖ = ‖M⁺(ξ_r/η)_r‖ ≤ √N·½ / s_{m−1}; and p_i − p⊥ lies in the span of H's
  // directions, so dist(p_i, span) ≤ ‖x0 − p⊥‖.
  const double x0_error = std::sqrt(200.0) / (2 * centre.singular_values(m - 1));
  double smallest_norm = INFINITY;
  for (const auto& p : b.points) smallest_norm = std::min(smallest_norm, p.norm());
  CHECK(span_residual(r.span_basis, b.points) <= x0_error / smallest_norm + 1e-12);
  CHECK(span_residual(r.span_basis, b.points) < tolerance::synthetic_span_residual_target());
}

TEST_CASE("synthetic hull with one more direction no slab sees: not thin, and the reference finds the same 2 free directions", "[stage5]") {
  // True free dimension 2 for m = 2: the fast gap sits at j = 2, and the first
  // "constrained" candidate is the unseen direction, whose width is set by the box.
  const test::SyntheticBody b = test::synthetic_body(10, 2, 200, 0.01, 1, 12);
  const ConvexBody::Centre centre = b.body.least_squares_centre(1);
  const SpanResult r = find_span(b.body, centre, 2, SpanOptions{});
  INFO(r.message);
  CHECK(r.dimension_fast == 2);
  const Comparison c = check_span(b.body, r, 2, SpanOptions{});
  CHECK_FALSE(disagrees(c));
  CHECK_THAT(c.parts[0].detail, Catch::Contains("reference 2"));  // the dimension, decided the same way
  const BodyWidths w = body_widths(b.body, centre, 2, WidthsOptions{});
  INFO(w.message);
  CHECK_FALSE(w.thin);
  CHECK(w.dimension == 2);
  REQUIRE(w.candidate_widths.size() == 3);
  CHECK(w.candidate_widths[1] >= 2.0);   // only the box bounds it: tens
  CHECK(w.candidate_widths[2] < tolerance::synthetic_thin_width_target());
  CHECK(w.message.find("expected 1") != std::string::npos);
}

TEST_CASE("m = 1: the hull is a point, nothing is wide, the span is x0's direction", "[stage5]") {
  const test::SyntheticBody b = test::synthetic_body(10, 1, 300, 0.01, 0, 13);
  const ConvexBody::Centre centre = b.body.least_squares_centre(0);
  const SpanResult r = find_span(b.body, centre, 1, SpanOptions{});
  INFO(r.message);
  CHECK(r.dimension_fast == 0);
  CHECK(r.hull_directions.rows() == 0);
  REQUIRE(r.span_basis.rows() == 1);
  CHECK_FALSE(disagrees(check_span(b.body, r, 1, SpanOptions{})));
  const BodyWidths w = body_widths(b.body, centre, 1, WidthsOptions{});
  CHECK(w.thin);
  CHECK(w.dimension == 0);
  CHECK(w.directions.rows() == 0);
  REQUIRE(w.candidate_widths.size() == 1);  // m = 1 smallest constrained direction
  CHECK(w.candidate_widths[0] < tolerance::synthetic_thin_width_target());
  check_thin_bound(centre, w, 1, b.body.size());
  CHECK(span_residual(r.span_basis, b.points) < tolerance::synthetic_span_residual_target());
}

TEST_CASE("tiny body: CLP candidate widths are within their error bounds of CGAL's exact widths", "[stage5]") {
  // n = 25, 60 slabs: the exact reference takes milliseconds per program here.
  const test::SyntheticBody b = test::synthetic_body(5, 2, 60, 0.05, 0, 14);
  const ConvexBody::Centre centre = b.body.least_squares_centre(1);
  const BodyWidths w = body_widths(b.body, centre, 2, WidthsOptions{});
  INFO(w.message);
  CHECK(w.thin);
  // Rebuild the candidates as body_widths does: the free direction, then m = 2 constrained ones.
  const Eigen::MatrixXd candidates = b.body.least_squares_centre(3).free_basis;
  REQUIRE(w.candidate_widths.size() == 3);
  for (int c = 0; c < 3; ++c) {
    const Eigen::VectorXd u = candidates.row(c).transpose();
    const ExactLpResult hi = exact_maximise(b.body, u), lo = exact_minimise(b.body, u);
    REQUIRE(hi.status == ExactStatus::optimal);
    REQUIRE(lo.status == ExactStatus::optimal);
    const Rational exact_width = hi.value - lo.value;
    INFO("candidate " << c << ": CLP " << w.candidate_widths[c] << " ± " << w.width_error_bounds[c] << ", exact "
                      << exact_width.convert_to<double>());
    CHECK(w.width_certified[c]);
    CHECK(abs(Rational(w.candidate_widths[c]) - exact_width) <= Rational(w.width_error_bounds[c]));
  }
}

TEST_CASE("find_span and body_widths: arguments that do not fit", "[stage5]") {
  const test::SyntheticBody b = test::synthetic_body(4, 2, 40, 0.01, 0, 15);
  const ConvexBody::Centre centre = b.body.least_squares_centre(1);
  const SpanResult r = find_span(b.body, centre, 2, SpanOptions{});
  CHECK(r.dimension_fast == 1);
  CHECK(r.span_basis.rows() == 2);
  CHECK(r.singular_values.size() == 16);
  CHECK_THROWS_AS(find_span(b.body, centre, 3, SpanOptions{}), std::invalid_argument);  // free basis has m−1 = 1 row
  CHECK_THROWS_AS(find_span(b.body, centre, 0, SpanOptions{}), std::invalid_argument);
  WidthsOptions o;
  o.candidates = -1;
  CHECK_THROWS_AS(body_widths(b.body, centre, 2, o), std::invalid_argument);
  CHECK_THROWS_AS(body_widths(b.body, centre, 3, WidthsOptions{}), std::invalid_argument);
}

TEST_CASE("largest_principal_angle between row spaces, on hand-computed subspaces", "[stage5][hardening]") {
  const double e1 = tolerance::principal_angle_error(1, 3), e2 = tolerance::principal_angle_error(2, 3);
  Eigen::MatrixXd a(1, 3), b(1, 3);
  a << 1, 0, 0;
  b << std::cos(0.3), std::sin(0.3), 0;
  CHECK(std::abs(largest_principal_angle(a, b) - 0.3) <= e1);
  // The same plane in two bases: every angle 0; a plane and a line in it: 0.
  Eigen::MatrixXd p(2, 3), q(2, 3);
  p << 1, 0, 0, 0, 1, 0;
  q << std::sqrt(0.5), std::sqrt(0.5), 0, -std::sqrt(0.5), std::sqrt(0.5), 0;
  CHECK(largest_principal_angle(p, q) <= e2);
  CHECK(largest_principal_angle(p, b) <= e2);
  // A plane tilted by 0.2 rad about the x axis: the largest angle is 0.2.
  Eigen::MatrixXd t(2, 3);
  t << 1, 0, 0, 0, std::cos(0.2), std::sin(0.2);
  CHECK(std::abs(largest_principal_angle(p, t) - 0.2) <= e2);
  // Orthogonal lines: π/2; an empty side: 0.
  Eigen::MatrixXd z(1, 3);
  z << 0, 0, 1;
  CHECK(std::abs(largest_principal_angle(a, z) - M_PI / 2) <= e1);
  CHECK(largest_principal_angle(Eigen::MatrixXd(0, 3), a) == 0.0);
  // The bound (1.5·10⁻⁶ here) is small enough to tell 0.3 from 0.3 ± 10⁻⁵.
  CHECK(e2 < 1e-5);
}

namespace {
// A centre with given ascending singular values for find_span's fast path
// (m = 2: one free direction e₁ of R⁴).
ConvexBody::Centre centre_with(const std::vector<double>& ascending) {
  ConvexBody::Centre c;
  c.singular_values = Eigen::Map<const Eigen::VectorXd>(ascending.data(), 4);
  c.free_basis = Eigen::MatrixXd::Zero(1, 4);
  c.free_basis(0, 0) = 1;
  c.x0 = Eigen::VectorXd::Unit(4, 1);
  return c;
}
}  // namespace

TEST_CASE("stage 5's gap test: the largest ratio s_j/s_{j−1} at, below and away from min_gap", "[stage5][hardening]") {
  const ConvexBody body(4, 10);
  SpanOptions o;
  // Ratios 10, 1.1, 12/11: the gap 10 sits at j = 1 = m − 1 and equals min_gap — accepted.
  SpanResult r = find_span(body, centre_with({1, 10, 11, 12}), 2, o);
  CHECK(r.gap == 10.0);
  CHECK(r.dimension_fast == 1);
  // One ulp less: no clear gap, 0 free directions.
  r = find_span(body, centre_with({1, std::nextafter(10.0, 0.0), 11, 12}), 2, o);
  CHECK(r.gap < 10.0);
  CHECK(r.dimension_fast == 0);
  // The largest ratio (20) at j = 2: two free directions (m − 1 = 1 expected: the
  // message says so).
  r = find_span(body, centre_with({1, 2, 40, 41}), 2, o);
  CHECK(r.gap == 20.0);
  CHECK(r.dimension_fast == 2);
  CHECK_THAT(r.message, Catch::Contains("2 free directions"));
}

TEST_CASE("stage 5's width diagnostic: a body thin across the hull, and one a little too wide", "[stage5][hardening]") {
  // n = 2, R = 1: the slab |θ₂| ≤ η leaves the hull direction e₁ free (width 2
  // in the box) and makes e₂ 2η wide; wide means ≥ R/10 = 0.1.
  auto widths_of = [](double eta) {
    ConvexBody body(2, 1.0);
    body.add(Slab{{0.0, 1.0}, 0.0, eta});
    return body_widths(body, body.least_squares_centre(1), 2, WidthsOptions{});
  };
  const BodyWidths thin = widths_of(0.04);  // width 0.08 < 0.1
  REQUIRE(thin.candidate_widths.size() == 2);
  CHECK(std::abs(thin.candidate_widths[0] - 2.0) <= thin.width_error_bounds[0]);
  CHECK(std::abs(thin.candidate_widths[1] - 0.08) <= thin.width_error_bounds[1] + tolerance::gamma(2) * 0.08);
  CHECK(thin.wide_width == 0.1);
  CHECK(thin.dimension == 1);
  CHECK(thin.thin);
  const BodyWidths wide = widths_of(0.06);  // width 0.12 ≥ 0.1: two wide directions
  CHECK(wide.dimension == 2);
  CHECK_FALSE(wide.thin);
}
