#include "stages/stage2/certify.hpp"

#include "numeric/tolerance.hpp"

#include <Eigen/Cholesky>

#include <cmath>
#include <limits>

namespace mha {

const char* to_string(RowVerdict verdict) {
  switch (verdict) {
    case RowVerdict::certified: return "certified";
    case RowVerdict::duplicate_tokens: return "duplicate_tokens";
    case RowVerdict::rank_deficient: return "rank_deficient";
    case RowVerdict::residual_too_large: return "residual_too_large";
    case RowVerdict::below_v_min: return "below_v_min";
    case RowVerdict::too_uncertain: return "too_uncertain";
  }
  return "?";
}

bool tokens_distinct(const MatD& x) {
  for (Eigen::Index s = 0; s < x.rows(); ++s)
    for (Eigen::Index t = s + 1; t < x.rows(); ++t)
      if (x.row(s) == x.row(t)) return false;
  return true;
}

double slab_half_width(double v_j, double v_a, double delta) {
  if (!(delta < v_j && delta < v_a)) return std::numeric_limits<double>::infinity();
  return std::log1p(delta / (v_j - delta)) + std::log1p(delta / (v_a - delta));
}

double label_noise_bound(const MatD& y, int row, const CertifyOptions& o) {
  const int k = static_cast<int>(y.rows()), d = static_cast<int>(y.cols());
  double nu = 0;
  if (o.label_noise > 0) nu += tolerance::label_noise_row_bound(o.label_noise, y.norm(), k, d, o.noise_failure_probability);
  if (o.float32_labels) nu += tolerance::float32_label_rounding_row_bound(y.row(row).norm(), d);
  return nu;
}

std::vector<int> all_partners(int k, int row) {
  std::vector<int> partners;
  for (int j = 0; j < k; ++j)
    if (j != row) partners.push_back(j);
  return partners;
}

std::vector<int> v_min_partners(const RowVec<double>& v, int row, const CertifyOptions& o) {
  std::vector<int> partners;
  const int k = static_cast<int>(v.size());
  const bool every = o.v_min_rule == CertifyOptions::VMinRule::every_entry;
  if (every ? !(v.minCoeff() >= o.v_min) : !(v(row) >= o.v_min)) return partners;
  for (int j = 0; j < k; ++j)
    if (j != row && (every || v(j) >= o.v_min)) partners.push_back(j);
  return partners;
}

RowCertificate certify_row_fast(const MatD& x, const MatD& y, const MatD& b_matrix, int row, const CertifyOptions& o) {
  RowCertificate cert;
  const Eigen::Index k = x.rows();
  if (!tokens_distinct(x)) {
    cert.verdict = RowVerdict::duplicate_tokens;
    return cert;
  }
  // Normal equations (B Bᵀ) v = B y_aᵀ: k×k, cheap; LDLT reports a singular Gram matrix.
  const MatD gram = b_matrix * b_matrix.transpose();
  const Eigen::VectorXd rhs = b_matrix * y.row(row).transpose();
  Eigen::LDLT<Eigen::MatrixXd> ldlt(gram);
  const double scale = gram.diagonal().maxCoeff();
  if (ldlt.info() != Eigen::Success || !(ldlt.vectorD().minCoeff() > scale * k * 0x1p-52)) {
    cert.verdict = RowVerdict::rank_deficient;
    return cert;
  }
  cert.v = ldlt.solve(rhs).transpose();
  const RowVec<double> r = y.row(row) - cert.v * b_matrix;
  cert.residual = r.norm();
  const double y_norm = y.row(row).norm();
  cert.relative_residual = y_norm > 0 ? cert.residual / y_norm : std::numeric_limits<double>::infinity();
  cert.noise_bound = label_noise_bound(y, row, o);
  cert.delta = (cert.residual + o.w_error * (cert.v * x).norm() + cert.noise_bound) / o.sigma_min;
  if (!(cert.relative_residual <= o.tau)) {
    cert.verdict = RowVerdict::residual_too_large;
    return cert;
  }
  std::vector<int> partners = v_min_partners(cert.v, row, o);
  if (partners.empty()) {
    cert.verdict = RowVerdict::below_v_min;
    return cert;
  }
  // Within δ of every head's row: the entries the slabs use above δ, and a sum within √k·δ of 1.
  double used_min = cert.v(row);
  for (int j : partners) used_min = std::min(used_min, cert.v(j));
  if (!(used_min > cert.delta) || !(std::abs(cert.v.sum() - 1.0) <= std::sqrt(double(k)) * cert.delta)) {
    cert.verdict = RowVerdict::too_uncertain;
    return cert;
  }
  cert.verdict = RowVerdict::certified;
  cert.partners = std::move(partners);
  return cert;
}

std::vector<SlabConstraint> slabs_of_row(const MatD& x, int row, const RowCertificate& cert) {
  std::vector<SlabConstraint> out;
  const int d = static_cast<int>(x.cols());
  for (int j : cert.partners) {
    SlabConstraint s;
    s.row = row;
    s.other = j;
    s.a.resize(static_cast<size_t>(d) * d);
    // ⟨x_aᵀ(x_j − x_a), Θ⟩ = x_a Θ (x_j − x_a)ᵀ = L[a,j] − L[a,a].
    for (int r = 0; r < d; ++r)
      for (int c = 0; c < d; ++c) s.a[r * d + c] = x(row, r) * (x(j, c) - x(row, c));
    s.b = std::log(cert.v(j) / cert.v(row));
    s.eta = slab_half_width(cert.v(j), cert.v(row), cert.delta);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace mha
