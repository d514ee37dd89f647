// The named bounds of numeric/tolerance.hpp pinned to their formulas: each on a
// hand-chosen input against its exact value (tests/numeric/tolerance_values.py:
// the formula in exact rationals, rounded once), so that a bound a factor off —
// which every use as an upper bound would still pass — fails here. The bounds of
// the verify rows (γ_n, the least-squares and certification bounds) are pinned
// in tests/verify/test_verify.cpp.
#include "test_tolerances.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

namespace tol = mha::tolerance;

namespace {
// The double evaluation of a bound against its exact value: at most 20
// roundings in each formula below, so within γ_20 of it (Higham Lemma 3.3); a
// bound off by any factor outside [1 − 2.3e-15, 1 + 2.3e-15] fails.
void check_value(double computed, double exact) {
  INFO("computed " << computed << ", exact " << exact);
  CHECK(std::abs(computed - exact) <= tol::gamma(20) * std::abs(exact));
}
}  // namespace

TEST_CASE("unit roundoffs and evaluation factors equal their definitions", "[tolerance][hardening]") {
  CHECK(tol::mpfr_unit_roundoff(128) == std::ldexp(1.0, -128));
  CHECK(tol::mpfr_unit_roundoff(53) == tol::kDoubleUnitRoundoff);
  CHECK(tol::bound_evaluation_factor(9) == 1.0 + tol::gamma(10));
  // γ_n at the edge of its domain: n u = 1 − 2⁻⁵³·… is finite, n u ≥ 1 is +inf.
  CHECK(std::isfinite(tol::gamma((1LL << 53) - 1)));
  CHECK(std::isinf(tol::gamma(1LL << 53)));
  CHECK(tol::gamma(1LL << 54) == std::numeric_limits<double>::infinity());  // nu = 2: no bound, not nu/(1 − nu) = −2
  CHECK(tol::gamma(3, 0.5) == std::numeric_limits<double>::infinity());
  check_value(tol::gamma(1000, std::ldexp(1.0, -40)), 1000 * std::ldexp(1.0, -40) / (1 - 1000 * std::ldexp(1.0, -40)));
}

TEST_CASE("the MPFR reference bounds equal their formulas", "[tolerance][hardening]") {
  check_value(tol::reference_relative_error(128, 1000), 2.9387358770557188e-36);
  check_value(tol::reference_reorder(128, 1000), 5.8774717541114375e-36);
  check_value(tol::reference_in_double_relative(40, 1000), 9.094949246447146e-10);
  check_value(tol::mpfr_softmax_l1_rounding_units(3), 20.0);  // 2(k + 4) + 2k, exactly
}

TEST_CASE("the property tests' bounds equal their formulas", "[tolerance][hardening]") {
  check_value(tol::head_reorder_bound(2, 3, 4, 5.0), 5.5511151231257985e-15);
  // Each of the three terms of squared_loss_from_forward_bound on its own.
  check_value(tol::squared_loss_from_forward_bound(0.25, 0.5, 0.0, 6), 0.50000000000000067);
  check_value(tol::squared_loss_from_forward_bound(0.0, 0.0, 2.0, 6), 1.7763568394002544e-15);
  // ‖X*‖_F = 2 times the per-column bound at κ = 10, 100 × 4, ratio ‖R‖/(‖T‖‖X‖) = 1/8.
  check_value(tol::least_squares_fit_bound(10, 100, 4, 2.0, 1.0, 4.0), 9.5923269329044935e-11);
  check_value(tol::least_squares_fit_bound(10, 100, 4, 2.0, 1.0, 4.0),
              2.0 * tol::qr_least_squares_relative_bound(10, 100, 4, 0.125));
  CHECK(tol::least_squares_fit_bound(10, 100, 4, 0.0, 0.0, 4.0) == 0.0);           // X* = 0 fitted exactly
  CHECK(std::isinf(tol::least_squares_fit_bound(10, 100, 4, 0.0, 1.0, 4.0)));      // X* = 0 with a residual: no relative bound
  CHECK(std::isinf(tol::least_squares_fit_bound(1e13, 100, 4, 2.0, 1.0, 4.0)));    // κ ε ≥ 1
  check_value(tol::jacobi_singular_value_bound(10, 3), 5.3290705182064332e-13);
}

TEST_CASE("the unit tests' rounding tolerances equal their formulas", "[tolerance][hardening]") {
  check_value(tol::dot_product_reorder(10), 2.2204460492503154e-15);
  check_value(tol::scaled_copy_relative_error(3e-3, 256), 5.0559556541430164e-16);
  check_value(tol::rescaled_norm_relative(256), 5.7287508070661359e-14);
  check_value(tol::monte_carlo_frequency_margin(0.25, 10000), 0.021650635094610966);
  // (1 + expm1(2E))(1 + γ_{k+5}) − 1 subtracts 1 from a product near 1: its
  // rounding is absolute, at most 3u (two roundings of numbers ≤ 1.01 and the
  // product's), so the pin allows 4u more (10⁻¹³ of the value at this input).
  const double softmax_bound = tol::double_softmax_relative_error(1e-3, 10, 3), softmax_exact = 0.004008010677344998;
  CHECK(std::abs(softmax_bound - softmax_exact) <= tol::gamma(20) * softmax_exact + 4 * tol::kDoubleUnitRoundoff);
}

