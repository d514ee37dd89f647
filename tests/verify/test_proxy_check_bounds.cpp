// Stage 3's proxy row (src/stages/stage3/check.hpp): the active normals' condition
// number and the band of K's emptiness decision, pinned to their formulas on
// hand-made slabs whose singular values are known exactly.
#include "numeric/tolerance.hpp"
#include "stages/stage3/check.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

using namespace mha;
namespace tol = mha::tolerance;

namespace {

// Slabs in R³ with normals 3e₀, e₁ and 2e₂ (b = 0, η = 1), in that order: any subset's
// singular values are its normals' lengths, exactly.
ConvexBody proxy_test_body() {
  ConvexBody body(3, 10.0);
  body.add({{3.0, 0.0, 0.0}, 0.0, 1.0});
  body.add({{0.0, 1.0, 0.0}, 0.0, 1.0});
  body.add({{0.0, 0.0, 2.0}, 0.0, 1.0});
  return body;
}

}  // namespace

TEST_CASE("stage 3's proxy: the active normals' condition is (σ_max + δ)/(σ_min − δ)", "[verify][stage3]") {
  const ConvexBody body = proxy_test_body();
  // Constraints 0/1 are slab 0's two sides, 2/3 slab 1's: {1, 2} is slabs 0 and 1, σ = 3 and 1.
  const double delta = tol::jacobi_singular_value_bound(3, 2) * 3.0;
  CHECK(active_condition(body, {1, 2}) == (3.0 + delta) / (1.0 - delta));
  CHECK(active_condition(body, {1, 2}) > 3.0);  // δ shows: above the exact κ = 3
  // One normal: κ = 1, widened by δ on both sides.
  const double delta1 = tol::jacobi_singular_value_bound(3, 1) * 3.0;
  CHECK(active_condition(body, {0}) == (3.0 + delta1) / (3.0 - delta1));
  // Nothing active: 1. The same slab twice (both sides active would not happen; two
  // parallel rows here): σ_min = 0, +∞.
  CHECK(active_condition(body, {}) == 1.0);
  CHECK(active_condition(body, {0, 1}) == std::numeric_limits<double>::infinity());
  // Slabs 0 and 2 (constraints 1 and 4: index / 2), σ = 3 and 2; all three, σ = 3, 2, 1.
  CHECK(active_condition(body, {1, 4}) == (3.0 + delta) / (2.0 - delta));
  const double delta3 = tol::jacobi_singular_value_bound(3, 3) * 3.0;
  CHECK(active_condition(body, {0, 2, 5}) == (3.0 + delta3) / (1.0 - delta3));
}

TEST_CASE("stage 3's proxy: an active slab with a zero normal is infinitely ill-conditioned, not 0/0", "[verify][stage3]") {
  // σ_max = σ_min = 0 and δ = 0: the condition is +∞ by the `σ_min − δ > 0` test, where the
  // quotient (0 + 0)/0 would be NaN.
  ConvexBody body(2, 10.0);
  body.add({{0.0, 0.0}, 0.0, 1.0});
  CHECK(active_condition(body, {0}) == std::numeric_limits<double>::infinity());
  CHECK(active_condition(body, {1}) == std::numeric_limits<double>::infinity());
}

TEST_CASE("stage 3's proxy: the ball's band is the point's bound plus u(‖θ_ref‖ + R)", "[verify][stage3]") {
  const double u = tol::kDoubleUnitRoundoff;
  CHECK(ball_side_band(1e-10, 4.0, 10.0) == 1e-10 + u * (4.0 + 10.0));
  CHECK(ball_side_band(0.0, 4.0, 10.0) == u * 14.0);
  CHECK(ball_side_band(0.0, 0.0, 10.0) == u * 10.0);
  CHECK(ball_side_band(0.0, 4.0, 0.0) == u * 4.0);
}
