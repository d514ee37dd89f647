// The bounds of numeric/tolerance.hpp term by term. tests/numeric/test_tolerance.cpp and
// tests/verify/test_verify.cpp pin each bound to its exact value within γ_20 — the
// rounding of the bound's own evaluation — so a term or an evaluation factor of a few
// units in the last place (the (1 + γ_n) factors, a u·|c| term) can go missing without
// failing them. Here each bound is compared *exactly* with its formula written out
// beside it, at inputs where every term is larger than an ulp of the sum it joins, and at
// the edges of its domain (κε at 1, a gap at ε, zero inputs), where the bound must be +∞
// rather than a negative number or NaN.
#include "numeric/tolerance.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

namespace tol = mha::tolerance;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
const double u = tol::kDoubleUnitRoundoff;
double g(long long n) { return tol::gamma(n); }
double factor(long long n) { return tol::bound_evaluation_factor(n); }
}  // namespace

TEST_CASE("the QR least-squares bound: its formula exactly, +∞ from κε = 1 on, and finite below it", "[tolerance][terms]") {
  // κ = 10, 100 × 4, ratio 1/2: ε = √4·γ_{16·100·4}.
  const double eps = 2.0 * g(16 * 100 * 4), ke = 10 * eps;
  CHECK(tol::qr_least_squares_relative_bound(10, 100, 4, 0.5) == ke / (1.0 - ke) * (2.0 + 11.0 * 0.5) * factor(8));
  // κε between 1/10 and 1 has a (large) bound; from 1 on there is none (not a negative one).
  const double kappa_half = 0.5 / eps, kappa_two = 2.0 / eps;
  const double half = tol::qr_least_squares_relative_bound(kappa_half, 100, 4, 0.0);
  CHECK(std::isfinite(half));
  CHECK(half > 1.0);
  CHECK(tol::qr_least_squares_relative_bound(kappa_two, 100, 4, 0.0) == kInf);
  // κ = 0 with an ε that overflows (γ of n·u ≥ 1 is +∞): κε = 0·∞ is NaN, and no bound.
  CHECK(tol::qr_least_squares_relative_bound(0.0, 1LL << 40, 1LL << 10, 0.0) == kInf);
}

TEST_CASE("the normal-equations bound: its formula exactly", "[tolerance][terms]") {
  const double u128 = tol::mpfr_unit_roundoff(128);
  CHECK(tol::normal_equations_relative_bound(10, 100, 4, 128) ==
        4.0 * 10 * 10 * (tol::gamma(100, u128) + tol::gamma(12, u128)) * factor(6));
}

TEST_CASE("the certification bounds: their formulas exactly, +∞ for a singular B", "[tolerance][terms]") {
  // ‖B‖_F = 3, σ_min = 1, ‖y‖ = 2, ‖v‖ = 1, k = 2, d = 4.
  const double e = (g(4) + g(7)) * 9.0;
  CHECK(tol::certification_solution_bound(3, 1, 2, 1, 2, 4) == (e * 1.0 + g(4) * 3.0 * 2.0) / (1.0 - e) * factor(12));
  // B = 0: σ_min = 0 = e, no bound (not 0/0).
  CHECK(tol::certification_solution_bound(0, 0, 0, 0, 2, 4) == kInf);
  CHECK(tol::certification_solution_bound(1, 0, 1, 1, 2, 4) == kInf);
  // ‖y‖ = 0 and ‖v‖ = 3: the perturbation's own term e‖v‖ alone, so its factor ‖v‖ shows.
  CHECK(tol::certification_solution_bound(3, 1, 0, 3, 2, 4) == (e * 3.0 + g(4) * 3.0 * 0.0) / (1.0 - e) * factor(12));
}

