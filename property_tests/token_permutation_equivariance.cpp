// Claim (MATH.md §1): permuting the tokens permutes the output rows,
//   F(P X) = P F(X)  for every permutation matrix P,
// because the logits of PX are P L Pᵀ, row softmax commutes with that, and
// (P A Pᵀ)(P X) W = P (A X W). Proof: proofs/permutation_symmetries.md.
// Checked on the fast path: both sides are within forward_error_bound of the
// exact values, so they differ by at most the sum of the two bounds.
#include "generators.hpp"
#include "model/forward_error.hpp"
#include "model/forward_fast.hpp"
#include "property.hpp"

#include <algorithm>
#include <numeric>

using namespace mha;

TEST_CASE("permuting tokens permutes the output rows", "[property][symmetry]") {
  mha::test::property("F(PX) = P F(X) on the fast path, within two forward error bounds", 300, [] {
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

    const FastForward fast(layer);
    std::vector<double> scratch;
    MatD y(c.shape.k, c.shape.d), py(c.shape.k, c.shape.d);
    RC_ASSERT(fast.forward_dense(x.data(), c.shape.k, y.data(), scratch));
    RC_ASSERT(fast.forward_dense(px.data(), c.shape.k, py.data(), scratch));
    const MatD bx = forward_error_bound(layer, x), bpx = forward_error_bound(layer, px);
    for (int t = 0; t < c.shape.k; ++t)
      for (int j = 0; j < c.shape.d; ++j)
        RC_ASSERT(std::abs(py(t, j) - y(perm[t], j)) <= bpx(t, j) + bx(perm[t], j));
  });
}
