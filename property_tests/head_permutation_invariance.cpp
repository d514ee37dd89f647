// Claim (MATH.md §1): F is invariant to the order of the heads, the layer's
// only symmetry for inputs in general position. Proof and the floating-point
// statement: proofs/permutation_symmetries.md.
//
// Checked for a random permutation π of the heads, on the fast path:
//  1. against the reference path: F̂ of the permuted layer is within the
//     a priori forward_error_bound of the MPFR F of the *original* layer
//     (proofs/forward_error_bound.md, the bound holds for any summation order);
//  2. against the unpermuted fast pass, to the last bits: permuting the heads
//     leaves every per-head product bitwise unchanged and reorders only the
//     m k terms of each output sum, so the two differ by at most
//     tolerance::head_reorder_bound = 2γ_{mk−1}·(absolute sum of the terms).
// Coverage is required, not just classified: enough cases with m ≥ 2 and a
// permutation that moves a head. Tests of the tester: a pass that permutes the
// Θ_i but not the W_i, and one whose heads are weighted by 1 + 2⁻⁴⁶·i (an order
// dependence of about one part in 10¹⁴) or by 1 + 2⁻⁵⁰·i (a few units in the
// last place: only check 2 can see it), must all be rejected.
#include "generators.hpp"
#include "model/forward_error.hpp"
#include "model/forward_fast.hpp"
#include "model/reference.hpp"
#include "numeric/precision.hpp"
#include "test_tolerances.hpp"
#include "property.hpp"

#include <cmath>
#include <functional>
#include <numeric>

using namespace mha;

namespace {

using Forward = std::function<MatD(const Layer&, const MatD&)>;
// The layer whose head i is the original's head π(i) (the wrong variant below
// pairs them differently).
using Permute = std::function<Layer(const Layer&, const std::vector<int>&)>;

MatD fast_forward(const Layer& layer, const MatD& x) {
  std::vector<double> scratch;
  MatD y(x.rows(), layer.d());
  RC_ASSERT(FastForward(layer).forward_dense(x.data(), static_cast<int>(x.rows()), y.data(), scratch));
  return y;
}

Layer permute_heads(const Layer& layer, const std::vector<int>& pi) {
  Layer out = layer;
  for (size_t i = 0; i < pi.size(); ++i) out.heads[i] = layer.heads[pi[i]];
  return out;
}

struct PermutationCounts {
  int cases{0}, moved{0}, bits_changed{0};
};

// The property; returns through RC_ASSERT. `counts` (may be null) records coverage.
void check_head_permutation(const Forward& forward, const Permute& permute, PermutationCounts* counts) {
  const auto c = *mha::test::gen_layer_case(6, 20, 4).as("case");
  const InputKind kind = *rc::gen::element(InputKind::boolean, InputKind::gaussian).as("inputs");
  const int m = c.shape.m, k = c.shape.k, d = c.shape.d;
  // A uniform permutation (Fisher–Yates with generated indices).
  std::vector<int> pi(m);
  std::iota(pi.begin(), pi.end(), 0);
  for (int i = m - 1; i > 0; --i) std::swap(pi[i], pi[*rc::gen::inRange(0, i + 1)]);
  RC_TAG(m);
  const Layer layer = mha::test::make_layer(c);
  const Layer permuted = permute(layer, pi);
  const MatD x = mha::test::make_input(c, kind, 1);
  const MatD y = forward(layer, x), yp = forward(permuted, x);
  RC_ASSERT(y.allFinite() && yp.allFinite());

  // 1. Against the MPFR reference of the original layer, as in
  //    property_tests/fast_vs_reference_forward.cpp (proofs/forward_error_bound.md).
  MatD ref;
  {
    ScopedPrecision precision(200);
    ref = to_double_matrix(forward_reference<Mpfr>(convert_layer<Mpfr>(layer), cast_matrix<Mpfr>(x)));
  }
  double z_scale = 0;
  for (const auto& h : layer.heads) z_scale += (x * h.w).cwiseAbs().maxCoeff();
  const MatD reference_bound = forward_error_bound(permuted, x) + ref.cwiseAbs() * tolerance::kDoubleUnitRoundoff +
                               MatD::Constant(k, d, std::ldexp(z_scale, 40 - 200));
  RC_ASSERT(((yp - ref).cwiseAbs() - reference_bound).maxCoeff() <= 0.0);

  // 2. Against the unpermuted fast pass: only the order of the m k terms differs.
  const MatD xa = x.cwiseAbs();
  for (int col = 0; col < d; ++col) {
    double abs_z_sum = 0;  // Σ_i max_b (|X||W_i|)[b,c]
    for (const auto& h : layer.heads) abs_z_sum += (xa * h.w.col(col).cwiseAbs()).maxCoeff();
    const double bound = tolerance::head_reorder_bound(m, k, d, abs_z_sum);
    for (int a = 0; a < k; ++a) RC_ASSERT(std::abs(yp(a, col) - y(a, col)) <= bound);
  }
  if (counts) {
    ++counts->cases;
    bool moved = false;
    for (int i = 0; i < m; ++i) moved |= pi[i] != i;
    if (moved) ++counts->moved;
    if (y != yp) ++counts->bits_changed;
  }
}

}  // namespace