TEST_CASE("the certification residual bound: each of its terms exactly", "[tolerance][terms]") {
  // v̂ exact (Δv = 0): every term is a rounding term, none hidden below another.
  {
    const double moved = 3.0 * 0.0, evaluation = g(3) * (2.0 + (1.0 + 0.0) * 3.0);
    const double norm = g(5) * (0.5 + moved + evaluation);
    CHECK(tol::certification_residual_bound(3, 2, 1, 0.5, 0, 2, 4) == (moved + evaluation + norm) * factor(12));
  }
  // Δv = 1 with ‖v‖ = 0: the moved residual and Δv's share of the evaluation.
  {
    const double moved = 1.0 * 1.0, evaluation = g(3) * (0.0 + (0.0 + 1.0) * 1.0);
    const double norm = g(5) * (0.0 + moved + evaluation);
    CHECK(tol::certification_residual_bound(1, 0, 0, 0, 1, 2, 4) == (moved + evaluation + norm) * factor(12));
  }
}

TEST_CASE("stage 3's logit margin bound exactly", "[tolerance][terms]") {
  const double logits = 2.0 * g(6) * 1.0;
  CHECK(tol::logit_margin_bound(1, 0.5, 3) == (logits + u * (0.5 + logits)) * factor(12));
  CHECK(tol::logit_margin_bound(1, -0.5, 3) == tol::logit_margin_bound(1, 0.5, 3));  // |margin|
  // A margin of 0: u·logits alone, more than half an ulp of logits (its mantissa is above 1), shows.
  CHECK(tol::logit_margin_bound(1, 0, 3) == (logits + u * (0.0 + logits)) * factor(12));
  CHECK(tol::logit_margin_bound(1, 0, 3) != logits * factor(12));
}

TEST_CASE("stage 2's slab bounds exactly, and +∞ where a v is within its error of 0", "[tolerance][terms]") {
  // The centre: v errors 0 leave γ_1 and 3u|c|; 10⁻³ adds the moved quotients.
  CHECK(tol::slab_centre_difference_bound(2, 3, 0.5, 0) == ((0.0 + g(1)) * (1.0 + 2.0 * u) + 3.0 * u * 0.5) * factor(12));
  const double moved = 1e-3 / (2 - 1e-3) + 1e-3 / (3 - 1e-3);
  CHECK(tol::slab_centre_difference_bound(2, 3, -100, 1e-3) == ((moved + g(1)) * (1.0 + 2.0 * u) + 3.0 * u * 100) * factor(12));
  CHECK(tol::slab_centre_difference_bound(2, 3, 0.5, 2.5) == kInf);  // v_j within its error of 0 (v_a not)
  CHECK(tol::slab_centre_difference_bound(3, 2, 0.5, 2.5) == kInf);  // v_a (v_j not)
  CHECK(tol::slab_centre_difference_bound(0, 3, 0.5, 0) == kInf);    // v_j = 0 = its error: no bound, not 0/0
  CHECK(tol::slab_centre_difference_bound(3, 0, 0.5, 0) == kInf);    // v_a
  // The width: δ = 1/2, η = 1, v = 2 and 3, errors 10⁻¹⁷ (as large as the rounding terms).
  const double de = 1e-17, ve = 1e-17, d_hi = 0.5 + de;
  double total = 2.0 * u * 1.0;
  for (double w : {2.0, 3.0}) {
    const double w_lo = w - ve, gap = w_lo - d_hi;
    total += de / gap + ve * d_hi / (w_lo * gap);
    total += g(2) * d_hi / gap + 2.0 * u * -std::log1p(-d_hi / w_lo);
  }
  CHECK(tol::slab_width_difference_bound(2, 3, 0.5, 1, ve, de) == total * factor(24));
  CHECK(tol::slab_width_difference_bound(2, 3, 2, 1, 0, 0) == kInf);  // δ reaches v_j
  CHECK(tol::slab_width_difference_bound(3, 2, 2, 1, 0, 0) == kInf);  // and v_a
  CHECK(tol::slab_normal_difference_bound(2.0, 5) == g(3) * 2.0 * factor(6));
}

