#include "model/forward_error.hpp"

#include "numeric/tolerance.hpp"

#include <algorithm>
#include <cmath>

namespace mha {

namespace {
double gamma_n(int n, double u) { return tolerance::gamma(n, u); }

// Roundings of nonnegative terms in evaluating the design-route bounds per
// entry: the attention rows' chain as forward_error_bound counts it
// (3d + 2k + 24 per head), then per head and column j a product, two sums and
// the γ factors (8 each).
long long design_bound_operations(int k, int d, int m) {
  return static_cast<long long>(m) * (3LL * d + 2LL * k + 24) + 8LL * m * d + 8;
}
}  // namespace

Eigen::VectorXd attention_row_error_bound(const MatD& theta, const MatD& x, double u) {
  const int k = static_cast<int>(x.rows()), d = static_cast<int>(x.cols());
  const double gd = gamma_n(d, u), gk = gamma_n(k, u);
  const MatD ax = x.cwiseAbs();
  // P = XΘ: error of each entry ≤ γ_d Σ_r |x_r||Θ_rc|.
  const MatD p = x * theta;
  const MatD e_p = gd * (ax * theta.cwiseAbs());
  // |computed P| ≤ |P here| + 2 e_p (P here carries its own error ≤ e_p).
  const MatD p_abs = p.cwiseAbs() + 2.0 * e_p;
  // Logits L = P Xᵀ: ≤ γ_d Σ_c |P̂_ac||x_bc| + Σ_c e_p,ac |x_bc|.
  const MatD e_l = gd * (p_abs * ax.transpose()) + e_p * ax.transpose();
  const MatD logits = p * x.transpose();
  Eigen::VectorXd e_a(k);
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
    e_a(a) = std::expm1(2.0 * delta) + rho;
  }
  return e_a;
}

MatD forward_error_bound(const Layer& layer, const MatD& x, double u) {
  const int k = static_cast<int>(x.rows()), d = layer.d(), m = layer.m();
  const double gd = gamma_n(d, u), gmk = gamma_n(m * k, u);
  const MatD ax = x.cwiseAbs();
  MatD bound = MatD::Zero(k, d);
  for (const auto& head : layer.heads) {
    // Z = XW: error of each entry ≤ γ_d Σ_r |x_r||W_rc|; |computed Z| ≤ |Z here| + 2 e_z.
    const MatD z = x * head.w;
    const MatD e_z = gd * (ax * head.w.cwiseAbs());
    const MatD z_abs = z.cwiseAbs() + 2.0 * e_z;
    const RowVec<double> z_max = z_abs.colwise().maxCoeff();
    const RowVec<double> ez_max = e_z.colwise().maxCoeff();
    const Eigen::VectorXd e_a = attention_row_error_bound(head.theta, x, u);
    for (int a = 0; a < k; ++a)
      for (int c = 0; c < d; ++c)
        bound(a, c) += e_a(a) * z_max(c) + ez_max(c) + gmk * (1.0 + e_a(a)) * z_max(c);
  }
  // The bound is itself computed in double: allow for its own relative error.
  return bound * tolerance::kForwardBoundEvaluationFactor;
}

MatD design_error_bound(const Layer& layer, const MatD& x, double u) {
  const int k = static_cast<int>(x.rows()), d = layer.d(), m = layer.m();
  const double gk = gamma_n(k, u);
  // Σ_b |Â[a,b] − A[a,b]||X[b,j]| ≤ ε_A Xmax_j, and the k-term products add γ_k Σ_b |Â[a,b]||X[b,j]|.
  const RowVec<double> x_max = x.cwiseAbs().colwise().maxCoeff();
  MatD bound(k, static_cast<Eigen::Index>(m) * d);
  for (int i = 0; i < m; ++i) {
    const Eigen::VectorXd e_a = attention_row_error_bound(layer.heads[i].theta, x, u);
    for (int a = 0; a < k; ++a)
      bound.block(a, static_cast<Eigen::Index>(i) * d, 1, d) = (e_a(a) + gk * (1.0 + e_a(a))) * x_max;
  }
  return bound * tolerance::bound_evaluation_factor(design_bound_operations(k, d, m));
}

MatD design_route_error_bound(const Layer& layer, const MatD& x, double u) {
  const int k = static_cast<int>(x.rows()), d = layer.d(), m = layer.m();
  const double gk = gamma_n(k, u), gmd = gamma_n(m * d, u);
  const RowVec<double> x_max = x.cwiseAbs().colwise().maxCoeff();
  MatD bound = MatD::Zero(k, d);
  for (const auto& head : layer.heads) {
    // Σ_j Xmax_j |W_i[j,c]|: the majorant of |A_i X W_i| and of the design's error's image.
    const RowVec<double> xw = x_max * head.w.cwiseAbs();
    const Eigen::VectorXd e_a = attention_row_error_bound(head.theta, x, u);
    for (int a = 0; a < k; ++a) {
      // The design's error (ε_A + γ_k(1 + ε_A)), then the md-term products over |Ĝ| ≤ (1 + ε_A)(1 + γ_k) Xmax.
      const double e = e_a(a);
      const double coefficient = e + gk * (1.0 + e) + gmd * (1.0 + e) * (1.0 + gk);
      bound.row(a) += coefficient * xw;
    }
  }
  return bound * tolerance::bound_evaluation_factor(design_bound_operations(k, d, m));
}

}  // namespace mha
