// Claim: the fast forward pass (double, bit-packed tables for Boolean inputs, the
// dense path for Gaussian ones, any thread count) agrees with the MPFR reference
// within the a priori bound of proofs/forward_error_bound.md:
//   |F_fast(X) − F(X)| ≤ forward_error_bound(X)  entrywise,
// the reference at p bits being within 2^{40−p}·Σ_i max|X W_i| of F, then rounded
// to double (half an ulp). The comparison is check_forward (model/forward_check.hpp),
// which `mhalearn verify forward`, `demo` and the learner run. Tests of the tester:
// one output entry scaled by 1 + 10⁻¹², and a fast pass whose logits lose their
// last bit (a softmax fed with logits rounded to float) are rejected.
//
// Gaussian inputs' magnitude (MATH.md §3.10, Lemma 3.10.2; proofs/gaussian_inputs.md):
// where a Boolean entry has |x| = 1, the oracle's overflow guard (data/oracle.cpp,
// max_abs_oracle_input) takes |x| ≤ 9.5 for Gaussian inputs. Box–Muller
// (numeric/rng.cpp) makes |x| ≤ r = sqrt(−2 ln u), u = u01(w) = w·2⁻⁶⁴ + 2⁻⁶⁵ ≥ 2⁻⁶⁵
// (Random123), so every entry is at most sqrt(130 ln 2) ≈ 9.4925, attained near
// w = 0. The property draws the radius word w from 0, small words and arbitrary
// ones (likewise the angle word); tests of the tester: the bound 9.49 (below the extreme) and the Boolean
// bound 1 are rejected, so the property reaches the tail the guard is about.
#include "data/oracle.hpp"
#include "generators.hpp"
#include "model/forward_check.hpp"
#include "model/forward_fast.hpp"
#include "property.hpp"

#include <Random123/boxmuller.hpp>

#include <cmath>

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

// Every entry Box–Muller makes from (u0, u1) (u1 the radius word) is at most `bound`.
auto gaussian_entries_within(double bound) {
  return [bound] {
    // Words 0 and small ones too: the radius is largest at u1 = 0, cos(π·uneg11(u0)) nearest 1 at u0 = 0.
    const auto word = [](const char* name) {
      const int kind = *rc::gen::inRange(0, 3).as(name);
      return kind == 0 ? uint64_t{0} : kind == 1 ? *rc::gen::inRange<uint64_t>(0, 1u << 20) : *rc::gen::arbitrary<uint64_t>();
    };
    const uint64_t u0 = word("angle word: 0, small, any"), u1 = word("radius word: 0, small, any");
    const r123::double2 z = r123::boxmuller(u0, u1);
    RC_ASSERT(std::abs(z.x) <= bound);
    RC_ASSERT(std::abs(z.y) <= bound);
  };
}

}  // namespace

TEST_CASE("Gaussian inputs: every entry the generator can make is within the overflow guard's 9.5",
          "[property][forward][gaussian]") {
  const double guard = max_abs_oracle_input(InputKind::gaussian);
  mha::test::property("|Box-Muller entry| <= max_abs_oracle_input(gaussian)", 300, gaussian_entries_within(guard));
  // The extreme, u = 2^-65: sqrt(130 ln 2) to a few ulps (log, sqrt and the product each round once).
  const r123::double2 edge = r123::boxmuller(uint64_t{0}, uint64_t{0});
  const double radius = std::sqrt(130.0 * std::log(2.0));
  CHECK(std::abs(std::hypot(edge.x, edge.y) - radius) <= 8 * tolerance::kDoubleUnitRoundoff * radius);
  CHECK(radius < guard);
  // Every entry the oracle drew here is within it too.
  const InputBatch batch = draw_inputs(1, Stream::test_inputs, InputKind::gaussian, 4, 64, 0, 4096, 1);
  CHECK(Eigen::Map<const Eigen::VectorXd>(batch.values.data(), Eigen::Index(batch.values.size())).cwiseAbs().maxCoeff() <= guard);
  mha::test::property_rejects("the bound 9.49, below the extreme", 300, gaussian_entries_within(9.49));
  mha::test::property_rejects("the Boolean bound 1", 300, gaussian_entries_within(1.0));
}

TEST_CASE("fast forward agrees with the MPFR reference within the derived bound", "[property][forward]") {
  mha::test::property("Boolean inputs through the bit-packed tables", 150,
                      forward_agrees(InputKind::boolean, forward_fast_batch));
  mha::test::property("Gaussian inputs through the dense path", 150, forward_agrees(InputKind::gaussian, forward_fast_batch));
}

TEST_CASE("the forward cross-check rejects a scaled output and logits rounded to float", "[property][forward]") {
  mha::test::property_rejects("one output entry scaled by 1 + 1e-12", 20, forward_agrees(InputKind::boolean, one_entry_scaled));
  mha::test::property_rejects("Θ rounded to float", 20, forward_agrees(InputKind::gaussian, float_logits));
}