TEST_CASE("the body's membership bands and the LP value bound exactly", "[tolerance][terms]") {
  const double evaluation = g(6) * (1.0 + 2.0) + u * (1.0 + 2.0 + 3.0);
  CHECK(tol::slab_membership_band(1, 2, 3, 4, 1e-16, 2e-16, 1e-17, 5) == (evaluation + 1e-16 + 2e-16 + 1e-17 * 5) * factor(12));
  CHECK(tol::ball_membership_band(3, 20, 4) == (g(5) * 3.0 + u * (3.0 + 20.0)) * factor(8));
  CHECK(tol::lp_value_difference_bound(1e-3, 2e-3, 5e-4, 7e-4) == (1e-3 + 2e-3 + 7e-4) * factor(4));
  CHECK(tol::lp_value_difference_bound(1e-3, 2e-3, 7e-4, 5e-4) == (1e-3 + 2e-3 + 7e-4) * factor(4));
}

TEST_CASE("stage 6's and stage 5's perturbation bounds exactly, +∞ from κε = 1 on", "[tolerance][terms]") {
  const double ke = 10 * 1e-3;
  CHECK(tol::least_squares_perturbation_bound(10, 1e-3, 2, 3, 4) == ke / (1.0 - ke) * (2.0 * 2 + (10 + 1.0) * 3 / 4) * factor(10));
  CHECK(tol::least_squares_perturbation_bound(10, 0.1, 2, 3, 4) == kInf);   // κε = 1
  CHECK(tol::least_squares_perturbation_bound(10, 0.2, 2, 3, 4) == kInf);   // κε = 2: not a negative bound
  CHECK(std::isfinite(tol::least_squares_perturbation_bound(10, 0.05, 2, 3, 4)));  // κε = 1/2
  REQUIRE(10 * 0.1 == 1.0);
  CHECK(tol::least_squares_perturbation_bound(10, 0.1, 0, 0, 4) == kInf);  // κε = 1 with nothing to scale: +∞, not ∞·0
  const double eps = g(16 * 5 + 2 * 3), kn = 10 * eps;
  CHECK(tol::min_norm_solution_bound(10, 5, 3, 2) == kn / (1.0 - kn) * 3.0 * 2 * factor(8));
  CHECK(tol::min_norm_solution_bound(2.0 / eps, 5, 3, 2) == kInf);
  CHECK(std::isfinite(tol::min_norm_solution_bound(0.5 / eps, 5, 3, 2)));
  // κ = 0 with an ε that overflows: κε = 0·∞ is NaN, and no bound; κε = 1 with ‖θ‖ = 0: +∞, not ∞·0.
  CHECK(tol::min_norm_solution_bound(0, 1LL << 50, 0, 1) == kInf);
  double kappa_one = 1.0 / eps;
  while (kappa_one * eps < 1.0) kappa_one = std::nextafter(kappa_one, kInf);
  while (std::nextafter(kappa_one, 0.0) * eps >= 1.0) kappa_one = std::nextafter(kappa_one, 0.0);
  REQUIRE(kappa_one * eps == 1.0);
  CHECK(tol::min_norm_solution_bound(kappa_one, 5, 3, 0) == kInf);
  CHECK(tol::svd_backward_error(100, 4) == (g(4 + 5) + g(16 * 100 * 4) + g(16 * 4 * 4)) * factor(8));
  // The streamed SVD: ρ at its floor 2^-40, and a residual above it.
  for (const double residual : {0.0, 1e-9}) {
    const double rho = std::max(tol::kInverseIterationResidual, residual);
    CHECK(tol::streamed_svd_backward_error(10, 3, 2, residual) ==
          (g(3 + 5) + g(64 * (3 + 1) * 10) + 2 * g(16 * 3 * 3) + 2 * g(1920 * 3) + std::sqrt(2.0) * rho + g(16 * 3 * 2) + g(3)) *
              factor(16));
  }
  CHECK(tol::singular_subspace_sin_bound(1e-10, 1e-3, 4, 3) == (1e-10 / (1e-3 - 1e-10) + std::sqrt(4.0) * g(16 * 3 * 3)) * factor(8));
  CHECK(tol::singular_subspace_sin_bound(1e-3, 1e-3, 4, 3) == kInf);  // gap = ε
  CHECK(tol::singular_subspace_sin_bound(0, 0, 4, 3) == kInf);        // gap = ε = 0: +∞, not 0/0
}

