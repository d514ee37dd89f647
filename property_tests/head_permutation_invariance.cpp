// Claim (MATH.md §1): F is invariant to the order of the heads, the layer's
// only symmetry for inputs in general position. F is a sum over heads, so
// reordering it changes only the floating-point summation order.
// Proof: proofs/permutation_symmetries.md. Both orders are within
// forward_error_bound of the exact F (the bound holds for any summation order).
#include "generators.hpp"
#include "model/forward_error.hpp"
#include "model/forward_fast.hpp"
#include "property.hpp"

#include <algorithm>

using namespace mha;

TEST_CASE("permuting heads leaves F unchanged", "[property][symmetry]") {
  mha::test::property("F with heads reversed equals F, within two forward error bounds", 300, [] {
    const auto c = *mha::test::gen_layer_case(6, 20, 4).as("case");
    const InputKind kind = *rc::gen::element(InputKind::boolean, InputKind::gaussian);
    const Layer layer = mha::test::make_layer(c);
    Layer reversed = layer;
    std::reverse(reversed.heads.begin(), reversed.heads.end());
    const MatD x = mha::test::make_input(c, kind, 1);
    std::vector<double> scratch;
    MatD y(c.shape.k, c.shape.d), yr(c.shape.k, c.shape.d);
    RC_ASSERT(FastForward(layer).forward_dense(x.data(), c.shape.k, y.data(), scratch));
    RC_ASSERT(FastForward(reversed).forward_dense(x.data(), c.shape.k, yr.data(), scratch));
    const MatD b = forward_error_bound(layer, x);
    RC_ASSERT(((y - yr).cwiseAbs() - 2 * b).maxCoeff() <= 0.0);
  });
}
