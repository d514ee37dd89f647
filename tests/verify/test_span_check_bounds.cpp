// Stage 5's check (stages/stage5/check.hpp, check_span) pinned to its formulas: on a
// synthetic body whose slabs are blind to a known plane, the row's bound on each
// singular value, the hull directions' bound and the hull point's bound are recomputed
// here from the reference (span_reference) and the named tolerances, in the order the
// header's derivation writes them, and must be the same doubles. A term dropped or a
// constant changed in any of them moves the double.
#include "bodies.hpp"
#include "numeric/tolerance.hpp"
#include "stages/stage5/check.hpp"
#include "stages/stage5/span.hpp"
#include "stages/stage5/span_reference.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

using namespace mha;
namespace tol = mha::tolerance;

namespace {
const ComparisonPart& part_named(const Comparison& c, const std::string& name) {
  for (const ComparisonPart& p : c.parts)
    if (p.name == name) return p;
  FAIL("no part " << name);
  return c.parts.front();
}
}  // namespace

TEST_CASE("stage 5's check: the values', directions' and hull point's bounds are their formulas", "[verify][stage5]") {
  const int m = 3;
  const test::SyntheticBody b = test::synthetic_body(10, m, 200, 0.01, 0, 11);
  const ConvexBody::Centre centre = b.body.least_squares_centre(m - 1);
  const SpanResult fast = find_span(b.body, centre, m, SpanOptions{});
  REQUIRE(fast.centre_method == ConvexBody::CentreMethod::dense);
  const Comparison c = check_span(b.body, fast, m, SpanOptions{});
  REQUIRE_FALSE(c.parts.empty());
  const SpanReference ref = span_reference(b.body, m - 1, c.parts.front().precision);
  const double u = tol::kDoubleUnitRoundoff;
  const long long n = b.body.dim(), rows = std::max<long long>(static_cast<long long>(b.body.size()), n);
  const Eigen::VectorXd& s = ref.singular_values;

  // ε = ε_M‖M‖_F (the dense SVD's backward error) plus the reference's own error on a
  // value, √((γ_N + γ_{16n²})‖M‖_F²) at 2^−bits and one rounding of the largest value.
  const double e_fast = tol::svd_backward_error(rows, n) * ref.frobenius;
  const double reference_value = tol::span_reference_value_error(rows, n, ref.bits, ref.frobenius);
  const double e = e_fast + (reference_value + u * s.maxCoeff());
  REQUIRE(reference_value > u * e_fast);  // the reference's term shows in the double

  // The values: |ŝ_j − s_j| ≤ ε + u|ŝ_j|; the row keeps the bound of its largest ratio.
  double worst = -1, worst_bound = 0;
  for (long long j = 0; j < n; ++j) {
    const double bound = e + u * std::abs(fast.singular_values(j));
    const double ratio = std::abs(fast.singular_values(j) - s(j)) / bound;
    if (ratio > worst) worst = ratio, worst_bound = bound;
  }
  CHECK(c.agree);
  CHECK(c.bound == worst_bound);
  // The dimension: one decision (the plane's 2 free directions, clear of every edge), agreed.
  const ComparisonPart& dimension = part_named(c, "dimension");
  CHECK(dimension.compared == 1);
  CHECK(dimension.undecided == 0);
  CHECK(dimension.agree);
  CHECK(dimension.detail == "fast 2, reference 2 (m − 1 = 2)");

  // The hull directions: Wedin's sin θ bound at the gap s_p − s_{p−1} (p = m − 1), plus
  // the reference's own angle, Davis–Kahan's (γ_n + γ_{16n²})‖M‖_F² / (s_p² − s_{p−1}²).
  const int p = m - 1;
  const double reference_angle = tol::span_reference_angle_error(n, ref.bits, ref.frobenius, s(p), s(p - 1));
  const ComparisonPart& directions = part_named(c, "hull directions");
  CHECK(directions.undecided == 0);
  CHECK(directions.bound == tol::singular_subspace_sin_bound(e, s(p) - s(p - 1), p, n) + reference_angle);

  // The hull point: the kept values above the rank threshold, their gap to the dropped
  // ones, hull_point_bound, one rounding of x0, and the reference's κ²-amplified error.
  long long kept = 0;
  for (long long j = p; j < n; ++j) kept += s(j) > ref.threshold;
  REQUIRE(kept == n - p);  // the synthetic body constrains every direction but the plane's
  const double s_kept = s(n - kept), s_drop = s(n - kept - 1);
  const double sin_kept = tol::singular_subspace_sin_bound(e, s_kept - s_drop, std::min(kept, n - kept), n);
  const double kappa = s(n - 1) / s_kept, x0_norm = ref.x0.norm();
  const double point_bound = tol::hull_point_bound(e, s(n - 1), s_kept, s_drop, sin_kept, x0_norm,
                                                   ref.weighted_residual, ref.c_norm, rows, n, kept) +
                             u * x0_norm + tol::span_reference_point_error(rows, n, ref.bits, kappa, x0_norm);
  const ComparisonPart& point = part_named(c, "hull point");
  CHECK(point.undecided == 0);
  CHECK(point.bound == point_bound);
}

