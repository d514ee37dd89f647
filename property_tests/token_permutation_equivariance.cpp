// Claim (MATH.md §1): permuting the tokens permutes the output rows,
//   F(P X) = P F(X)  for every permutation matrix P,
// because the logits of PX are P L Pᵀ, row softmax commutes with that, and
// (P A Pᵀ)(P X) W = P (A X W). Proof: proofs/permutation_symmetries.md.
// Checked on the fast path: both sides are within forward_error_bound of the
// exact values, so they differ by at most the sum of the two bounds.
// Test of the tester: a forward pass with a causal mask (token a attends only
// to tokens j ≤ a) is rejected.
#include "generators.hpp"
#include "model/forward_error.hpp"
#include "model/forward_fast.hpp"
#include "numeric/softmax.hpp"
#include "property.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>

using namespace mha;

namespace {

using TokenForward = std::function<MatD(const Layer&, const MatD&)>;

MatD fast_token_forward(const Layer& layer, const MatD& x) {
  std::vector<double> scratch;
  MatD y(x.rows(), layer.d());
  RC_ASSERT(FastForward(layer).forward_dense(x.data(), static_cast<int>(x.rows()), y.data(), scratch));
  return y;
}

// Mistake: a causal (decoder) mask, token a attends only to tokens j ≤ a.
MatD causal_forward(const Layer& layer, const MatD& x) {
  MatD y = MatD::Zero(x.rows(), layer.d());
  for (const auto& h : layer.heads) {
    MatD logits = x * h.theta * x.transpose();
    for (Eigen::Index a = 0; a < x.rows(); ++a)
      for (Eigen::Index j = a + 1; j < x.rows(); ++j) logits(a, j) = -std::numeric_limits<double>::infinity();
    y += softmax_rows<double>(logits) * x * h.w;
  }
  return y;
}

auto permutes_output_rows(const TokenForward& forward) {
  return [forward] {
    const auto c = *mha::test::gen_layer_case(6, 20, 3).as("case");
    const InputKind kind = *rc::gen::element(InputKind::boolean, InputKind::gaussian);
    const Layer layer = mha::test::make_layer(c);
    const MatD x = mha::test::make_input(c, kind, 0);
    std::vector<int> perm(c.shape.k);
    std::iota(perm.begin(), perm.end(), 0);
    const auto order = *rc::gen::container<std::vector<int>>(c.shape.k, rc::gen::inRange(0, 1 << 20));
    std::sort(perm.begin(), perm.end(), [&](int a, int b) { return order[a] != order[b] ? order[a] < order[b] : a < b; });
    MatD px(x.rows(), x.cols());
    for (int t = 0; t < c.shape.k; ++t) px.row(t) = x.row(perm[t]);

    const MatD y = forward(layer, x), py = forward(layer, px);
    const MatD bx = forward_error_bound(layer, x), bpx = forward_error_bound(layer, px);
    for (int t = 0; t < c.shape.k; ++t)
      for (int j = 0; j < c.shape.d; ++j)
        RC_ASSERT(std::abs(py(t, j) - y(perm[t], j)) <= bpx(t, j) + bx(perm[t], j));
  };
}

}  // namespace

TEST_CASE("permuting tokens permutes the output rows", "[property][symmetry]") {
  mha::test::property("F(PX) = P F(X) on the fast path, within two forward error bounds", 300,
                      permutes_output_rows(fast_token_forward));
}

TEST_CASE("test of the tester: token permutation rejects a causal mask", "[property][symmetry][tester]") {
  mha::test::property_rejects("forward pass with a causal mask", 40, permutes_output_rows(causal_forward));
}