TEST_CASE("the label-noise bounds equal their formulas", "[tolerance][hardening][noise]") {
  check_value(tol::chi_square_tail_quantile(16, 3.0), 35.856406460551057);
  check_value(tol::label_noise_row_bound(1e-4, 5.0, 2, 16, 1e-12), 0.00094898967880576433);
  check_value(tol::float32_label_rounding_row_bound(3.0, 16), 1.7881394498431368e-07);
  check_value(tol::residual_rounding_level(1e-28, 4.0), 5.0000000000000024e-15);
  check_value(tol::noise_estimate_band(16384, 1024, 2.0), 0.096824583655185426);
  CHECK(tol::label_noise_row_bound(0.0, 5.0, 2, 16, 1e-12) == 0.0);
  // ε√q_{kd} above √(kd)/2: no bound (+inf), and the row cannot be certified.
  CHECK(std::isinf(tol::label_noise_row_bound(0.5, 5.0, 2, 16, 1e-12)));
  CHECK(std::isinf(tol::residual_rounding_level(1.0, 0.0)));
  CHECK(std::isinf(tol::noise_estimate_band(1024, 1024, 2.0)));
}

TEST_CASE("polishing's gradient bounds equal their formulas", "[tolerance][hardening][polish]") {
  check_value(tol::attention_jacobian_relative(3, 4, 2.0), 2.1982415887578153e-14);
  check_value(tol::projection_distance(1e-3, 0.5), 0.0020040080160320648);
  CHECK(std::isinf(tol::projection_distance(0.5, 0.5)));  // the design may be singular: no bound
  check_value(tol::householder_projection_distance(100, 4, 1e-3, 10.0, 0.5), 0.0020040080331435338);
  check_value(tol::householder_projection_rounding(100, 4, 3), 9.1593399531738261e-14);
  check_value(tol::projected_residual_error(2.0, 1e-3, 1e-4), 0.0012001000000000006);
  check_value(tol::polish_gradient_bound(1e-10, 1e-12, 3.0, 5.0, 2.0, 1e-3, 1e-13), 0.0030000001010055044);
  // The reference's projection: ‖D‖_F·(normal-equations bound)·‖c‖_F plus the residual's
  // γ_{n+1}(2⁻ᵖ) rounding, times the evaluation factor of 8 operations.
  const double kappa = 10.0 / 0.5, solve = tol::normal_equations_relative_bound(kappa, 100, 4, 128) * 3.0;
  const double apply = tol::gamma(5, tol::mpfr_unit_roundoff(128)) * (2.0 + 10.0 * 3.0);
  check_value(tol::normal_equations_projection_error(128, 100, 4, 10.0, 0.5, 3.0, 2.0),
              (10.0 * solve + apply) * tol::bound_evaluation_factor(8));
  CHECK(std::isinf(tol::normal_equations_projection_error(128, 100, 4, 10.0, 0.0, 3.0, 2.0)));
}

// The bounds that had no pinning test (tests/numeric/bound_pins.py lists any that
// still have none), each at a hand-computed value (tests/numeric/tolerance_values.py,
// mpmath at 200 digits) and at its edges: gap → ε, rank deficiency, zero norms.
TEST_CASE("the span's and the proxy's bounds equal their formulas, and their edges", "[tolerance][hardening]") {
  check_value(tol::svd_backward_error(100, 4), 7.3996364591317322e-13);
  check_value(tol::streamed_svd_backward_error(100, 4, 2, 1e-12), 6.7447273705199496e-12);
  check_value(tol::streamed_svd_backward_error(100, 4, 2, 0.0), 6.6167335503006029e-12);  // ρ floored at 2⁻⁴⁰
  // Wedin: ε/(gap − ε), not ε/gap (2 % apart here, 10⁶ apart near the edge).
  check_value(tol::singular_subspace_sin_bound(1e-3, 0.1, 2, 4), 0.010101010101050306);
  check_value(tol::singular_subspace_sin_bound(1e-3, 1e-3 * (1 + 0x1p-20), 2, 4), 1048576.0000247967);
  CHECK(std::isinf(tol::singular_subspace_sin_bound(1e-3, 1e-3, 2, 4)));   // gap = ε: not separated
  CHECK(std::isinf(tol::singular_subspace_sin_bound(1e-3, 0.0, 2, 4)));    // rank deficiency: no gap
  // Stage 5's reference's own errors, at 64 bits where each term shows (at 128 they sit
  // below an ulp of the double bounds they join).
  check_value(tol::span_reference_value_error(100, 4, 64, 3), 1.3179119395171204e-08);
  check_value(tol::span_reference_angle_error(4, 64, 3, 2, 1), 4.2283884726934673e-17);
  CHECK(std::isinf(tol::span_reference_angle_error(4, 64, 3, 1, 1)));  // no eigenvalue gap
  CHECK(std::isinf(tol::span_reference_angle_error(4, 64, 3, 1, 2)));  // the values out of order
  check_value(tol::span_reference_point_error(100, 4, 64, 10, 2), 3.8597597340483958e-15);
  // The rank threshold's error: 4·2⁻⁵²·0.5 + 2⁻⁵³·3 = 7·2⁻⁵³, exact in double.
  CHECK(tol::rank_threshold_error(4, 0.5, 3) == 7.771561172376096e-16);
  check_value(tol::hull_point_bound(1e-6, 10, 1, 0.01, 1e-3, 2, 0.5, 3, 100, 4, 2), 0.0020501016293180273);
  CHECK(std::isinf(tol::hull_point_bound(1e-6, 10, 1, 0.01, 1.0, 2, 0.5, 3, 100, 4, 2)));    // sin θ = 1
  CHECK(std::isinf(tol::hull_point_bound(1e-6, 10, 1e-6, 0.0, 1e-3, 2, 0.5, 3, 100, 4, 2))); // s_K = ε
  check_value(tol::min_norm_solution_bound(10, 20, 3, 2), 2.171596236167673e-12);
  CHECK(std::isinf(tol::min_norm_solution_bound(1e15, 20, 3, 2)));   // κε ≥ 1
  CHECK(tol::min_norm_solution_bound(10, 20, 3, 0.0) == 0.0);         // θ* = 0: exact
  check_value(tol::polish_operator_relative(100, 2.0), 9.9920072216265199e-14);
  CHECK(std::isinf(tol::householder_projection_distance(100, 4, 0.5, 10.0, 0.5)));  // σ_min ≤ ‖E‖
}