TEST_CASE("stage 5's hull point bound exactly", "[tolerance][terms]") {
  // ε = 10⁻⁶, s_max = 4, s_kept = 2, s_drop = 10⁻³, sin = 0.1, ‖x0‖ = 3, residual 0.5, ‖c‖ = 2, 20 × 6, 2 kept.
  const double eps = 1e-6, s_max = 4, s_kept = 2, s_drop = 1e-3, sin_kept = 0.1, x0 = 3, res = 0.5, c = 2;
  const double cos_kept = std::sqrt((1.0 - sin_kept) * (1.0 + sin_kept)), tan_kept = sin_kept / cos_kept;
  const double delta_d = (s_drop * sin_kept + eps) / cos_kept, kappa = s_max / s_kept;
  const double ls = tol::least_squares_perturbation_bound(kappa, delta_d / s_max, x0, res, s_max);
  const double delta_c = g(6 + 5) * c / (s_kept - eps), dw = ls + delta_c;
  const double orthogonality = std::sqrt(6.0) * g(16 * 6 * 6);
  const double evaluation = g(16 * 20 * 6 + 2 * 6) * std::sqrt(2.0) * c / (s_kept - eps);
  CHECK(tol::hull_point_bound(eps, s_max, s_kept, s_drop, sin_kept, x0, res, c, 20, 6, 2) ==
        (tan_kept * (x0 + dw) + dw + orthogonality * (x0 + dw) + evaluation) * factor(24));
  CHECK(tol::hull_point_bound(eps, s_max, s_kept, s_drop, 1.0, x0, res, c, 20, 6, 2) == kInf);  // sin θ = 1
  CHECK(tol::hull_point_bound(2.0, s_max, s_kept, s_drop, sin_kept, x0, res, c, 20, 6, 2) == kInf);  // s_kept ≤ ε
  CHECK(tol::hull_point_bound(2.0, s_max, s_kept, s_drop, sin_kept, x0, res, 0, 20, 6, 2) == kInf);  // s_kept = ε, c = 0: not 0/0
  CHECK(tol::hull_point_bound(3.0, s_max, s_kept, s_drop, sin_kept, x0, res, c, 20, 6, 2) == kInf);  // s_kept < ε (sin θ < 1)
  CHECK(tol::hull_point_bound(eps, s_max, s_kept, s_drop, 2.0, x0, res, c, 20, 6, 2) == kInf);       // sin θ > 1: not NaN
  // s_kept = ε = 1, s_max = 49, sin θ = 0, ‖c‖ = 0: here the perturbation's κε = 49·fl(1/49) is
  // 1 − 2⁻⁵³, below 1, so only the guard s_kept > ε stands between the bound and 0/0.
  REQUIRE(49.0 * (1.0 / 49.0) < 1.0);
  CHECK(tol::hull_point_bound(1.0, 49.0, 1.0, 0.0, 0.0, x0, res, 0.0, 20, 6, 2) == kInf);
  // ε half of s_kept, ‖c‖ = 100: the c terms' divisor s_kept − ε (not s_kept) shows.
  {
    const double e2 = 1.0, sk = 2.0, c2 = 100.0;
    const double dd = e2 / 1.0, ls2 = tol::least_squares_perturbation_bound(s_max / sk, dd / s_max, x0, res, s_max);
    const double dw2 = ls2 + g(6 + 5) * c2 / (sk - e2);
    const double ev2 = g(16 * 20 * 6 + 2 * 6) * std::sqrt(2.0) * c2 / (sk - e2);
    CHECK(tol::hull_point_bound(e2, s_max, sk, 0.0, 0.0, x0, res, c2, 20, 6, 2) ==
          (0.0 * (x0 + dw2) + dw2 + orthogonality * (x0 + dw2) + ev2) * factor(24));
  }
}

