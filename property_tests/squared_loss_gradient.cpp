// The gradient of the squared loss ½‖F(X) − Y‖² in every Θ_i and W_i
// (baseline/squared_loss_gradient.hpp; proofs/squared_loss_gradient.md): the
// analytic formula equals the derivative, checked against central differences
// of the MPFR loss with the derived truncation bound; and the double formula
// (the Adam baseline's) agrees with the MPFR one within a first-order rounding
// bound built from the same formula on absolute values. The MPFR loss (the one
// the central differences use, and the gradient's own) is checked against an
// independent computation: ½‖F̂ − Y‖² from the fast forward pass, within
// tolerance::squared_loss_from_forward_bound (forward_error_bound propagated).
// (It used to be compared with itself: both MPFR losses run one formula.)
// Tests of the tester: a loss off by one part in 10⁶, a Θ gradient transposed,
// and a double W gradient off by one part in 10⁹ are each rejected.
#include "baseline/squared_loss_gradient.hpp"
#include "generators.hpp"
#include "model/forward_error.hpp"
#include "model/forward_fast.hpp"
#include "model/reference.hpp"
#include "numeric/multiprecision.hpp"
#include "numeric/precision.hpp"
#include "test_tolerances.hpp"
#include "property.hpp"

#include <cmath>
#include <functional>

using namespace mha;
using mha::test::LayerCase;

