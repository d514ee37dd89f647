// The derivative of F with respect to Θ (stages/polish/attention_jacobian.hpp;
// proofs/attention_jacobian.md): the analytic formula equals the derivative,
// checked against central differences of the MPFR reference forward pass, with
// the tolerance derived in the proof file (truncation h²/6 · 22 S³ max|V| plus
// rounding); and the double formula agrees with the MPFR one within its
// first-order rounding bound.
#include "numeric/tolerance.hpp"
#include "generators.hpp"
#include "model/reference.hpp"
#include "numeric/multiprecision.hpp"
#include "numeric/precision.hpp"
#include "property.hpp"
#include "stages/polish/attention_jacobian.hpp"

#include <cmath>

using namespace mha;
using mha::test::LayerCase;

TEST_CASE("attention Jacobian: the formula equals the derivative (MPFR central differences)", "[property][polish]") {
  mha::test::property("k ≤ 3, d ≤ 4, m ≤ 2, all flavours, Boolean and Gaussian inputs", 40, [] {
    const LayerCase c = *mha::test::gen_layer_case(3, 4, 2).as("layer");
    const InputKind kind = *rc::gen::element(InputKind::boolean, InputKind::gaussian).as("inputs");
    const Layer layer = make_layer(c);
    const MatD x = make_input(c, kind, 0);
    const int k = c.shape.k, d = c.shape.d, m = c.shape.m;
    const unsigned bits = 256;
    ScopedPrecision precision(bits);
    const LayerT<Mpfr> lm = convert_layer<Mpfr>(layer);
    const Mat<Mpfr> xm = cast_matrix<Mpfr>(x);
    const Mat<Mpfr> jac = attention_jacobian<Mpfr>(lm, xm);
    const MatD jac_double = attention_jacobian<double>(layer, x);
    const Mpfr h = ldexp(Mpfr(1), -40);
    const double s = x.cwiseAbs().maxCoeff() * x.cwiseAbs().maxCoeff();  // |∂L/∂Θ[p,q]| ≤ S
    const double gamma = tolerance::gamma(2 * d + 2 * k + 8);
    for (int i = 0; i < m; ++i) {
      const MatD v_abs = x.cwiseAbs() * layer.heads[i].w.cwiseAbs();  // ≥ |V| = |X W_i|
      const MatD a = attention<double>(layer.heads[i].theta, x);
      const double lambda = (x.cwiseAbs() * layer.heads[i].theta.cwiseAbs() * x.cwiseAbs().transpose()).maxCoeff();
      for (int p = 0; p < d; ++p)
        for (int q = 0; q < d; ++q) {
          LayerT<Mpfr> plus = lm, minus = lm;
          plus.heads[i].theta(p, q) += h;
          minus.heads[i].theta(p, q) -= h;
          const Mat<Mpfr> diff = (forward_reference<Mpfr>(plus, xm) - forward_reference<Mpfr>(minus, xm)) / (2 * h);
          for (int row = 0; row < k; ++row)
            for (int col = 0; col < d; ++col) {
              const Eigen::Index r = row * d + col, cidx = i * d * d + p * d + q;
              // Truncation of the central difference: h²/6 · max|∂³F/∂t³| ≤ h²/6 · 22 S³ max_j |V[j,c]|;
              // rounding: the MPFR forward passes (relative error ≤ 16(k+d)·2^-bits) divided by 2h.
              const double vmax = v_abs.col(col).maxCoeff();
              const Mpfr truncation = h * h / 6 * Mpfr(22 * s * s * s * vmax);
              const Mpfr rounding = ldexp(Mpfr(16.0 * (k + d) * (1 + vmax)), -static_cast<int>(bits)) / h;
              RC_ASSERT(abs(Mpfr(jac(r, cidx) - diff(row, col))) <= truncation + rounding);
              // Double formula vs MPFR formula: first-order rounding bound, logits' rounding amplified by (1 + 4Λ).
              double scale = 0;
              double y_abs = 0;
              for (int l = 0; l < k; ++l) y_abs += a(row, l) * v_abs(l, col);
              for (int l = 0; l < k; ++l) scale += a(row, l) * (v_abs(l, col) + y_abs) * std::abs(x(l, q));
              scale *= std::abs(x(row, p));
              const double bound = gamma * (1 + 4 * lambda) * scale + 1e-300;
              RC_ASSERT(std::abs(jac_double(r, cidx) - jac(r, cidx).convert_to<double>()) <= bound);
            }
        }
    }
  });
}