TEST_CASE("stage 5's check: a streamed centre's values are bounded at its own backward error", "[verify][stage5]") {
  const int m = 3;
  const test::SyntheticBody b = test::synthetic_body(10, m, 200, 0.01, 0, 11);
  const ConvexBody::Centre centre = b.body.least_squares_centre(m - 1, ConvexBody::CentreMethod::streamed);
  const SpanResult fast = find_span(b.body, centre, m, SpanOptions{});
  REQUIRE(fast.centre_method == ConvexBody::CentreMethod::streamed);
  const Comparison c = check_span(b.body, fast, m, SpanOptions{});
  REQUIRE_FALSE(c.parts.empty());
  const SpanReference ref = span_reference(b.body, m - 1, c.parts.front().precision);
  const double u = tol::kDoubleUnitRoundoff;
  const long long n = b.body.dim(), rows = std::max<long long>(static_cast<long long>(b.body.size()), n);
  const double e_fast = tol::streamed_svd_backward_error(rows, n, m - 1, fast.free_basis_residual) * ref.frobenius;
  REQUIRE(e_fast != tol::svd_backward_error(rows, n) * ref.frobenius);  // the two methods' errors differ here
  const double e = e_fast + (tol::span_reference_value_error(rows, n, ref.bits, ref.frobenius) +
                             u * ref.singular_values.maxCoeff());
  double worst = -1, worst_bound = 0;
  for (long long j = 0; j < n; ++j) {
    const double bound = e + u * std::abs(fast.singular_values(j));
    const double ratio = std::abs(fast.singular_values(j) - ref.singular_values(j)) / bound;
    if (ratio > worst) worst = ratio, worst_bound = bound;
  }
  CHECK(c.bound == worst_bound);
}

// Two free directions for m = 2 (one the slabs never see): the m − 1 = 1 smallest value
// has no gap above it (s_1 ≈ s_0 ≈ 0), so Wedin's bound is not below 1 and the directions
// are undecided — counted, neither agreement nor disagreement.
TEST_CASE("stage 5's check: hull directions without a gap are undecided", "[verify][stage5]") {
  const test::SyntheticBody b = test::synthetic_body(10, 2, 200, 0.01, 1, 12);
  const ConvexBody::Centre centre = b.body.least_squares_centre(1);
  const SpanResult fast = find_span(b.body, centre, 2, SpanOptions{});
  const Comparison c = check_span(b.body, fast, 2, SpanOptions{});
  const ComparisonPart& directions = part_named(c, "hull directions");
  INFO(directions.detail);
  CHECK(directions.compared == 1);
  CHECK(directions.undecided == 1);
  CHECK(directions.agree);
  CHECK(directions.detail.rfind("gap s_m − s_{m−1} = ", 0) == 0);
  CHECK(std::string(verdict(directions)) == "undecided");
}
