// Least squares for W (stage 6, and stage 3's final fit): the fast path
// (Householder QR in double) against the exact least-squares solution of the
// same double data, in MPFR at 128 bits and in exact rationals, within
// tolerance::qr_least_squares_relative_bound (proofs/w_least_squares.md,
// "Fast against reference"). The designs are stage 6's: attention rows of
// random layers on random tokens, with labels from the fast forward pass at a
// perturbed layer (a nonzero residual, as at a candidate Θ). Tests of the
// tester: an answer moved by a relative 10⁻⁸ in one entry, and an answer
// rounded to float, are both rejected.
#include "generators.hpp"
#include "model/forward_fast.hpp"
#include "model/reference.hpp"
#include "property.hpp"
#include "stages/stage6/w_least_squares.hpp"

#include <functional>

using namespace mha;

namespace {
using Solver = std::function<std::optional<MatD>(const MatD&, const MatD&)>;

auto least_squares_agrees(const Solver& fast) {
  return [fast] {
    auto c = *test::gen_layer_case(3, 6, 3).as("case");
    c.shape.k = std::max(c.shape.k, 2);
    const Layer layer = test::make_layer(c);
    const int k = c.shape.k, d = c.shape.d, m = c.shape.m;
    const int samples = *rc::gen::inRange(m * d, 4 * m * d + 1).as("samples");
    const double residual_scale = *rc::gen::element(0.0, 1e-8, 1e-3).as("label perturbation");
    Layer labeller = layer;
    for (auto& h : labeller.heads) h.w *= 1 + residual_scale;
    MatD design(samples * k, m * d), labels(samples * k, d);
    std::vector<double> scratch;
    for (int n = 0; n < samples; ++n) {
      const MatD x = test::make_input(c, InputKind::gaussian, n);
      std::vector<MatD> attentions;
      for (const auto& h : layer.heads) attentions.push_back(attention<double>(h.theta, x));
      design.middleRows(n * k, k) = w_design_rows<double>(attentions, x);
      MatD y(k, d);
      RC_PRE(FastForward(labeller).forward_dense(x.data(), k, y.data(), scratch));
      labels.middleRows(n * k, k) = y;
    }
    const std::optional<MatD> w = fast(design, labels);
    RC_PRE(w.has_value());  // rank-deficient designs: the reference says so too (w_least_squares_exact)
    for (unsigned bits : {128u, kExactRationals}) {
      const Comparison cmp = compare_least_squares(design, labels, *w, bits);
      RC_LOG() << precision_name(bits) << ": " << cmp.detail << ", relative difference " << cmp.max_difference
               << " vs bound " << cmp.bound << "\n";
      RC_ASSERT(cmp.compared == d);
      RC_ASSERT(cmp.agree);
    }
  };
}
}  // namespace

TEST_CASE("least squares for W: fast QR within the a priori bound of MPFR and of the exact solution",
          "[property][stage6]") {
  mha::test::property("fast vs MPFR 128 and exact rationals", 40, least_squares_agrees(solve_w_stack));
}

TEST_CASE("least squares cross-check rejects a moved entry and a float answer", "[property][stage6]") {
  mha::test::property_rejects("one entry moved by 1e-8 relative", 20, least_squares_agrees([](const MatD& a, const MatD& b) {
                                std::optional<MatD> w = solve_w_stack(a, b);
                                if (w) (*w)(0, 0) *= 1 + 1e-8;
                                return w;
                              }));
  mha::test::property_rejects("answer rounded to float", 20, least_squares_agrees([](const MatD& a, const MatD& b) {
                                std::optional<MatD> w = solve_w_stack(a, b);
                                if (w) *w = w->cast<float>().cast<double>();
                                return w;
                              }));
}