TEST_CASE("stage 5's reference errors exactly", "[tolerance][terms]") {
  const double u64 = tol::mpfr_unit_roundoff(64);
  CHECK(tol::span_reference_value_error(20, 6, 64, 3) == std::sqrt((tol::gamma(20, u64) + tol::gamma(16 * 6 * 6, u64)) * 3 * 3));
  CHECK(tol::rank_threshold_error(6, 1e-3, 2) == 6.0 * std::numeric_limits<double>::epsilon() * 1e-3 + u * 2);
  const double lambda_gap = 2.0 * 2.0 - 1.0 * 1.0;
  CHECK(tol::span_reference_angle_error(6, 64, 3, 2, 1) ==
        (tol::gamma(6, u64) + tol::gamma(16 * 6 * 6, u64)) * 3 * 3 / lambda_gap);
  CHECK(tol::span_reference_angle_error(6, 64, 3, 2, 1.5) ==  // s_{p−1} ≠ 1: its square shows
        (tol::gamma(6, u64) + tol::gamma(16 * 6 * 6, u64)) * 3 * 3 / (2.0 * 2.0 - 1.5 * 1.5));
  CHECK(tol::span_reference_angle_error(6, 64, 3, 1, 1) == kInf);  // no gap
  CHECK(tol::span_reference_angle_error(6, 64, 0, 1, 1) == kInf);  // no gap and ‖M‖ = 0: +∞, not 0/0
  CHECK(tol::span_reference_point_error(20, 6, 64, 5, 2) == tol::gamma(20 + 16 * 6 * 6, u64) * 5 * 5 * 2);
}

TEST_CASE("stage 6's design and objective bounds exactly", "[tolerance][terms]") {
  CHECK(tol::design_entry_relative_error(0.5, 3) == (0.5 + g(3) + 0.5 * g(3)) * factor(4));
  // The objective: the distance to the upper end, at ρ = 1, δ = 1/4, ‖Y‖² = 2, 12 entries; at δ > ρ;
  // and at δ = 0, the rounding terms alone.
  for (auto [rho, delta] : {std::pair{1.0, 0.25}, std::pair{0.25, 1.0}, std::pair{1.0, 0.0}}) {
    const double gg = g(12), hi = rho + delta;
    const double upper = ((2.0 * rho * delta + delta * delta) + hi * hi * (2.0 * gg + u + gg * u) / (1.0 - gg)) / 2.0;
    CHECK(tol::objective_from_residual_bound(rho, delta, 2.0, 12) == upper * factor(16));
  }
}

// The objective bound keeps only the distance of E* to the upper end of Ê's interval; the
// distance to the lower end (proofs/w_least_squares.md, step 6) is never larger. Here it is
// computed in long double on a grid of ρ and δ on both sides of 1 (where ρ² < ρ and a mistaken
// lower side would exceed the upper one), and at γ large (10¹³ entries).
TEST_CASE("stage 6's objective bound: the distance to the lower end never exceeds it", "[tolerance][terms]") {
  for (long long entries : {1LL, 12LL, 10000000000000LL}) {
    const long double gg = g(entries), uu = u;
    for (double rho : {0.0, 1e-3, 0.25, 0.5, 1.0, 3.0, 1e3})
      for (double delta : {0.0, 1e-12, 1e-3, 0.1, 0.25, 1.0, 5.0}) {
        const long double lo = std::max(0.0L, (long double)rho - delta), t = std::min<long double>(delta, rho);
        const long double lower = (t * (2.0L * rho - t) + lo * lo * (2.0L * gg + uu - gg * uu) / (1.0L + gg)) / 2.0L;
        INFO("entries " << entries << ", ρ " << rho << ", δ " << delta);
        CHECK(lower <= (long double)tol::objective_from_residual_bound(rho, delta, 2.0, entries));
      }
  }
}