TEST_CASE("the iterative centre's and the membership span's bounds equal their formulas", "[tolerance][hardening]") {
  // Values: tests/numeric/tolerance_values.py.
  check_value(tol::iterative_eigen_residual_bound(1e-10, 1000, 8, 64, 5, 3), 9.1393425540329191e-10);
  check_value(tol::iterative_point_backward_error(1e-10, 1000, 8, 64, 3, 2, 0.5, 0.25), 3.0479782880091859e-10);
  CHECK(std::isinf(tol::iterative_point_backward_error(1e-10, 1000, 8, 64, 3, 2, 0.5, 0.0)));  // ‖r*‖ = 0
  CHECK(tol::iterative_eigen_residual_bound(0, 1000, 8, 64, 5, 0) == 0.0);                      // M = 0: exact
  check_value(tol::membership_excess_evaluation_error(64, 2, -0.5, 0.01), 1.8319790129339862e-14);
  // A fast certificate below its value (gap < 0) adds nothing; above it, its gap.
  check_value(tol::optimum_two_paths_bound(-1e-9, 1e-8, 1e-12), 1.0001000000000006e-08);
  check_value(tol::optimum_two_paths_bound(1e-9, 1e-8, 1e-12), 1.1001000000000007e-08);
  check_value(tol::membership_hull_point_bound(1e-6, 3, 64, 1), 3.0000000859312643e-06);
  CHECK(tol::membership_hull_point_bound(1e-6, 0, 64, 1) == 0.0);  // p = 0: x0 = 0 on both paths
}

TEST_CASE("polishing's held-out residual limit equals its formula, and its edges", "[tolerance][hardening]") {
  // Values: tests/numeric/tolerance_values.py.
  check_value(tol::heldout_residual_limit(2e-12, 5e-15, 8192, 1024, 8192), 2.5852297634625169e-12);
  // The rounding level stands in for a training residual below it.
  CHECK(tol::heldout_residual_limit(1e-16, 2e-12, 8192, 1024, 8192) ==
        tol::heldout_residual_limit(2e-12, 1e-16, 8192, 1024, 8192));
  CHECK(std::isinf(tol::heldout_residual_limit(1e-12, 0, 1024, 1024, 8192)));  // n ≤ p: no estimate
  CHECK(std::isinf(tol::heldout_residual_limit(1e-12, 0, 8192, 1024, 0)));     // no held-out entries
}

TEST_CASE("the test-only rounding tolerances equal their formulas", "[tolerance][hardening]") {
  check_value(tol::label_noise_power_band(1000, 16, 2.0), 0.094868329805051374);
  check_value(tol::principal_angle_error(3, 10), 2.2193195334367396e-06);
  check_value(tol::hull_distance_rounding(100, 4, 10.0, 0.5, 2.0, 1.0), 1.7790213746594314e-12);
  CHECK(tol::rounding_floor_factor() == 8.0);
}

TEST_CASE("zero norms give a zero bound where the formula is exact", "[tolerance][hardening]") {
  CHECK(tol::objective_from_residual_bound(0, 0, 8, 100) == 0.0);
  CHECK(tol::certification_residual_bound(3, 0, 0, 0, 0, 2, 4) == 0.0);
  CHECK(tol::projected_residual_error(0, 0, 0.5) == 0.0);
  CHECK(tol::slab_normal_difference_bound(0, 16) == 0.0);
  CHECK(tol::lp_value_difference_bound(0, 0, 0, 0) == 0.0);
}