TEST_CASE("permuting heads leaves F unchanged", "[property][symmetry]") {
  PermutationCounts counts;
  const int cases = 300;
  mha::test::property("F with heads permuted: the MPFR F within the forward bound, the unpermuted pass within 2γ_{mk-1}·Σ|terms|",
                      cases, [&] { check_head_permutation(fast_forward, permute_heads, &counts); });
  // Required coverage: the generator draws m ∈ {1..4} uniformly, and a uniform
  // permutation of m ≥ 2 heads moves one with probability ≥ 1/2, so about 3/8
  // of the cases move a head (≥ 1/4 fails with probability < 1e-9 at 300 cases,
  // Hoeffding). Reordering must also have changed some output's bits, or
  // check 2 never saw a nonzero difference.
  const int scale = mha::test::property_scale();
  WARN("head permutation: " << counts.cases << " cases, " << counts.moved << " moved a head, " << counts.bits_changed
                            << " changed some output bits");
  REQUIRE(counts.cases == cases * scale);
  REQUIRE(counts.moved >= cases * scale / 4);
  REQUIRE(counts.bits_changed >= 1);
}

TEST_CASE("test of the tester: head permutation rejects order-dependent passes", "[property][symmetry][tester]") {
  // Permutes the Θ_i but leaves the W_i in place: head i becomes (Θ_π(i), W_i).
  const Permute mispaired = [](const Layer& layer, const std::vector<int>& pi) {
    Layer out = layer;
    for (size_t i = 0; i < pi.size(); ++i) out.heads[i].theta = layer.heads[pi[i]].theta;
    return out;
  };
  mha::test::property_rejects("heads permuted as (Theta_pi(i), W_i)", 300,
                              [&] { check_head_permutation(fast_forward, mispaired, nullptr); });
  // A pass that weights head i by 1 + 2^-46·i: it depends on the order of the
  // heads by about one part in 10^14, below the forward error bound (the old
  // check's tolerance, typically 10^-13 .. 10^-12 relative) but above 2γ_{mk-1}.
  const Forward order_dependent = [](const Layer& layer, const MatD& x) {
    Layer scaled = layer;
    for (int i = 0; i < layer.m(); ++i) scaled.heads[i].w *= 1 + std::ldexp(double(i), -46);
    return fast_forward(scaled, x);
  };
  mha::test::property_rejects("heads weighted by 1 + 2^-46 i", 300,
                              [&] { check_head_permutation(order_dependent, permute_heads, nullptr); });
  // At 1 + 2^-50·i (a few units in the last place) only check 2 can see it:
  // the forward error bound is at least γ_{mk}·|output| (proofs/forward_error_bound.md).
  const Forward last_bits = [](const Layer& layer, const MatD& x) {
    Layer scaled = layer;
    for (int i = 0; i < layer.m(); ++i) scaled.heads[i].w *= 1 + std::ldexp(double(i), -50);
    return fast_forward(scaled, x);
  };
  mha::test::property_rejects("heads weighted by 1 + 2^-50 i", 300,
                              [&] { check_head_permutation(last_bits, permute_heads, nullptr); });
}
