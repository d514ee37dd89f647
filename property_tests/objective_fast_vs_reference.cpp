// Polishing's objective E = Σ‖F(X) − Y‖²/Σ‖Y‖² on the fast path (double
// forward pass) against MPFR on the same samples, within the bound derived from
// forward_error_bound (stages/polish/reference.hpp; proofs/attention_jacobian.md,
// "The objective in MPFR"). Layers are random; labels come from the layer moved
// by a relative 0, 1e−10 or 1e−4, so E ranges from exactly 0 up. Tests of the
// tester: E scaled by 1 + 10⁻⁸, and E with one sample left out, are rejected.
#include "generators.hpp"
#include "model/forward_fast.hpp"
#include "property.hpp"
#include "stages/polish/check.hpp"
#include "stages/polish/reference.hpp"

#include <functional>

using namespace mha;

namespace {
// The fast objective, given the per-sample squared errors and label norms.
using FastObjective = std::function<double(const std::vector<double>& errors, const std::vector<double>& y_norms)>;

double objective(const std::vector<double>& errors, const std::vector<double>& y_norms) {
  double e = 0, y = 0;
  for (size_t s = 0; s < errors.size(); ++s) {
    e += errors[s];
    y += y_norms[s];
  }
  return e / y;
}

auto objective_agrees(const FastObjective& fast) {
  return [fast] {
    auto c = *test::gen_layer_case(4, 8, 3).as("case");
    const Layer layer = test::make_layer(c);
    const int k = c.shape.k, d = c.shape.d;
    const double move = *rc::gen::element(0.0, 1e-10, 1e-4).as("label layer's relative move");
    Layer labeller = layer;
    for (auto& h : labeller.heads) h.w *= 1 + move;
    const InputKind kind = *rc::gen::element(InputKind::boolean, InputKind::gaussian).as("inputs");
    const int samples = *rc::gen::inRange(1, 40).as("samples");
    std::vector<MatD> xs, ys;
    std::vector<double> errors, y_norms;
    std::vector<double> scratch;
    for (int n = 0; n < samples; ++n) {
      const MatD x = test::make_input(c, kind, n);
      MatD y(k, d), f(k, d);
      RC_PRE(FastForward(labeller).forward_dense(x.data(), k, y.data(), scratch));
      RC_PRE(FastForward(layer).forward_dense(x.data(), k, f.data(), scratch));
      xs.push_back(x);
      ys.push_back(y);
      errors.push_back(squared_error_fast(layer, x, y));  // the fast path check_polish runs
      y_norms.push_back(y.squaredNorm());
    }
    double y_total = 0;
    for (double v : y_norms) y_total += v;
    RC_PRE(y_total > 0);
    const Comparison cmp = compare_objective(layer, xs, ys, fast(errors, y_norms), 128);
    RC_LOG() << cmp.detail << ": difference " << cmp.max_difference << " vs bound " << cmp.bound << "\n";
    RC_ASSERT(cmp.agree);
  };
}
}  // namespace

TEST_CASE("polishing's objective: fast within the derived bound of MPFR on the same samples", "[property][polish]") {
  mha::test::property("objective fast vs MPFR", 80, objective_agrees(objective));
}

TEST_CASE("objective cross-check rejects a scaled objective and a dropped sample", "[property][polish]") {
  mha::test::property_rejects("objective × (1 + 1e-8)", 40, objective_agrees([](const auto& e, const auto& y) {
                                return objective(e, y) * (1 + 1e-8);
                              }));
  mha::test::property_rejects("last sample left out of the numerator", 40, objective_agrees([](auto e, const auto& y) {
                                e.back() = 0;
                                return objective(e, y);
                              }));
}
