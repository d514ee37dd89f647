// Polishing's objective E = Σ‖F(X) − Y‖²/Σ‖Y‖² as polish.cpp evaluates it
// (polish_iteration's `objective`: the design route D(Θ)Ŵ − Y, Ŵ by least
// squares) against MPFR on the same samples at the same layer (Θ, Ŵ), within
// the bound built from design_route_error_bound (stages/polish/reference.hpp;
// proofs/attention_jacobian.md, "The objective in MPFR"). Layers are random;
// labels come from the layer with Θ moved by a relative 0, 1e−10 or 1e−4, so E ranges
// from rounding up. Tests of the tester: E scaled by 1 + 10⁻⁸, and E computed
// with one sample left out, are rejected.
#include "generators.hpp"
#include "model/forward_fast.hpp"
#include "property.hpp"
#include "stages/polish/polish.hpp"
#include "stages/polish/reference.hpp"

#include <functional>

using namespace mha;

namespace {

// The fast objective from polish_iteration on the batch (the wrong copies change it).
using ObjectiveOf = std::function<double(const LabelledBatch& batch, const Layer& start, Layer& at)>;

LabelledBatch objective_batch(const std::vector<MatD>& xs, const std::vector<MatD>& ys) {
  const int k = static_cast<int>(xs.front().rows()), d = static_cast<int>(xs.front().cols());
  std::vector<double> values;
  LabelledBatch b;
  for (size_t n = 0; n < xs.size(); ++n) {
    values.insert(values.end(), xs[n].data(), xs[n].data() + xs[n].size());
    b.y.insert(b.y.end(), ys[n].data(), ys[n].data() + ys[n].size());
  }
  b.x = dense_batch_from_values(values, static_cast<int64_t>(xs.size()), k, d);
  return b;
}

double iteration_objective(const LabelledBatch& batch, const Layer& start, Layer& at) {
  const PolishIteration it = polish_iteration(batch, start, PolishOptions{});
  at = it.start;
  return it.objective;
}

auto objective_agrees(const ObjectiveOf& fast) {
  return [fast] {
    auto c = *test::gen_layer_case(4, 8, 3).as("case");
    const Layer layer = test::make_layer(c);
    const int k = c.shape.k, d = c.shape.d, m = c.shape.m;
    const double move = *rc::gen::element(0.0, 1e-10, 1e-4).as("label layer's relative move");
    Layer labeller = layer;
    // Θ is moved, not W: polish re-solves W by least squares, which would undo a move of W.
    for (auto& h : labeller.heads) h.theta *= 1 + move;
    const InputKind kind = *rc::gen::element(InputKind::boolean, InputKind::gaussian).as("inputs");
    const int rank = (m * d + k - 1) / k;  // N·k ≥ m·d: a design that can have full rank
    const int samples = *rc::gen::inRange(rank + 1, rank + 24).as("samples");
    std::vector<MatD> xs, ys;
    std::vector<double> scratch;
    for (int n = 0; n < samples; ++n) {
      const MatD x = test::make_input(c, kind, n);
      MatD y(k, d);
      RC_PRE(FastForward(labeller).forward_dense(x.data(), k, y.data(), scratch));
      xs.push_back(x);
      ys.push_back(y);
    }
    Layer at;
    const double objective = fast(objective_batch(xs, ys), layer, at);
    RC_PRE(std::isfinite(objective));  // a rank-deficient design has no objective to compare
    const Comparison cmp = compare_objective(at, xs, ys, objective, 128, design_route_bound);
    RC_LOG() << cmp.detail << ": difference " << cmp.max_difference << " vs bound " << cmp.bound << "\n";
    RC_ASSERT(cmp.agree);
  };
}

}  // namespace

TEST_CASE("polishing's objective: fast within the derived bound of MPFR on the same samples", "[property][polish]") {
  mha::test::property("objective fast vs MPFR", 80, objective_agrees(iteration_objective));
}

TEST_CASE("objective cross-check rejects a scaled objective and a dropped sample", "[property][polish]") {
  mha::test::property_rejects("objective × (1 + 1e-8)", 40,
                              objective_agrees([](const LabelledBatch& b, const Layer& start, Layer& at) {
                                return iteration_objective(b, start, at) * (1 + 1e-8);
                              }));
  mha::test::property_rejects("last sample left out of the objective", 40,
                              objective_agrees([](LabelledBatch b, const Layer& start, Layer& at) {
                                b.x.count -= 1;  // polish sees one sample fewer than the reference
                                b.x.values.resize(static_cast<size_t>(b.x.count * b.x.k * b.x.d));
                                b.y.resize(b.x.values.size());
                                return iteration_objective(b, start, at);
                              }));
}