TEST_CASE("the property tests' and unit tests' rounding bounds exactly", "[tolerance][terms]") {
  const double e = g(16 * 10 * 3 + 30 * 16 * 3 * 3);
  CHECK(tol::jacobi_singular_value_bound(10, 3) == e / (1.0 - e) * (1.0 + g(4)));
  // The softmax: a logit error of 10⁻¹⁷ (below u·span, so both exponent terms show), span 2, k = 3.
  const double exponent_error = (2.0 * 1e-17 + u * (2.0 + 2.0 * 1e-17)) * factor(4);
  CHECK(tol::double_softmax_relative_error(1e-17, 2, 3) ==
        ((1.0 + std::expm1(2.0 * exponent_error)) * (1.0 + g(3 + 5)) - 1.0) * factor(4));
  // A logit error of 1/4: the exponent error ≈ 1/2, whose last bits (its factor, 2·logit_error in the
  // span) exp carries past the ulp that 1 + expm1(·) would otherwise round them into.
  const double large_error = (2.0 * 0.25 + u * (2.0 + 2.0 * 0.25)) * factor(4);
  CHECK(tol::double_softmax_relative_error(0.25, 2, 3) ==
        ((1.0 + std::expm1(2.0 * large_error)) * (1.0 + g(3 + 5)) - 1.0) * factor(4));
  // A logit error of 3/8: there u·2·logit_error, the span's widening, changes the last bit exp
  // carries (at 1/4 it does not; found by trying dyadic errors and spans).
  const double wider_error = (2.0 * 0.375 + u * (2.0 + 2.0 * 0.375)) * factor(4);
  CHECK(tol::double_softmax_relative_error(0.375, 2, 3) ==
        ((1.0 + std::expm1(2.0 * wider_error)) * (1.0 + g(3 + 5)) - 1.0) * factor(4));
  const double narrower_error = (2.0 * 0.375 + u * (2.0 + 0.375)) * factor(4);
  CHECK(tol::double_softmax_relative_error(0.375, 2, 3) !=
        ((1.0 + std::expm1(2.0 * narrower_error)) * (1.0 + g(3 + 5)) - 1.0) * factor(4));
}

TEST_CASE("polishing's bounds exactly, +∞ where the design may be singular", "[tolerance][terms]") {
  CHECK(tol::polish_operator_relative(7, 0.5) == g(7) * (1 + 4 * 0.5));
  CHECK(tol::attention_jacobian_relative(3, 4, 2.0) == g(2 * 4 + 2 * 3 + 8) * (1 + 4 * 2.0));
  CHECK(tol::attention_jacobian_relative(3, 4, 2.0, tol::mpfr_unit_roundoff(64)) ==
        tol::gamma(2 * 4 + 2 * 3 + 8, tol::mpfr_unit_roundoff(64)) * (1 + 4 * 2.0));
  CHECK(tol::projection_distance(1e-3, 0.5) == 1e-3 / (0.5 - 1e-3) * factor(2));
  CHECK(tol::projection_distance(0.5, 0.5) == kInf);
  CHECK(tol::projection_distance(0.6, 0.5) == kInf);
  CHECK(tol::projection_distance(0.0, 0.0) == kInf);  // σ_min = 0 = the error: no bound, not 0/0
  {
    const double gq = g(16 * 100 * 4), eps_q = std::sqrt(4.0) * gq;
    const double moved = tol::projection_distance(1e-3 + gq * (10.0 + 1e-3), 0.5);
    CHECK(tol::householder_projection_distance(100, 4, 1e-3, 10.0, 0.5) == (2 * eps_q + eps_q * eps_q + moved) * factor(8));
    // A design exact (error 0): the Householder terms alone.
    const double moved0 = tol::projection_distance(0 + gq * (10.0 + 0), 0.5);
    CHECK(tol::householder_projection_distance(100, 4, 0, 10.0, 0.5) == (2 * eps_q + eps_q * eps_q + moved0) * factor(8));
    const double n = 4.0;
    CHECK(tol::householder_projection_rounding(100, 4, 3) ==
          (g(100 + 4 + 1) * (1 + n * (1 + gq) * (1 + gq)) + g(100 * 3) * (1 + 2 * eps_q + eps_q * eps_q)) * factor(12));
    // A design of 10⁶ × 16, where ε_Q² (≈ 10⁻¹⁴) shows beside 1 + 2ε_Q.
    const double gl = g(16LL * 1000000 * 16), el = std::sqrt(16.0) * gl;
    CHECK(tol::householder_projection_rounding(1000000, 16, 3) ==
          (g(1000000 + 16 + 1) * (1 + 16.0 * (1 + gl) * (1 + gl)) + g(1000000LL * 3) * (1 + 2 * el + el * el)) * factor(12));
  }
  CHECK(tol::projected_residual_error(2.0, 1e-3, 1e-4) == ((1 + 1e-4) * 1e-3 + 1e-4 * 2.0) * factor(4));
  {
    const unsigned bits = 64;
    const double kappa = 10.0 / 0.5, solve = tol::normal_equations_relative_bound(kappa, 100, 4, bits) * 3.0;
    const double apply = tol::gamma(4 + 1, tol::mpfr_unit_roundoff(bits)) * (2.0 + 10.0 * 3.0);
    CHECK(tol::normal_equations_projection_error(bits, 100, 4, 10.0, 0.5, 3.0, 2.0) == (10.0 * solve + apply) * factor(8));
    CHECK(tol::normal_equations_projection_error(bits, 100, 4, 10.0, 0.0, 0.0, 2.0) == kInf);  // σ_min = 0: not ∞·0
  }
  {
    const double e = 1e-4;
    CHECK(tol::polish_gradient_bound(1e-10, 1e-3, 3.0, 5.0, 2.0, e, 1e-13) ==
          (1e-10 + (1e-3 * 5.0 + 3.0) * e + 1e-13 * (1 + 1e-3) * 5.0 * (2.0 + e)) * factor(12));
  }
}

