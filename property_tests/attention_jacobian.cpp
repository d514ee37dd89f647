// The derivative of F with respect to Θ (stages/polish/attention_jacobian.hpp;
// proofs/attention_jacobian.md): the analytic formula equals the derivative,
// checked against central differences of the MPFR reference forward pass, with
// the tolerance derived in the proof file (truncation h²/6 · 22 S³ max|V| plus
// rounding); and the double formula agrees with the MPFR one within its
// first-order rounding bound. Test of the tester: a Jacobian without the
// softmax derivative's centring term (V not centred at A[a,:]V) is rejected.
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

namespace {

// Mistake: the softmax derivative without its centring term, g = Σ_l A[a,l] V[l,c] x_l (− A[a,:]V dropped).
template <class T>
Mat<T> jacobian_without_centring(const LayerT<T>& layer, const Mat<T>& x) {
  const Eigen::Index k = x.rows(), d = layer.d();
  Mat<T> jac = Mat<T>::Zero(k * d, layer.m() * d * d);
  for (Eigen::Index i = 0; i < layer.m(); ++i) {
    const Mat<T> a = attention<T>(layer.heads[i].theta, x);
    const Mat<T> v = x * layer.heads[i].w;
    for (Eigen::Index row = 0; row < k; ++row) {
      Mat<T> weighted(k, d);
      for (Eigen::Index l = 0; l < k; ++l)
        for (Eigen::Index c = 0; c < d; ++c) weighted(l, c) = a(row, l) * v(l, c);
      const Mat<T> g = weighted.transpose() * x;
      for (Eigen::Index c = 0; c < d; ++c)
        for (Eigen::Index p = 0; p < d; ++p) jac.block(row * d + c, i * d * d + p * d, 1, d) = x(row, p) * g.row(c);
    }
  }
  return jac;
}

// The property for a Jacobian `jacobian(layer, x)` callable with double and MPFR layers.
template <class Jacobian>
auto jacobian_is_derivative(Jacobian jacobian) {
  return [jacobian] {
    const LayerCase c = *mha::test::gen_layer_case(3, 4, 2).as("layer");
    const InputKind kind = *rc::gen::element(InputKind::boolean, InputKind::gaussian).as("inputs");
    const Layer layer = make_layer(c);
    const MatD x = make_input(c, kind, 0);
    const int k = c.shape.k, d = c.shape.d, m = c.shape.m;
    const unsigned bits = 256;
    ScopedPrecision precision(bits);
    const LayerT<Mpfr> lm = convert_layer<Mpfr>(layer);
    const Mat<Mpfr> xm = cast_matrix<Mpfr>(x);
    const Mat<Mpfr> jac = jacobian(lm, xm);
    const MatD jac_double = jacobian(layer, x);
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
  };
}

}  // namespace

TEST_CASE("attention Jacobian: the formula equals the derivative (MPFR central differences)", "[property][polish]") {
  const auto formula = [](const auto& layer, const auto& x) { return attention_jacobian(layer, x); };
  mha::test::property("k ≤ 3, d ≤ 4, m ≤ 2, all flavours, Boolean and Gaussian inputs", 40,
                      jacobian_is_derivative(formula));
}

TEST_CASE("test of the tester: the attention Jacobian property rejects a missing centring term",
          "[property][polish][tester]") {
  const auto uncentred = [](const auto& layer, const auto& x) { return jacobian_without_centring(layer, x); };
  mha::test::property_rejects("Jacobian without the centring term", 10, jacobian_is_derivative(uncentred));
}
