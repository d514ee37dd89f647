// Stage 5's check (stages/stage5/check.hpp, check_span) pinned to its formulas: on a
// synthetic body whose slabs are blind to a known plane, the row's bound on each
// singular value, the hull directions' bound and the hull point's bound are recomputed
// here from the reference (span_reference) and the named tolerances, in the order the
// header's derivation writes them, and must be the same doubles. A term dropped or a
// constant changed in any of them moves the double. The iterative centre's comparison
// (its bounds from its own Ritz residuals, proofs/iterative_centre.md) is pinned the
// same way on a body of token slabs, and each of its parts is driven into disagreement
// or undecided by a fault in the fast result.
#include "bodies.hpp"
#include "centre_bodies.hpp"
#include "numeric/tolerance.hpp"
#include "stages/stage5/check.hpp"
#include "stages/stage5/span.hpp"
#include "stages/stage5/span_reference.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mha;
namespace tol = mha::tolerance;

namespace {

const double u = tol::kDoubleUnitRoundoff;

const ComparisonPart& part_named(const Comparison& c, const std::string& name) {
  for (const ComparisonPart& p : c.parts)
    if (p.name == name) return p;
  FAIL("no part " << name);
  return c.parts.front();
}

// One checked span: the fast result, its row, and the reference at the row's precision.
struct SpanCheckCase {
  ConvexBody body;
  SpanResult fast;
  Comparison row;
  SpanReference ref;
  long long n = 0, rows = 0;
};

SpanCheckCase span_check_case(ConvexBody body, int m, ConvexBody::CentreMethod method) {
  const ConvexBody::Centre centre = body.least_squares_centre(m - 1, method);
  REQUIRE(centre.method == method);
  SpanResult fast = find_span(body, centre, m, SpanOptions{});
  Comparison row = check_span(body, fast, m, SpanOptions{});
  REQUIRE_FALSE(row.parts.empty());
  SpanReference ref = span_reference(body, m - 1, row.parts.front().precision);
  const long long n = body.dim(), rows = std::max<long long>(static_cast<long long>(body.size()), n);
  return {std::move(body), std::move(fast), std::move(row), std::move(ref), n, rows};
}

// The bound the row keeps: that of its largest ratio |ŝ_j − s_j| / bound_j (the first on a tie).
template <class Bound>
double worst_value_bound(const Eigen::VectorXd& fast, const Eigen::VectorXd& reference, Bound bound_of) {
  double worst = -1, worst_bound = 0;
  for (Eigen::Index j = 0; j < fast.size(); ++j) {
    const double bound = bound_of(j);
    const double ratio = std::abs(fast(j) - reference(j)) / bound;
    if (ratio > worst) worst = ratio, worst_bound = bound;
  }
  return worst_bound;
}

}  // namespace

