// One Levenberg–Marquardt iteration of polish.cpp (polish_iteration: its
// objective, its linear model's gradient Jᵀ P⊥ r and its accepted step) against
// MPFR on the same samples (check_polish_iteration; proofs/attention_jacobian.md,
// "polish.cpp's gradient on two paths"): random small layers of every generator
// flavour, Boolean and Gaussian inputs, labels from the layer, the start the
// layer moved by a relative 10⁻³, the dense and the matrix-free linear model.
// No part may disagree. Test of the tester: the gradient with one head's block
// negated is rejected.
#include "generators.hpp"
#include "model/forward_fast.hpp"
#include "numeric/rng.hpp"
#include "property.hpp"
#include "stages/polish/check.hpp"
#include "stages/polish/polish.hpp"

#include <functional>

using namespace mha;

namespace {

using IterationEdit = std::function<void(PolishIteration&)>;

// The layer with every Θ_i and W_i moved by `relative` of its norm (Gaussian direction).
Layer iteration_start(const Layer& layer, double relative, uint64_t seed) {
  Layer out = layer;
  for (size_t i = 0; i < out.heads.size(); ++i) {
    const MatD dt = gaussian_matrix(seed, Stream::verify, i, 0, layer.d());
    const MatD dw = gaussian_matrix(seed, Stream::verify, i, 1, layer.d());
    out.heads[i].theta += relative * layer.heads[i].theta.norm() / dt.norm() * dt;
    out.heads[i].w += relative * layer.heads[i].w.norm() / dw.norm() * dw;
  }
  return out;
}

auto iteration_agrees(const IterationEdit& edit) {
  return [edit] {
    const auto c = *test::gen_layer_case(3, 6, 2).as("case");
    const Layer layer = test::make_layer(c);
    const int k = c.shape.k, d = c.shape.d, m = c.shape.m;
    const InputKind kind = *rc::gen::element(InputKind::boolean, InputKind::gaussian).as("inputs");
    const bool dense = *rc::gen::arbitrary<bool>().as("dense linear model");
    const int samples = 2 * ((m * d + k - 1) / k) + 4;  // twice the N·k ≥ m·d a full-rank design needs
    std::vector<double> values, labels, scratch;
    for (int n = 0; n < samples; ++n) {
      const MatD x = test::make_input(c, kind, n);
      MatD y(k, d);
      RC_PRE(FastForward(layer).forward_dense(x.data(), k, y.data(), scratch));
      values.insert(values.end(), x.data(), x.data() + x.size());
      labels.insert(labels.end(), y.data(), y.data() + y.size());
    }
    LabelledBatch batch{dense_batch_from_values(values, samples, k, d), labels};
    PolishOptions o;
    o.linear_solver = dense ? PolishSolver::dense : PolishSolver::matrix_free;
    PolishIteration it = polish_iteration(batch, iteration_start(layer, 1e-3, c.seed), o);
    RC_PRE(std::isfinite(it.objective));  // a rank-deficient design has no iteration
    edit(it);
    const Comparison cmp = check_polish_iteration(it);
    RC_LOG() << cmp.detail << "\n";
    for (const auto& p : cmp.parts) RC_LOG() << "  " << p.name << ": " << p.detail << "\n";
    RC_TAG(cmp.parts[0].undecided > 0 ? "gradient undecided" : "gradient compared");
    RC_ASSERT(!disagrees(cmp));
  };
}

}  // namespace

TEST_CASE("polish_iteration: objective, gradient and accepted step within their bounds of MPFR",
          "[property][polish]") {
  mha::test::property("k ≤ 3, d ≤ 6, m ≤ 2, all flavours, dense and matrix-free", 30,
                      iteration_agrees([](PolishIteration&) {}));
}

TEST_CASE("test of the tester: the polish iteration check rejects a gradient with one head negated",
          "[property][polish][tester]") {
  mha::test::property_rejects("gradient of head 1 negated", 15, iteration_agrees([](PolishIteration& it) {
                                const Eigen::Index dd = it.start.d() * it.start.d();
                                it.gradient.head(dd) *= -1;
                              }));
}
