// Claim: the fast forward pass (double, bit-packed tables for Boolean inputs, the
// dense path for Gaussian ones, any thread count) agrees with the MPFR reference
// within the a priori bound of proofs/forward_error_bound.md:
//   |F_fast(X) − F(X)| ≤ forward_error_bound(X)  entrywise,
// the reference at p bits being within 2^{40−p}·Σ_i max|X W_i| of F, then rounded
// to double (half an ulp). The comparison is check_forward (model/forward_check.hpp),
// which `mhalearn verify forward`, `demo` and the learner run. Tests of the tester:
// one output entry scaled by 1 + 10⁻¹², and a fast pass whose logits lose their
// last bit (a softmax fed with logits rounded to float) are rejected.
#include "generators.hpp"
#include "model/forward_check.hpp"
#include "model/forward_fast.hpp"
#include "property.hpp"

using namespace mha;

namespace {

auto forward_agrees(InputKind kind, const ForwardFast& fast) {
  return [kind, fast] {
    const auto c = *mha::test::gen_layer_case(5, 40, 3).as("case");
    const Layer layer = mha::test::make_layer(c);
    const InputBatch batch = draw_inputs(c.seed, Stream::test_inputs, kind, c.shape.k, c.shape.d, 7, 3, 1);
    RC_PRE(FastForward(layer).run(batch, 1).status.ok());  // the fast path answers (huge-logit flavours may not)
    const Comparison row = check_forward(layer, batch, fast);
    RC_LOG() << format_table({row});
    RC_ASSERT(row.compared > 0);
    RC_ASSERT(!disagrees(row));
  };
}

std::vector<double> one_entry_scaled(const Layer& layer, const InputBatch& batch) {
  std::vector<double> y = forward_fast_batch(layer, batch);
  y[0] *= 1 + 1e-12;
  return y;
}

// The same layer with every Θ rounded to float: logits off by ~2⁻²⁴ relative.
std::vector<double> float_logits(const Layer& layer, const InputBatch& batch) {
  Layer rounded = layer;
  for (auto& h : rounded.heads) h.theta = h.theta.cast<float>().cast<double>();
  return forward_fast_batch(rounded, batch);
}

}  // namespace

TEST_CASE("fast forward agrees with the MPFR reference within the derived bound", "[property][forward]") {
  mha::test::property("Boolean inputs through the bit-packed tables", 150,
                      forward_agrees(InputKind::boolean, forward_fast_batch));
  mha::test::property("Gaussian inputs through the dense path", 150, forward_agrees(InputKind::gaussian, forward_fast_batch));
}

TEST_CASE("the forward cross-check rejects a scaled output and logits rounded to float", "[property][forward]") {
  mha::test::property_rejects("one output entry scaled by 1 + 1e-12", 20, forward_agrees(InputKind::boolean, one_entry_scaled));
  mha::test::property_rejects("Θ rounded to float", 20, forward_agrees(InputKind::gaussian, float_logits));
}