namespace {

// Entrywise bounds, from the formula on absolute values, on the rounding error
// of the double gradient divided by γ_n (1 + 4Λ) (see the proof file).
struct AbsGradient {
  std::vector<MatD> theta, w;
};

AbsGradient abs_gradient(const Layer& layer, const MatD& x, const MatD& y) {
  const MatD xa = x.cwiseAbs();
  std::vector<MatD> a, va;
  MatD r_abs = y.cwiseAbs();
  for (const auto& h : layer.heads) {
    a.push_back(attention<double>(h.theta, x));
    va.push_back(xa * h.w.cwiseAbs());
    r_abs += a.back() * va.back();
  }
  AbsGradient out;
  for (size_t i = 0; i < layer.heads.size(); ++i) {
    const MatD g_abs = r_abs * va[i].transpose();
    MatD s_abs = a[i].cwiseProduct(g_abs);
    for (Eigen::Index row = 0; row < s_abs.rows(); ++row)
      s_abs.row(row) += a[i].row(row) * a[i].row(row).dot(g_abs.row(row));
    out.theta.push_back(xa.transpose() * s_abs * xa);
    out.w.push_back((a[i] * xa).transpose() * r_abs);
  }
  return out;
}

// Mutations of the computed results, for the tests of the tester (identity by default).
struct Mutation {
  std::function<void(LossGradient<Mpfr>&)> exact = [](LossGradient<Mpfr>&) {};
  std::function<void(LossGradient<double>&)> fast = [](LossGradient<double>&) {};
};

void check_gradient(const Mutation& mutate) {
  {
    const LayerCase c = *mha::test::gen_layer_case(3, 4, 2).as("layer");
    const InputKind kind = *rc::gen::element(InputKind::boolean, InputKind::gaussian).as("inputs");
    const Layer layer = make_layer(c);
    const MatD x = make_input(c, kind, 0);
    const MatD y = make_input(c, InputKind::gaussian, 1);  // a target the layer does not fit
    const int k = c.shape.k, d = c.shape.d, m = c.shape.m;
    const unsigned bits = 256;
    ScopedPrecision precision(bits);
    const LayerT<Mpfr> lm = convert_layer<Mpfr>(layer);
    const Mat<Mpfr> xm = cast_matrix<Mpfr>(x), ym = cast_matrix<Mpfr>(y);
    LossGradient<Mpfr> exact = squared_loss_gradient<Mpfr>(lm, xm, ym);
    LossGradient<double> fast = squared_loss_gradient<double>(layer, x, y);
    mutate.exact(exact);
    mutate.fast(fast);

    // The MPFR losses against ½‖F̂ − Y‖² from the fast forward pass (independent
    // code), within the forward error bound propagated through the loss.
    {
      std::vector<double> scratch;
      MatD f_fast(k, d);
      RC_ASSERT(FastForward(layer).forward_dense(x.data(), k, f_fast.data(), scratch));
      const MatD r_fast = f_fast - y;
      const double loss_fast = 0.5 * r_fast.squaredNorm();
      const MatD b = forward_error_bound(layer, x);
      const double tol = tolerance::squared_loss_from_forward_bound(b.cwiseProduct(r_fast.cwiseAbs()).sum(),
                                                                    b.squaredNorm(), loss_fast, int64_t{k} * d);
      // The MPFR loss at 256 bits: relative error below 2^-200 (fewer than 2^56 roundings).
      for (const Mpfr& loss : {exact.loss, squared_loss<Mpfr>(lm, xm, ym)}) {
        const double l = loss.convert_to<double>();  // plus half an ulp
        RC_ASSERT(std::abs(loss_fast - l) <=
                  tol + std::abs(l) * (tolerance::gamma(1) + tolerance::reference_relative_error(256, int64_t{1} << 56)));
      }
    }

    const Mpfr h = ldexp(Mpfr(1), -40);
    const double s = x.cwiseAbs().maxCoeff() * x.cwiseAbs().maxCoeff();  // |∂L/∂Θ[p,q]| ≤ S
    // Size of the loss's terms, for the MPFR rounding of the difference quotient.
    double f_abs = y.cwiseAbs().sum();
    for (const auto& head : layer.heads) f_abs += (x.cwiseAbs() * head.w.cwiseAbs()).sum();
    const Mpfr rounding = ldexp(Mpfr(16.0 * (k + d + m) * (1 + f_abs) * (1 + f_abs)), -static_cast<int>(bits)) / h;
    const AbsGradient bound = abs_gradient(layer, x, y);
    double lambda = 0;
    for (const auto& head : layer.heads)
      lambda = std::max(lambda, (x.cwiseAbs() * head.theta.cwiseAbs() * x.cwiseAbs().transpose()).maxCoeff());
    const int n = 4 * d + 6 * k + 2 * m + 16;
    const double gamma = tolerance::gamma(n);

    for (int i = 0; i < m; ++i) {
      // Truncation bound for a Θ_i direction: Σ_{a,c} S³ V_c (30 V_c + 22 sup|r_ac|), V_c = max_j |V_i[j,c]|,
      // where |r_ac| moves by at most h·2S·V_c on the difference's interval.
      const MatD v_abs = x.cwiseAbs() * layer.heads[i].w.cwiseAbs();
      MatD r = -y;
      for (const auto& head : layer.heads) r += attention<double>(head.theta, x) * (x * head.w);
      double third = 0;
      for (int a = 0; a < k; ++a)
        for (int col = 0; col < d; ++col) {
          const double vc = v_abs.col(col).maxCoeff();
          third += s * s * s * vc * (30 * vc + 22 * (std::abs(r(a, col)) + 0x1p-40 * 2 * s * vc));
        }
      const Mpfr truncation = h * h / 6 * Mpfr(third);
      for (int p = 0; p < d; ++p)
        for (int q = 0; q < d; ++q) {
          for (const bool is_theta : {true, false}) {
            LayerT<Mpfr> plus = lm, minus = lm;
            (is_theta ? plus.heads[i].theta : plus.heads[i].w)(p, q) += h;
            (is_theta ? minus.heads[i].theta : minus.heads[i].w)(p, q) -= h;
            const Mpfr diff = (squared_loss<Mpfr>(plus, xm, ym) - squared_loss<Mpfr>(minus, xm, ym)) / (2 * h);
            const Mpfr& analytic = (is_theta ? exact.gradient.heads[i].theta : exact.gradient.heads[i].w)(p, q);
            // The loss is quadratic in W_i: its central difference has no truncation error.
            const bool matches_derivative = abs(Mpfr(analytic - diff)) <= (is_theta ? truncation : Mpfr(0)) + rounding;
            RC_ASSERT(matches_derivative);
            const double computed = (is_theta ? fast.gradient.heads[i].theta : fast.gradient.heads[i].w)(p, q);
            const double scale = (is_theta ? bound.theta[i] : bound.w[i])(p, q);
            RC_ASSERT(std::abs(computed - analytic.convert_to<double>()) <= gamma * (1 + 4 * lambda) * scale + 1e-300);
          }
        }
    }
  }
}

}  // namespace

TEST_CASE("squared-loss gradient: the formula equals the derivative (MPFR central differences)",
          "[property][adam]") {
  mha::test::property("k ≤ 3, d ≤ 4, m ≤ 2, all flavours, Boolean and Gaussian inputs, Gaussian targets", 40,
                      [] { check_gradient({}); });
}

TEST_CASE("test of the tester: the gradient property rejects a wrong loss and wrong gradients", "[property][adam][tester]") {
  mha::test::property_rejects("MPFR loss times 1 + 1e-6", 40, [] {
    Mutation m;
    m.exact = [](LossGradient<Mpfr>& g) { g.loss *= 1 + 1e-6; };
    check_gradient(m);
  });
  mha::test::property_rejects("Theta gradient transposed", 40, [] {
    Mutation m;
    m.exact = [](LossGradient<Mpfr>& g) {
      for (auto& h : g.gradient.heads) h.theta.transposeInPlace();
    };
    check_gradient(m);
  });
  mha::test::property_rejects("double W gradient times 1 + 1e-9", 40, [] {
    Mutation m;
    m.fast = [](LossGradient<double>& g) {
      for (auto& h : g.gradient.heads) h.w *= 1 + 1e-9;
    };
    check_gradient(m);
  });
}