TEST_CASE("the label-noise bounds exactly, and their edges", "[tolerance][terms]") {
  CHECK(tol::chi_square_tail_quantile(16, 3.0) == (16.0 + 2.0 * std::sqrt(16.0 * 3.0) + 2.0 * 3.0) * factor(8));
  {
    const double t = std::log(2.0 / 1e-12), entries = 2.0 * 16;
    const double spread = 1e-4 * std::sqrt(tol::chi_square_tail_quantile(2 * 16, t));
    CHECK(tol::label_noise_row_bound(1e-4, 5.0, 2, 16, 1e-12) ==
          1e-4 * 5.0 * std::sqrt(tol::chi_square_tail_quantile(16, t)) / (std::sqrt(entries) - spread) * factor(24));
    // A spread beyond √(kd)/2: no bound.
    const double at_edge = 0.5 * std::sqrt(entries) / std::sqrt(tol::chi_square_tail_quantile(2 * 16, t));
    CHECK(std::isfinite(tol::label_noise_row_bound(0.5 * at_edge, 5.0, 2, 16, 1e-12)));
    CHECK(tol::label_noise_row_bound(1.5 * at_edge, 5.0, 2, 16, 1e-12) == kInf);  // spread 3/4·√(kd)
    // A spread of exactly √(kd)/2 (a relative level whose product with √q rounds to it) still has a bound.
    const double root_q = std::sqrt(tol::chi_square_tail_quantile(2 * 16, t)), half = 0.5 * std::sqrt(entries);
    double exact = at_edge;
    for (int step = 0; step < 64 && exact * root_q != half; ++step)
      exact = std::nextafter(exact, exact * root_q < half ? kInf : 0.0);
    REQUIRE(exact * root_q == half);
    CHECK(std::isfinite(tol::label_noise_row_bound(exact, 5.0, 2, 16, 1e-12)));
  }
  CHECK(tol::float32_label_rounding_row_bound(3.0, 16) ==
        (0x1p-24 * 3.0 + std::sqrt(16.0) * 0x1p-150) / (1.0 - 0x1p-24) * factor(6));
  CHECK(tol::float32_label_rounding_row_bound(0.0, 16) == (0x1p-24 * 0.0 + 4.0 * 0x1p-150) / (1.0 - 0x1p-24) * factor(6));
  CHECK(tol::residual_rounding_level(1e-28, 4.0) == std::sqrt(1e-28 / 4.0) * factor(4));
  CHECK(tol::residual_rounding_level(1e-28, 0.0) == kInf);
  CHECK(tol::residual_rounding_level(0.0, 0.0) == kInf);  // not √(0/0)
  CHECK(tol::noise_estimate_band(16384, 1024, 2.0) == 6.0 * std::sqrt(2.0 * 2.0 / static_cast<double>(16384 - 1024)));
  CHECK(tol::noise_estimate_band(1024, 1024, 2.0) == kInf);
  CHECK(tol::noise_estimate_band(1024, 1024, 0.0) == kInf);  // not √(0/0)
  CHECK(std::isfinite(tol::noise_estimate_band(1025, 1024, 2.0)));
}

