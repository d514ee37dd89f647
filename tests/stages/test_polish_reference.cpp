// The reference gradient norm of polishing's objective (stages/polish/reference.hpp)
// on a case small enough to differentiate by hand.
#include "test_tolerances.hpp"
#include "stages/polish/reference.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace mha;

TEST_CASE("reference_gradient_norm equals the hand-computed ‖Jᵀr‖ / Σ‖Y‖²", "[polish][hardening]") {
  // d = 1, k = 2, one head Θ = θ, W = w, X = (1, −1)ᵀ: the logits are ±θ, so
  // F = w (tanh θ, −tanh θ)ᵀ and dF/dθ = w sech²θ (1, −1)ᵀ; with Y = (y₁, y₂)ᵀ
  // the gradient of ½‖F − Y‖² is w sech²θ (2w tanh θ − y₁ + y₂). At θ = ½,
  // w = 2, Y = (½, ¼)ᵀ that over ‖Y‖² = 5/16 is 8.0455169889644332707 (mpmath, 50 digits).
  Layer layer;
  layer.heads.push_back({MatD::Constant(1, 1, 0.5), MatD::Constant(1, 1, 2.0)});
  MatD x(2, 1), y(2, 1), other(2, 1);
  x << 1, -1;
  y << 0.5, 0.25;
  other << 7, 7;
  const double expected = 8.0455169889644332707;
  const double got = reference_gradient_norm(layer, {x}, {y}, 1, 200);
  CHECK(std::abs(got - expected) <= tolerance::reference_in_double_relative(200, 1000) * expected);
  // Only the first `samples` samples count (the gradient and Σ‖Y‖² alike).
  CHECK(reference_gradient_norm(layer, {x, x}, {y, other}, 1, 200) == got);
  // Two copies of the sample: the gradient and Σ‖Y‖² both double.
  CHECK(std::abs(reference_gradient_norm(layer, {x, x}, {y, y}, 2, 200) - expected) <=
        tolerance::reference_in_double_relative(200, 1000) * expected);
  // At labels the layer fits (Y = fl(F)) the gradient vanishes up to the labels'
  // rounding: |r_a| ≤ 3u|F_a| (tanh to one ulp, times 2 exactly), so the norm is at
  // most w sech²θ · 6u tanhθ·2 / (2 tanh²θ w²) < 5.1u at θ = ½, w = 2.
  MatD fit(2, 1);
  fit << 2 * std::tanh(0.5), -2 * std::tanh(0.5);
  CHECK(reference_gradient_norm(layer, {x}, {fit}, 1, 200) <= 6 * tolerance::kDoubleUnitRoundoff);
  CHECK(reference_gradient_norm(layer, {x}, {y}, 0, 200) == 0.0);
}

TEST_CASE("polishing's objective bound equals its formula on a hand-computed case", "[polish][tolerance]") {
  // d = 1, k = 2, Θ = fl(ln 3), W = 2, X = (1, −1)ᵀ, Y = (1.5, −1.5)ᵀ: F ≈ (1.6, −1.6)ᵀ, so
  // r* ≈ ±0.1 and E = Σr²/ΣY² = 0.00444…; with B = forward_error_bound (pinned in
  // test_forward.cpp, 4.1719735062470508e-15 per entry), b = (B + u(|r*| + B))(1 + γ_5),
  // S = Σ(2|r*|b + b²), g = γ_3, the bound is max(upper − E, E − lower) + uE + γ_8(2⁻¹²⁸)E, times
  // 1 + γ_11 (stages/polish/reference.cpp). Expected: mpmath at 300 bits, rounded once. (Evaluated
  // as upper − E in double, the bound lost ~u·E to cancellation: 0.3% here, more at a better fit.)
  Layer layer;
  layer.heads.push_back({MatD::Constant(1, 1, std::log(3.0)), MatD::Constant(1, 1, 2.0)});
  MatD x(2, 1), y(2, 1);
  x << 1, -1;
  y << 1.5, -1.5;
  const Comparison c = compare_objective(layer, {x}, {y}, 0.0044444444444444502501, 128);
  const double exact = 3.7577641399808092157e-16;
  CHECK(std::abs(c.bound - exact) <= tolerance::gamma(20) * exact);
}

TEST_CASE("polishing's objective check rejects a fast value three bounds away and accepts one half a bound away", "[polish][verify]") {
  // A fault a few bounds out: a bound loosened 10× would accept the first.
  Layer layer;
  layer.heads.push_back({MatD::Constant(1, 1, std::log(3.0)), MatD::Constant(1, 1, 2.0)});
  MatD x(2, 1), y(2, 1);
  x << 1, -1;
  y << 1.5, -1.5;
  const Comparison at_reference = compare_objective(layer, {x}, {y}, 0.0044444444444444502501, 128);
  REQUIRE_FALSE(disagrees(at_reference));
  const double e = 0.0044444444444444502501, b = at_reference.bound;
  CHECK(disagrees(compare_objective(layer, {x}, {y}, e + 3 * b, 128)));
  CHECK(disagrees(compare_objective(layer, {x}, {y}, e - 3 * b, 128)));
  CHECK_FALSE(disagrees(compare_objective(layer, {x}, {y}, e + 0.5 * b, 128)));
}
