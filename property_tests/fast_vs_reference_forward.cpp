// Claim: the fast forward pass (double, bit-packed tables, any thread count)
// agrees with the MPFR reference within the a priori bound of
// proofs/forward_error_bound.md:
//   |F_fast(X) − F(X)| ≤ forward_error_bound(X)  entrywise,
// and the reference at p ≥ 200 bits is within 2^{40}·2^{−p}·Σ_i max|X W_i| of F
// (same analysis, n ≤ 2^{40} terms), then rounded to double (half an ulp).
#include "numeric/tolerance.hpp"
#include "data/inputs.hpp"
#include "generators.hpp"
#include "model/forward_error.hpp"
#include "model/forward_fast.hpp"
#include "model/reference.hpp"
#include "numeric/precision.hpp"
#include "property.hpp"

#include <cmath>

using namespace mha;

namespace {
void check_against_reference(const Layer& layer, const MatD& x, const MatD& fast) {
  ScopedPrecision precision(200);
  const MatD ref = to_double_matrix(forward_reference<Mpfr>(convert_layer<Mpfr>(layer), cast_matrix<Mpfr>(x)));
  double z_scale = 0;
  for (const auto& h : layer.heads) z_scale += (x * h.w).cwiseAbs().maxCoeff();
  const double mpfr_allowance = std::ldexp(z_scale, 40 - 200);
  const MatD bound = forward_error_bound(layer, x) + ref.cwiseAbs() * tolerance::kDoubleUnitRoundoff +
                     MatD::Constant(x.rows(), layer.d(), mpfr_allowance);
  const MatD excess = (fast - ref).cwiseAbs() - bound;
  RC_ASSERT(fast.allFinite());
  RC_ASSERT(excess.maxCoeff() <= 0.0);
}
}  // namespace

TEST_CASE("fast forward agrees with the MPFR reference within the derived bound", "[property][forward]") {
  mha::test::property("Boolean inputs through the bit-packed tables", 150, [] {
    const auto c = *mha::test::gen_layer_case(5, 40, 3).as("case");
    const Layer layer = mha::test::make_layer(c);
    const InputBatch batch = draw_inputs(c.seed, Stream::test_inputs, InputKind::boolean, c.shape.k, c.shape.d, 7, 3, 1);
    const FastForwardResult fast = FastForward(layer).run(batch, 1);
    RC_ASSERT(fast.status.ok());
    const std::vector<double>& y = fast.y;
    for (int64_t i = 0; i < batch.count; ++i)
      check_against_reference(layer, batch.sample(i), Eigen::Map<const MatD>(y.data() + i * c.shape.k * c.shape.d, c.shape.k, c.shape.d));
  });
  mha::test::property("Gaussian inputs through the dense path", 150, [] {
    const auto c = *mha::test::gen_layer_case(5, 40, 3).as("case");
    const Layer layer = mha::test::make_layer(c);
    const InputBatch batch = draw_inputs(c.seed, Stream::test_inputs, InputKind::gaussian, c.shape.k, c.shape.d, 7, 3, 1);
    const FastForwardResult fast = FastForward(layer).run(batch, 1);
    RC_ASSERT(fast.status.ok());
    const std::vector<double>& y = fast.y;
    for (int64_t i = 0; i < batch.count; ++i)
      check_against_reference(layer, batch.sample(i), Eigen::Map<const MatD>(y.data() + i * c.shape.k * c.shape.d, c.shape.k, c.shape.d));
  });
}