TEST_CASE("the iterative centre's bounds exactly", "[tolerance][terms]") {
  const double relative = 1e-14 + std::sqrt(2.0) * (g(50 + 2 * 4 + 8) + g(16 * 16 * 2)) + 3.0 * g(16 + 5);
  CHECK(tol::iterative_eigen_residual_bound(1e-14, 50, 4, 16, 2, 3.0) == relative * 3.0 * 3.0 * factor(12));
  const double evaluation = g(50 + 2 * 4 + 8) * (3.0 * 2.0 + 3.0 * 3.0 * 5.0);
  CHECK(tol::iterative_point_backward_error(1e-14, 50, 4, 16, 3.0, 2.0, 5.0, 0.25) ==
        ((1e-14 + g(16 + 5)) * 3.0 + evaluation / 0.25) * factor(12));
  CHECK(tol::iterative_point_backward_error(1e-14, 50, 4, 16, 3.0, 2.0, 5.0, 0.0) == kInf);
  CHECK(tol::iterative_point_backward_error(1e-14, 50, 4, 16, 0.0, 0.0, 0.0, 0.0) == kInf);  // not 0/0
}

TEST_CASE("stage 5's membership bounds exactly", "[tolerance][terms]") {
  CHECK(tol::membership_excess_evaluation_error(10, 2.0, -3.0, 0.5) == (g(12) * (2.0 + 3.0) + u * 0.5) * factor(8));
  CHECK(tol::optimum_two_paths_bound(1e-3, 2e-4, 3e-5) == (1e-3 + 2e-4 + 3e-5) * factor(4));
  CHECK(tol::optimum_two_paths_bound(-1e-3, 2e-4, 3e-5) == (0.0 + 2e-4 + 3e-5) * factor(4));  // a negative gap counts 0
  CHECK(tol::membership_hull_point_bound(1e-8, 3.0, 10, 2) == (1e-8 + g(2 * 10 * 2 + 1) * 3.0) * 3.0 * factor(6));
}

TEST_CASE("polishing's held-out residual limit exactly, and its edges", "[tolerance][terms]") {
  const double b_train = tol::noise_estimate_band(4096, 64, 4.0), b_heldout = tol::noise_estimate_band(1024, 0, 4.0);
  const double share = 64.0 / 4096.0;
  CHECK(tol::heldout_residual_limit(1e-3, 1e-4, 4096, 64, 1024) == 1e-3 * std::sqrt((1 + share) * (1 + b_heldout) / (1 - b_train)));
  CHECK(tol::heldout_residual_limit(1e-4, 1e-3, 4096, 64, 1024) == 1e-3 * std::sqrt((1 + share) * (1 + b_heldout) / (1 - b_train)));
  CHECK(tol::heldout_residual_limit(1e-3, 1e-4, 0, 0, 1024) == kInf);
  CHECK(tol::heldout_residual_limit(1e-3, 1e-4, 4096, -1, 1024) == kInf);
  CHECK(tol::heldout_residual_limit(1e-3, 1e-4, 4096, 64, 0) == kInf);
  CHECK(tol::heldout_residual_limit(-1e-3, 1e-4, 4096, 64, 1024) == kInf);
  CHECK(tol::heldout_residual_limit(1e-3, -1e-4, 4096, 64, 1024) == kInf);
  CHECK(tol::heldout_residual_limit(1e-3, 1e-4, 100, 99, 1024) == kInf);  // b_train ≥ 1: too few entries per parameter
  CHECK(tol::heldout_residual_limit(1e-3, 1e-4, 400, 300, 1024) == kInf);  // b_train = 6√(8/100) ≈ 1.7: still none
  CHECK(std::isfinite(tol::heldout_residual_limit(0.0, 0.0, 4096, 0, 1)));
}
