#include "model/forward_error.hpp"

#include "numeric/tolerance.hpp"

#include <algorithm>
#include <cmath>

namespace mha {

namespace {
double gamma_n(int n, double u) { return tolerance::gamma(n, u); }
}  // namespace

MatD forward_error_bound(const Layer& layer, const MatD& x, double u) {
  const int k = static_cast<int>(x.rows()), d = layer.d(), m = layer.m();
  const double gd = gamma_n(d, u), gk = gamma_n(k, u), gmk = gamma_n(m * k, u);
  const MatD ax = x.cwiseAbs();
  MatD bound = MatD::Zero(k, d);
  for (const auto& head : layer.heads) {
    // P = XΘ and Z = XW: error of each entry ≤ γ_d Σ_r |x_r||M_rc|.
    const MatD p = x * head.theta, z = x * head.w;
    const MatD e_p = gd * (ax * head.theta.cwiseAbs());
    const MatD e_z = gd * (ax * head.w.cwiseAbs());
    // |computed P| ≤ |P here| + 2 e_p (P here carries its own error ≤ e_p).
    const MatD p_abs = p.cwiseAbs() + 2.0 * e_p;
    const MatD z_abs = z.cwiseAbs() + 2.0 * e_z;
    // Logits L = P Xᵀ: ≤ γ_d Σ_c |P̂_ac||x_bc| + Σ_c e_p,ac |x_bc|.
    const MatD e_l = gd * (p_abs * ax.transpose()) + e_p * ax.transpose();
    const MatD logits = p * x.transpose();
    const RowVec<double> z_max = z_abs.colwise().maxCoeff();
    const RowVec<double> ez_max = e_z.colwise().maxCoeff();
    for (int a = 0; a < k; ++a) {
      const double delta = e_l.row(a).maxCoeff();
      // Largest |L_b − max L| the exponentials see, widened by the logit error.
      const double span = logits.row(a).maxCoeff() - logits.row(a).minCoeff() + 4.0 * delta;
      // Softmax of the computed logits: subtraction (u|t|), exp (2u), sum (γ_k), division (u).
      const double eta = std::expm1(u * span) * (1.0 + 2.0 * u) + 2.0 * u;
      const double eta_sum = eta + gk * (1.0 + eta);
      // ρ = (1 + η)(1 + u)/(1 − η_sum) − 1, expanded so that no subtraction of nearly equal
      // numbers occurs: evaluated as written, "− 1" cancels and loses ~u absolutely, 7% of
      // the whole bound at small logits (proofs/forward_error_bound.md, "Evaluating the bound").
      const double rho = (eta + u + eta * u + eta_sum) / (1.0 - eta_sum);
      // ℓ1 distance of the attention row: perturbed logits (e^{2δ} − 1) plus rounding.
      const double e_a = std::expm1(2.0 * delta) + rho;
      for (int c = 0; c < d; ++c)
        bound(a, c) += e_a * z_max(c) + ez_max(c) + gmk * (1.0 + e_a) * z_max(c);
    }
  }
  // The bound is itself computed in double: allow for its own relative error.
  return bound * tolerance::kForwardBoundEvaluationFactor;
}

}  // namespace mha