TEST_CASE("stage 5's check: the values', directions' and hull point's bounds are their formulas", "[verify][stage5]") {
  const int m = 3;
  const SpanCheckCase t =
      span_check_case(test::synthetic_body(10, m, 200, 0.01, 0, 11).body, m, ConvexBody::CentreMethod::dense);
  const Comparison& c = t.row;
  const SpanReference& ref = t.ref;
  const long long n = t.n, rows = t.rows;
  const Eigen::VectorXd& s = ref.singular_values;

  // ε = ε_M‖M‖_F (the dense SVD's backward error) plus the reference's own error on a
  // value, √((γ_N + γ_{16n²})‖M‖_F²) at 2^−bits and one rounding of the largest value.
  const double e_fast = tol::svd_backward_error(rows, n) * ref.frobenius;
  const double reference_value = tol::span_reference_value_error(rows, n, ref.bits, ref.frobenius);
  const double e = e_fast + (reference_value + u * s.maxCoeff());
  REQUIRE(reference_value > u * e_fast);  // the reference's term shows in the double

  // The values: |ŝ_j − s_j| ≤ ε + u|ŝ_j|; the row keeps the bound of its largest ratio.
  CHECK(c.agree);
  CHECK(c.bound == worst_value_bound(t.fast.singular_values, s,
                                     [&](Eigen::Index j) { return e + u * std::abs(t.fast.singular_values(j)); }));
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
  const SpanCheckCase t =
      span_check_case(test::synthetic_body(10, m, 200, 0.01, 0, 11).body, m, ConvexBody::CentreMethod::streamed);
  const double e_fast = tol::streamed_svd_backward_error(t.rows, t.n, m - 1, t.fast.free_basis_residual) * t.ref.frobenius;
  REQUIRE(e_fast != tol::svd_backward_error(t.rows, t.n) * t.ref.frobenius);  // the two methods' errors differ here
  const double e = e_fast + (tol::span_reference_value_error(t.rows, t.n, t.ref.bits, t.ref.frobenius) +
                             u * t.ref.singular_values.maxCoeff());
  CHECK(t.row.bound == worst_value_bound(t.fast.singular_values, t.ref.singular_values, [&](Eigen::Index j) {
    return e + u * std::abs(t.fast.singular_values(j));
  }));
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

// m = 1: the hull is a point, no directions to compare (the part counts nothing).
TEST_CASE("stage 5's check: one head has no hull directions", "[verify][stage5]") {
  const SpanCheckCase t =
      span_check_case(test::synthetic_body(10, 1, 200, 0.01, 0, 13).body, 1, ConvexBody::CentreMethod::dense);
  const ComparisonPart& directions = part_named(t.row, "hull directions");
  CHECK(directions.compared == 0);
  CHECK(directions.detail == "m = 1: no hull directions");
  CHECK(part_named(t.row, "hull point").compared == 1);
}

// A streamed centre whose backward error ρ is NaN: its ε is +∞ (streamed_svd_backward_error),
// so nothing is decided — every value, the dimension, the directions and the point undecided,
// each through its own branch (named in its detail), none agreeing or disagreeing.
TEST_CASE("stage 5's check: a NaN backward error decides nothing", "[verify][stage5]") {
  const int m = 3;
  SpanCheckCase t =
      span_check_case(test::synthetic_body(10, m, 200, 0.01, 0, 11).body, m, ConvexBody::CentreMethod::streamed);
  t.fast.free_basis_residual = std::numeric_limits<double>::quiet_NaN();
  const Comparison c = check_span(t.body, t.fast, m, SpanOptions{});
  INFO(format_table({c}));
  CHECK(std::string(verdict(c)) == "undecided");
  CHECK(c.compared == t.n);                  // the row's own items: every value,
  CHECK(c.undecided == c.compared + 3);      // each undecided, and the three parts' (add_part counts them in)
  const ComparisonPart& dimension = part_named(c, "dimension");
  CHECK(dimension.compared == 1);
  CHECK(dimension.undecided == 1);
  CHECK(dimension.detail.rfind("a ratio of the reference's values is within its band", 0) == 0);
  const ComparisonPart& directions = part_named(c, "hull directions");
  CHECK(directions.undecided == 1);
  CHECK(directions.detail.rfind("gap s_m − s_{m−1} = ", 0) == 0);
  const ComparisonPart& point = part_named(c, "hull point");
  CHECK(point.undecided == 1);
}

// Wedin's bound between 1 and 10 (a streamed ρ chosen for it): sin θ ≤ 1 always, so a bound
// ≥ 1 says nothing — undecided, not "agree" — however far below 10 it is.
TEST_CASE("stage 5's check: a directions bound between 1 and 10 is undecided", "[verify][stage5]") {
  const int m = 3, p = m - 1;
  SpanCheckCase t =
      span_check_case(test::synthetic_body(10, m, 200, 0.01, 0, 11).body, m, ConvexBody::CentreMethod::streamed);
  const Eigen::VectorXd& s = t.ref.singular_values;
  const auto bound_at = [&](double rho) {
    const double e = tol::streamed_svd_backward_error(t.rows, t.n, p, rho) * t.ref.frobenius +
                     (tol::span_reference_value_error(t.rows, t.n, t.ref.bits, t.ref.frobenius) + u * s.maxCoeff());
    return tol::singular_subspace_sin_bound(e, s(p) - s(p - 1), p, t.n) +
           tol::span_reference_angle_error(t.n, t.ref.bits, t.ref.frobenius, s(p), s(p - 1));
  };
  // Bisect log ρ for a bound in [2, 5] (the bound rises with ρ, to +∞ at ε = gap).
  double lo = -40, hi = 0;
  for (int step = 0; step < 200 && !(bound_at(std::exp(lo)) >= 2 && bound_at(std::exp(lo)) <= 5); ++step) {
    const double mid = 0.5 * (lo + hi), b = bound_at(std::exp(mid));
    (b < 2 ? lo : hi) = mid;
    if (b >= 2 && b <= 5) lo = mid;
  }
  const double rho = std::exp(lo);
  REQUIRE(bound_at(rho) >= 2);
  REQUIRE(bound_at(rho) <= 5);
  t.fast.free_basis_residual = rho;
  const Comparison c = check_span(t.body, t.fast, m, SpanOptions{});
  const ComparisonPart& directions = part_named(c, "hull directions");
  INFO(directions.detail);
  CHECK(directions.compared == 1);
  CHECK(directions.undecided == 1);
  CHECK(directions.detail.rfind("gap s_m − s_{m−1} = ", 0) == 0);
}

// ---- The iterative centre: k = min(n, 2m + 1) smallest values, each with its Ritz residual.

namespace {

// A token body as tests/geometry/test_centre_iterative.cpp's, smaller (the MPFR
// reference runs once per fault): d = 8 (n = 64), m = 2, 256 slabs x_a ⊗ (x_j − x_a)
// around the hull of two heads. Made once, read by every section.
constexpr int kIterativeD = 8;
const SpanCheckCase& iterative_case() {
  static const SpanCheckCase c = span_check_case(
      test::token_hull_body(kIterativeD, 2, 4 * kIterativeD * kIterativeD, 0.05, 1e-3, 5).body, 2,
      ConvexBody::CentreMethod::iterative);
  return c;
}

// |ŝ_j − s_j| ≤ min(e/ŝ_j, √e) for |λ̂_j − λ_j| ≤ e (check.cpp's value_error).
double value_error(double e, double s_hat) { return s_hat > 0 ? std::min(e / s_hat, std::sqrt(e)) : std::sqrt(e); }

}  // namespace

TEST_CASE("stage 5's check: the iterative centre's values', directions' and hull point's bounds are their formulas",
          "[verify][stage5]") {
  const int m = 2, p = m - 1;
  const SpanCheckCase& t = iterative_case();
  const SpanReference& ref = t.ref;
  const Eigen::VectorXd& s = ref.singular_values;
  const Eigen::VectorXd& s_hat = t.fast.singular_values;
  const long long n = t.n, rows = t.rows, k = s_hat.size();
  REQUIRE(k == 2 * m + 1);
  const int d = t.body.side();
  INFO(format_table({t.row}));
  CHECK_FALSE(disagrees(t.row));

  // Each value: the Ritz residual bound of its block (the free block's for j < m − 1,
  // the other values' beyond), through value_error, plus the reference's own error.
  const double reference_value =
      tol::span_reference_value_error(rows, n, ref.bits, ref.frobenius) + u * s.maxCoeff();
  const double residual =
      tol::iterative_eigen_residual_bound(t.fast.free_basis_residual, rows, d, n, k, ref.frobenius);
  const double value_residual = tol::iterative_eigen_residual_bound(t.fast.value_residual, rows, d, n, k, ref.frobenius);
  REQUIRE(residual != value_residual);  // the two blocks' residuals differ, so swapping them shows
  const auto value_bound = [&](Eigen::Index j) {
    return value_error(j < m - 1 ? residual : value_residual, s_hat(j)) + reference_value + u * std::abs(s_hat(j));
  };
  CHECK(t.row.compared == k);
  CHECK(t.row.bound == worst_value_bound(s_hat, s.head(k), value_bound));

  // The dimension is decided with the window's largest value error as its ε.
  const ComparisonPart& dimension = part_named(t.row, "dimension");
  CHECK(dimension.undecided == 0);
  CHECK(dimension.detail == "fast 1, reference 1 (m − 1 = 1)");

  // The directions: Davis–Kahan with the residual over λ_p − λ̂_{p−1} (λ_p less the
  // reference's own error, each side rounded), the orthonormality term √p·γ_{16nk}, the
  // reference's angle, times the evaluation factor of eight operations.
  const double reference_lambda_error = 2 * s(p) * reference_value + reference_value * reference_value;
  const double separation =
      (s(p) * s(p) - reference_lambda_error) * (1 - 2 * u) - s_hat(p - 1) * s_hat(p - 1) * (1 + 2 * u);
  REQUIRE(separation > 0);
  const double directions_bound =
      (residual / separation + std::sqrt(double(p)) * tol::gamma(16 * n * k) +
       tol::span_reference_angle_error(n, ref.bits, ref.frobenius, s(p), s(p - 1))) *
      tol::bound_evaluation_factor(8);
  const ComparisonPart& directions = part_named(t.row, "hull directions");
  CHECK(directions.undecided == 0);
  CHECK(directions.bound == directions_bound);

  // The hull point: hull_point_bound at the point's backward error, every value from p on
  // kept, the directions' bound as the kept subspace's angle.
  const double point_error =
      tol::iterative_point_backward_error(t.fast.free_basis_residual, rows, d, n, ref.frobenius, ref.c_norm,
                                          t.fast.hull_point.norm(), ref.weighted_residual);
  const double x0_norm = ref.x0.norm();
  const double point_bound =
      tol::hull_point_bound(point_error, s(n - 1), s(p), s(p - 1), directions_bound, x0_norm, ref.weighted_residual,
                            ref.c_norm, rows, n, n - p) +
      u * x0_norm + tol::span_reference_point_error(rows, n, ref.bits, s(n - 1) / s(p), x0_norm);
  const ComparisonPart& point = part_named(t.row, "hull point");
  CHECK(point.undecided == 0);
  CHECK(point.bound == point_bound);
}

// Faults in the fast result, each past its own bound (the bounds above are far below the
// faults' sizes), drive each part of the iterative comparison into its other branches.
TEST_CASE("stage 5's check: faults in an iterative centre's result disagree or are undecided, part by part",
          "[verify][stage5]") {
  const int m = 2;
  const SpanCheckCase& t = iterative_case();
  const auto check = [&](const SpanResult& fast) { return check_span(t.body, fast, m, SpanOptions{}); };

  SECTION("the free value off by 1e-6 of the largest: the row disagrees") {
    SpanResult fast = t.fast;
    fast.singular_values(0) += 1e-6 * t.ref.singular_values.maxCoeff();
    const Comparison c = check(fast);
    INFO(format_table({c}));
    CHECK(disagrees(c));
    CHECK_FALSE(c.agree);
  }
  SECTION("a value of the window 10 % off (its own residual allows about 2⁻⁹): the row disagrees") {
    SpanResult fast = t.fast;
    fast.singular_values(2) *= 1.1;
    const Comparison c = check(fast);
    INFO(format_table({c}));
    CHECK(disagrees(c));
    CHECK_FALSE(c.agree);
    CHECK(part_named(c, "hull directions").agree);
  }
  SECTION("a NaN value never agrees") {
    SpanResult fast = t.fast;
    fast.singular_values(3) = std::nan("");
    CHECK(disagrees(check(fast)));
  }
  SECTION("the free direction turned by 1e-4: the directions disagree") {
    SpanResult fast = t.fast;
    Eigen::VectorXd v = fast.hull_directions.row(0).transpose();
    REQUIRE(1e-4 > 10 * part_named(t.row, "hull directions").bound);  // the fault, far past its bound
    v += 1e-4 * fast.hull_point.normalized();
    fast.hull_directions.row(0) = v.normalized().transpose();
    const Comparison c = check(fast);
    const ComparisonPart& directions = part_named(c, "hull directions");
    INFO(directions.detail);
    CHECK(directions.undecided == 0);
    CHECK_FALSE(directions.agree);
    CHECK(disagrees(c));
  }
  SECTION("the hull point moved by 1e-6 of its norm: the point disagrees") {
    SpanResult fast = t.fast;
    REQUIRE(1e-6 * fast.hull_point.norm() > 10 * part_named(t.row, "hull point").bound);  // far past its bound
    fast.hull_point(0) += 1e-6 * fast.hull_point.norm();
    const Comparison c = check(fast);
    const ComparisonPart& point = part_named(c, "hull point");
    INFO(point.detail);
    CHECK(point.undecided == 0);
    CHECK_FALSE(point.agree);
    CHECK(part_named(c, "hull directions").agree);
  }
  SECTION("a free Ritz value at the constrained one: no separation, the directions undecided") {
    SpanResult fast = t.fast;
    fast.singular_values(0) = t.ref.singular_values(1);
    const Comparison c = check(fast);
    const ComparisonPart& directions = part_named(c, "hull directions");
    INFO(directions.detail);
    CHECK(directions.compared == 1);
    CHECK(directions.undecided == 1);
    CHECK(directions.detail.rfind("λ_m − λ̂_{m−1} = ", 0) == 0);
    // The hull point then has no kept subspace's angle (sin θ taken as 1): no finite bound.
    const ComparisonPart& point = part_named(c, "hull point");
    INFO(point.detail);
    CHECK(point.compared == 1);
    CHECK(point.undecided == 1);
    CHECK(point.detail.rfind("no finite bound (sin θ of the kept subspace 1, ", 0) == 0);
  }
  SECTION("the other values' residual infinite: their items undecided, never agreeing; the free value still decided") {
    SpanResult fast = t.fast;
    fast.value_residual = std::numeric_limits<double>::infinity();
    const Comparison c = check(fast);
    INFO(format_table({c}));
    int parts_undecided = 0;
    for (const ComparisonPart& part : c.parts) parts_undecided += part.undecided;
    const long long window_values = fast.singular_values.size() - (m - 1);
    REQUIRE(window_values > 0);
    CHECK(c.undecided - parts_undecided == window_values);  // the row's own items: one per window value
    CHECK(c.compared == fast.singular_values.size());
  }
  SECTION("a residual past every bound: directions undecided, the hull point unbounded") {
    SpanResult fast = t.fast;
    fast.free_basis_residual = 1.0;  // ‖AV̂ − V̂Λ̂‖ claimed as large as ‖M‖_F²
    const Comparison c = check(fast);
    CHECK(part_named(c, "hull directions").undecided == 1);
    const ComparisonPart& point = part_named(c, "hull point");
    INFO(point.detail);
    CHECK(point.compared == 1);
    CHECK(point.undecided == 1);
    CHECK(point.detail.rfind("no finite bound", 0) == 0);
  }
}

// One head (m = 1) on the iterative centre: no free direction, the kept subspace is all of
// them (sin θ = 0). Every head's slab passes through Θ_1, so M x0 = c and the point's
// backward error, which divides by the least residual, has no finite value here: the
// point is undecided, and its detail names the kept subspace's sin θ, 0.
TEST_CASE("stage 5's check: one head on the iterative centre keeps every direction", "[verify][stage5]") {
  const SpanCheckCase t = span_check_case(
      test::token_hull_body(kIterativeD, 1, 4 * kIterativeD * kIterativeD, 0.05, 1e-3, 5).body, 1,
      ConvexBody::CentreMethod::iterative);
  const ComparisonPart& point = part_named(t.row, "hull point");
  INFO(point.detail);
  CHECK(point.compared == 1);
  CHECK(point.undecided == 1);
  CHECK(point.detail.rfind("no finite bound (sin θ of the kept subspace 0, ", 0) == 0);
  CHECK(part_named(t.row, "hull directions").compared == 0);
  CHECK(part_named(t.row, "hull directions").detail == "m = 1: no hull directions");
}

// The iterative method keeps every constrained direction; against a body whose
// constrained values reach the rank threshold (fewer slabs than unknowns) the kept set
// is not decided, and the hull point is undecided rather than compared.
TEST_CASE("stage 5's check: an iterative result against a rank-deficient body leaves the hull point undecided",
          "[verify][stage5]") {
  const SpanCheckCase& t = iterative_case();
  const ConvexBody thin = test::token_hull_body(kIterativeD, 2, 40, 0.05, 1e-3, 5).body;
  REQUIRE(thin.dim() == t.body.dim());
  const Comparison c = check_span(thin, t.fast, 2, SpanOptions{});
  const ComparisonPart& point = part_named(c, "hull point");
  INFO(point.detail);
  CHECK(point.compared == 1);
  CHECK(point.undecided == 1);
  CHECK(point.detail.rfind("the smallest constrained value", 0) == 0);
}

// ---- The hull point's kept set and bound, on values placed by hand.

// Threshold 1, e = 1/4, e_threshold = 1/8: the band is |s − 1| ≤ 3/8, every number exact.
TEST_CASE("stage 5's kept set: values placed at the band's edges", "[verify][stage5]") {
  const double t = 1, e = 0.25, e_t = 0.125;
  const auto kept = [&](std::vector<double> values, int p) {
    return decided_kept_count(Eigen::Map<const Eigen::VectorXd>(values.data(), Eigen::Index(values.size())), p, t, e,
                              e_t);
  };
  CHECK(kept({0.0, 2.0, 3.0}, 1) == 2);                    // both constrained values clear above
  CHECK(kept({0.0, 0.5, 3.0}, 1) == 1);                    // 0.5: 1/2 below, past 3/8
  CHECK(kept({0.0, 0.25, 0.5}, 1) == 0);                   // all below: nothing kept (0.25 is 1/4 from 0, 3/4 from 1)
  CHECK_FALSE(kept({0.0, 1.375, 3.0}, 1).has_value());     // at the band's upper edge: undecided (the edge included)
  CHECK_FALSE(kept({0.0, 0.625, 3.0}, 1).has_value());     // at its lower edge
  CHECK(kept({0.0, std::nextafter(1.375, 2.0), 3.0}, 1) == 2);  // one ulp past the edge: decided
  CHECK_FALSE(kept({0.0, 1.3, 3.0}, 1).has_value());       // 0.3 from it: inside e + e_threshold, outside each alone
  CHECK(kept({1.0, 2.0, 3.0}, 1) == 2);                    // a free value at the threshold is not looked at
  CHECK_FALSE(kept({0.0, 2.0, 1.0}, 1).has_value());       // the last value too
  CHECK(kept({0.0, 2.0, 3.0}, 3) == 0);                    // no constrained value
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  CHECK_FALSE(kept({0.0, nan, 3.0}, 1).has_value());
  CHECK_FALSE(kept({0.0, 2.0, inf}, 1).has_value());
  const Eigen::Vector3d s(0.0, 2.0, 3.0);
  CHECK_FALSE(decided_kept_count(s, 1, nan, e, e_t).has_value());
  CHECK_FALSE(decided_kept_count(s, 1, t, nan, e_t).has_value());
  CHECK_FALSE(decided_kept_count(s, 1, t, e, inf).has_value());
}

// Each term of the hull point's bound at hand-placed values: which values are s_max,
// s_kept and s_drop for each kept count, κ = s_max/s_kept, and the sum's order.
TEST_CASE("stage 5's hull point bound: each term is its formula at the kept count's values", "[verify][stage5]") {
  const Eigen::Vector4d s(1e-3, 0.5, 2.0, 4.0);
  HullPointInputs in;
  in.e = 1e-9, in.sin_kept = 1e-6, in.x0_norm = 3.0, in.weighted_residual = 0.25, in.c_norm = 5.0, in.rows = 40;
  in.bits = 128;
  const long long n = 4;
  for (long long kept = 1; kept <= n; ++kept) {
    INFO("kept " << kept);
    const double s_kept = s(n - kept), s_drop = kept < n ? s(n - kept - 1) : 0.0;
    const HullPointBound b = hull_point_bound_terms(s, kept, in);
    CHECK(b.s_kept == s_kept);
    CHECK(b.s_drop == s_drop);
    CHECK(kept_value_gap(s, kept).s_kept == s_kept);
    CHECK(kept_value_gap(s, kept).s_drop == s_drop);
    CHECK(b.solve == tol::hull_point_bound(in.e, 4.0, s_kept, s_drop, in.sin_kept, in.x0_norm, in.weighted_residual,
                                           in.c_norm, in.rows, n, kept));
    CHECK(b.rounding == u * 3.0);
    CHECK(b.reference == tol::span_reference_point_error(40, n, 128, 4.0 / s_kept, 3.0));
    CHECK(b.total() == (b.solve + b.rounding) + b.reference);
  }
  // The kept subspace's sin θ at the gap s_kept − s_drop and min(kept, n − kept) dimensions.
  CHECK(kept_subspace_sin(0.25, s, 2) == tol::singular_subspace_sin_bound(0.25, 2.0 - 0.5, 2, 4));
  CHECK(kept_subspace_sin(0.25, s, 3) == tol::singular_subspace_sin_bound(0.25, 0.5 - 1e-3, 1, 4));
  CHECK(kept_subspace_sin(0.25, s, 1) == tol::singular_subspace_sin_bound(0.25, 4.0 - 2.0, 1, 4));
  CHECK(kept_subspace_sin(0.25, s, 4) == tol::singular_subspace_sin_bound(0.25, 1e-3, 0, 4));
  CHECK(kept_subspace_sin(0.25, s, 2) != tol::singular_subspace_sin_bound(0.25, 2.0, 2, 4));  // s_drop shows
  // The terms differ from one kept count to the next (so each pin above can fail).
  CHECK(hull_point_bound_terms(s, 3, in).reference != hull_point_bound_terms(s, 2, in).reference);
  CHECK(hull_point_bound_terms(s, 3, in).s_drop == 1e-3);
  CHECK(hull_point_bound_terms(s, 4, in).s_drop == 0.0);
  in.bits = 64;  // the reference's precision reaches its term
  CHECK(hull_point_bound_terms(s, 2, in).reference == tol::span_reference_point_error(40, n, 64, 2.0, 3.0));
}

// Fewer slabs than unknowns on the dense path: constrained values at 0, within the band of
// the rank threshold, so the kept set and the point are undecided (one item).
TEST_CASE("stage 5's check: a rank-deficient body leaves the dense hull point undecided", "[verify][stage5]") {
  const ConvexBody thin = test::token_hull_body(kIterativeD, 2, 40, 0.05, 1e-3, 5).body;
  const ConvexBody::Centre centre = thin.least_squares_centre(1, ConvexBody::CentreMethod::dense);
  const SpanResult fast = find_span(thin, centre, 2, SpanOptions{});
  const Comparison c = check_span(thin, fast, 2, SpanOptions{});
  const ComparisonPart& point = part_named(c, "hull point");
  INFO(point.detail);
  CHECK(point.compared == 1);
  CHECK(point.undecided == 1);
  CHECK(point.detail.rfind("singular value ", 0) == 0);
}

// A streamed ρ that puts ε between half the kept values' gap and the gap: the kept set is
// decided (every constrained value far above the threshold) but sin θ of the kept subspace
// is not below 1, so hull_point_bound has no finite value: one undecided item.
TEST_CASE("stage 5's check: a kept set decided without a finite point bound is undecided", "[verify][stage5]") {
  const int m = 3, p = m - 1;
  SpanCheckCase t =
      span_check_case(test::synthetic_body(10, m, 200, 0.01, 0, 11).body, m, ConvexBody::CentreMethod::streamed);
  const Eigen::VectorXd& s = t.ref.singular_values;
  const auto e_at = [&](double rho) {
    return tol::streamed_svd_backward_error(t.rows, t.n, p, rho) * t.ref.frobenius +
           (tol::span_reference_value_error(t.rows, t.n, t.ref.bits, t.ref.frobenius) + u * s.maxCoeff());
  };
  const double gap = s(p) - s(p - 1);
  // Bisect log ρ for ε in [0.6, 0.8]·gap (ε rises with ρ).
  double lo = -60, hi = 5;
  for (int step = 0; step < 200; ++step) {
    const double mid = 0.5 * (lo + hi), e = e_at(std::exp(mid));
    if (e >= 0.6 * gap && e <= 0.8 * gap) {
      lo = mid;
      break;
    }
    (e < 0.6 * gap ? lo : hi) = mid;
  }
  const double rho = std::exp(lo), e = e_at(rho);
  REQUIRE(e >= 0.6 * gap);
  REQUIRE(e <= 0.8 * gap);
  REQUIRE(decided_kept_count(s, p, t.ref.threshold, e, tol::rank_threshold_error(t.n, e, t.ref.threshold)) == t.n - p);
  REQUIRE_FALSE(tol::singular_subspace_sin_bound(e, gap, p, t.n) < 1);
  t.fast.free_basis_residual = rho;
  const Comparison c = check_span(t.body, t.fast, m, SpanOptions{});
  const ComparisonPart& point = part_named(c, "hull point");
  INFO(point.detail);
  CHECK(point.compared == 1);
  CHECK(point.undecided == 1);
  CHECK(point.detail.rfind("no finite bound", 0) == 0);
}

// sin θ ≤ 1: a bound decides only strictly below 1.
TEST_CASE("stage 5's directions: a bound decides only below 1, never at NaN", "[verify][stage5]") {
  CHECK(sin_bound_decides(0.5));
  CHECK(sin_bound_decides(std::nextafter(1.0, 0.0)));
  CHECK_FALSE(sin_bound_decides(1.0));
  CHECK_FALSE(sin_bound_decides(std::numeric_limits<double>::infinity()));
  CHECK_FALSE(sin_bound_decides(std::numeric_limits<double>::quiet_NaN()));
}

// The two directions bounds at dyadic values, where every term and each 2u widening shows
// in the double result.
TEST_CASE("stage 5's directions bounds: each term is its formula", "[verify][stage5]") {
  // Dense: Wedin at the gap plus the reference's angle (here not below an ulp of the sum).
  CHECK(directions_bound(1e-3, 2.0, 0.5, 4, 10, 0.125) == tol::singular_subspace_sin_bound(1e-3, 1.5, 4, 10) + 0.125);
  CHECK(directions_bound(1e-3, 2.0, 0.5, 4, 10, 0.0) == tol::singular_subspace_sin_bound(1e-3, 1.5, 4, 10));

  // Iterative: s_p = 1, e_ref = 1/4 (λ_p's error 2·1·1/4 + 1/16), ŝ_{p−1} = 1/4, p = 4.
  const double residual = 1.0 / 64, angle = 1.0 / 32;
  const long long p = 4, n = 10, k = 9;
  const IterativeDirectionsBound b = iterative_directions_bound(1.0, 0.25, 0.25, residual, p, n, k, angle);
  const double lambda_p = (1.0 - (0.5 + 0.0625)) * (1 - 2 * u), lambda_hat = 0.0625 * (1 + 2 * u);
  CHECK(b.separation == lambda_p - lambda_hat);
  CHECK(b.separation != (1.0 - 0.5625) - 0.0625);  // the widenings show at these values
  CHECK(b.bound == (residual / b.separation + 2.0 * tol::gamma(16 * n * k) + angle) * tol::bound_evaluation_factor(8));
  // No separation: +∞, however small the residual.
  CHECK(iterative_directions_bound(0.25, 0.0, 0.25, 0.0, p, n, k, 0.0).bound == std::numeric_limits<double>::infinity());
  CHECK(iterative_directions_bound(0.25, 0.0, 0.5, 0.0, p, n, k, 0.0).bound == std::numeric_limits<double>::infinity());
  // λ̂'s own widening 2u, where it shows: ŝ = 15/16, λ̂ = 225/256 (2u·λ̂ ≈ 1.76 ulps, u·λ̂ ≈ 0.88).
  const double lambda_hat_15 = 0.87890625 * (1 + 2 * u);
  REQUIRE(lambda_hat_15 != 0.87890625 * (1 + u));
  REQUIRE(lambda_hat_15 != 0.87890625);
  CHECK(iterative_directions_bound(1.0, 0.0, 0.9375, residual, p, n, k, angle).separation ==
        1.0 * (1 - 2 * u) - lambda_hat_15);
  // A separation of exactly 0 (s_p = 1 with λ_p's error −2u, ŝ_{p−1} = 1 − u: both sides
  // round to 1) is no separation either: +∞, not the 0/0 of a zero residual.
  const IterativeDirectionsBound zero = iterative_directions_bound(1.0, -u, std::nextafter(1.0, 0.0), 0.0, p, n, k, 0.0);
  REQUIRE(zero.separation == 0.0);
  CHECK(zero.bound == std::numeric_limits<double>::infinity());
}

// m − 1 = n (here n = 1, m = 2): every direction free, none constrained, so there are no
// hull directions to compare (the part counts nothing) and nothing reads past s_{n−1}.
TEST_CASE("stage 5's check: as many free directions as unknowns leaves no hull directions", "[verify][stage5]") {
  ConvexBody body(1, 20.0);
  body.add({{1.0}, 0.25, 0.5});
  body.add({{-1.0}, 0.125, 0.5});
  const ConvexBody::Centre centre = body.least_squares_centre(1, ConvexBody::CentreMethod::dense);
  const SpanResult fast = find_span(body, centre, 2, SpanOptions{});
  const Comparison c = check_span(body, fast, 2, SpanOptions{});
  const ComparisonPart& directions = part_named(c, "hull directions");
  INFO(format_table({c}));
  CHECK(directions.compared == 0);
  CHECK(directions.undecided == 0);
  CHECK(directions.detail == "m − 1 ≥ n: every direction free, no hull directions to compare");
}
