#include "stages/stage2/certify.hpp"

#include "numeric/tolerance.hpp"

#include <Eigen/Cholesky>

#include <algorithm>
#include <cmath>
#include <cstddef>
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

namespace {

// Σ_i p[i]·q[i] in a fixed order: four partial sums of fused multiply–adds,
// lane l over i ≡ l (mod 4) in increasing order, combined as (s₀ + s₁) + (s₂ + s₃),
// then the last n mod 4 terms fused onto it in increasing order. Four chains
// instead of one: the latency of a long single chain dominated the row's cost.
double fused_dot(const double* __restrict p, const double* __restrict q, int n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 = std::fma(p[i], q[i], s0);
    s1 = std::fma(p[i + 1], q[i + 1], s1);
    s2 = std::fma(p[i + 2], q[i + 2], s2);
    s3 = std::fma(p[i + 3], q[i + 3], s3);
  }
  double sum = (s0 + s1) + (s2 + s3);
  for (; i < n; ++i) sum = std::fma(p[i], q[i], sum);
  return sum;
}

// Columns c0 .. c0+W−1 of row t of b = x w: W sums kept in registers while r
// runs over 0..d−1 in increasing order (the order the header fixes).
template <int W>
void fused_product_columns(const double* __restrict x_row, const double* __restrict w, int d, int c0,
                           double* __restrict out) {
  double acc[W] = {};
  for (int r = 0; r < d; ++r) {
    const double xr = x_row[r];
    const double* __restrict wr = w + static_cast<std::ptrdiff_t>(r) * d + c0;
    for (int l = 0; l < W; ++l) acc[l] = std::fma(xr, wr[l], acc[l]);
  }
  for (int l = 0; l < W; ++l) out[c0 + l] = acc[l];
}

// b = x w (x: k×d, w: d×d, b: k×d, all row-major), every entry (t, c) summed over
// r in increasing order: blocks of 16 columns, then 4, then single columns —
// the blocking changes which sums run side by side, never an entry's order.
void fused_products(const double* __restrict x, const double* __restrict w, int k, int d, double* __restrict b) {
  for (int t = 0; t < k; ++t) {
    const double* x_row = x + static_cast<std::ptrdiff_t>(t) * d;
    double* out = b + static_cast<std::ptrdiff_t>(t) * d;
    int c = 0;
    for (; c + 16 <= d; c += 16) fused_product_columns<16>(x_row, w, d, c, out);
    for (; c + 4 <= d; c += 4) fused_product_columns<4>(x_row, w, d, c, out);
    for (; c < d; ++c) fused_product_columns<1>(x_row, w, d, c, out);
  }
}

bool rows_distinct(const double* x, int k, int d) {
  for (int s = 0; s < k; ++s)
    for (int t = s + 1; t < k; ++t)
      if (std::equal(x + s * d, x + (s + 1) * d, x + t * d)) return false;
  return true;
}

double noise_bound_of(const double* y, int k, int d, double y_row_norm, const CertifyOptions& o) {
  double nu = 0;
  if (o.label_noise > 0) {
    const double y_norm = std::sqrt(fused_dot(y, y, k * d));
    nu += tolerance::label_noise_row_bound(o.label_noise, y_norm, k, d, o.noise_failure_probability);
  }
  if (o.float32_labels) nu += tolerance::float32_label_rounding_row_bound(y_row_norm, d);
  return nu;
}

void v_min_partners_into(const double* v, int k, int row, const CertifyOptions& o, std::vector<int>& partners) {
  partners.clear();
  const bool every = o.v_min_rule == CertifyOptions::VMinRule::every_entry;
  const double v_least = *std::min_element(v, v + k);
  if (every ? !(v_least >= o.v_min) : !(v[row] >= o.v_min)) return;
  for (int j = 0; j < k; ++j)
    if (j != row && (every || v[j] >= o.v_min)) partners.push_back(j);
}

// The normal equations (B Bᵀ) v = B y_aᵀ and their LDLᵀ (it reports a singular Gram matrix).
bool solve_normal_equations(const double* y_row, const double* b, int k, int d, RowCertifier::Work& w) {
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j <= i; ++j) w.gram(i, j) = w.gram(j, i) = fused_dot(b + i * d, b + j * d, d);
    w.rhs(i) = fused_dot(b + i * d, y_row, d);
  }
  w.ldlt.compute(w.gram);
  const double scale = w.gram.diagonal().maxCoeff();
  if (w.ldlt.info() != Eigen::Success || !(w.ldlt.vectorD().minCoeff() > scale * k * 0x1p-52)) return false;
  w.v = w.ldlt.solve(w.rhs);
  return true;
}

// ρ = ‖y_a − v̂ᵀB‖ (entry c: y[a,c] − Σ_i v̂_i B[i,c], i increasing, fused;
// the norms as fused_dot) and ‖y_a‖.
void residual_norms(const double* y_row, const double* b, int k, int d, RowCertifier::Work& w, double& y_norm) {
  double* r = w.row_scratch.data();
  for (int c = 0; c < d; ++c) r[c] = y_row[c];
  for (int i = 0; i < k; ++i) {
    const double minus_v = -w.v(i);
    for (int c = 0; c < d; ++c) r[c] = std::fma(minus_v, b[i * d + c], r[c]);
  }
  w.residual = std::sqrt(fused_dot(r, r, d));
  y_norm = std::sqrt(fused_dot(y_row, y_row, d));
}

// ‖v̂ᵀX‖, the factor of the assumed ‖W_Σ − Ŵ‖ in δ (summed as residual_norms).
double pattern_input_norm(const double* x, int k, int d, RowCertifier::Work& w) {
  double* e = w.row_scratch.data();
  std::fill(e, e + d, 0.0);
  for (int i = 0; i < k; ++i) {
    const double v = w.v(i);
    for (int c = 0; c < d; ++c) e[c] = std::fma(v, x[i * d + c], e[c]);
  }
  return std::sqrt(fused_dot(e, e, d));
}

// The certificate of row `row` (the header's lemma), into w.
void certify_row_core(const double* x, const double* y, const double* b, int k, int d, int row,
                      const CertifyOptions& o, RowCertifier::Work& w) {
  w.partners.clear();
  w.residual = w.relative_residual = w.delta = w.noise_bound = 0;
  if (!rows_distinct(x, k, d)) {
    w.verdict = RowVerdict::duplicate_tokens;
    return;
  }
  const double* y_row = y + static_cast<std::ptrdiff_t>(row) * d;
  if (!solve_normal_equations(y_row, b, k, d, w)) {
    w.verdict = RowVerdict::rank_deficient;
    return;
  }
  double y_norm = 0;
  residual_norms(y_row, b, k, d, w, y_norm);
  w.relative_residual = y_norm > 0 ? w.residual / y_norm : std::numeric_limits<double>::infinity();
  w.noise_bound = noise_bound_of(y, k, d, y_norm, o);
  const double w_error_term = o.w_error == 0 ? 0.0 : o.w_error * pattern_input_norm(x, k, d, w);
  w.delta = (w.residual + w_error_term + w.noise_bound) / o.sigma_min;
  if (!(w.relative_residual <= o.tau)) {
    w.verdict = RowVerdict::residual_too_large;
    return;
  }
  v_min_partners_into(w.v.data(), k, row, o, w.partners);
  if (w.partners.empty()) {
    w.verdict = RowVerdict::below_v_min;
    return;
  }
  // Within δ of every head's row: the entries the slabs use above δ, and a sum within √k·δ of 1.
  double used_min = w.v(row);
  for (int j : w.partners) used_min = std::min(used_min, w.v(j));
  if (!(used_min > w.delta) || !(std::abs(w.v.sum() - 1.0) <= std::sqrt(double(k)) * w.delta)) {
    w.verdict = RowVerdict::too_uncertain;
    return;
  }
  w.verdict = RowVerdict::certified;
}

RowCertificate certificate_of(const RowCertifier::Work& w) {
  RowCertificate cert;
  cert.verdict = w.verdict;
  if (w.verdict == RowVerdict::duplicate_tokens || w.verdict == RowVerdict::rank_deficient) return cert;
  cert.v = w.v.transpose();
  cert.residual = w.residual;
  cert.relative_residual = w.relative_residual;
  cert.delta = w.delta;
  cert.noise_bound = w.noise_bound;
  if (w.verdict == RowVerdict::certified) cert.partners = w.partners;
  return cert;
}

}  // namespace

double label_noise_bound(const MatD& y, int row, const CertifyOptions& o) {
  const int k = static_cast<int>(y.rows()), d = static_cast<int>(y.cols());
  const double* y_row = y.data() + static_cast<std::ptrdiff_t>(row) * d;
  return noise_bound_of(y.data(), k, d, std::sqrt(fused_dot(y_row, y_row, d)), o);
}

std::vector<int> all_partners(int k, int row) {
  std::vector<int> partners;
  for (int j = 0; j < k; ++j)
    if (j != row) partners.push_back(j);
  return partners;
}

std::vector<int> v_min_partners(const RowVec<double>& v, int row, const CertifyOptions& o) {
  std::vector<int> partners;
  v_min_partners_into(v.data(), static_cast<int>(v.size()), row, o, partners);
  return partners;
}

MatD certification_products(const MatD& x, const MatD& w_hat) {
  MatD b(x.rows(), x.cols());
  fused_products(x.data(), w_hat.data(), static_cast<int>(x.rows()), static_cast<int>(x.cols()), b.data());
  return b;
}

RowCertificate certify_row_fast(const MatD& x, const MatD& y, const MatD& b_matrix, int row, const CertifyOptions& o) {
  const int k = static_cast<int>(x.rows()), d = static_cast<int>(x.cols());
  RowCertifier::Work work(k, d);
  certify_row_core(x.data(), y.data(), b_matrix.data(), k, d, row, o, work);
  return certificate_of(work);
}

RowCertifier::Work::Work(int k, int d)
    : gram(k, k), rhs(k), v(k), ldlt(k), row_scratch(static_cast<size_t>(d)), partners() {
  partners.reserve(static_cast<size_t>(k));
}

RowCertifier::RowCertifier(const MatD& w_hat, int k)
    : w_hat_(w_hat), k_(k), d_(static_cast<int>(w_hat.rows())),
      x_(static_cast<size_t>(k) * d_), b_(static_cast<size_t>(k) * d_), work_(k, d_) {}

void RowCertifier::load(const InputBatch& batch, int64_t s, const double* y) {
  batch.sample_into(s, x_.data());
  fused_products(x_.data(), w_hat_.data(), k_, d_, b_.data());
  y_ = y;
}

RowVerdict RowCertifier::certify(int row, const CertifyOptions& o) {
  certify_row_core(x_.data(), y_, b_.data(), k_, d_, row, o, work_);
  return work_.verdict;
}

RowCertificate RowCertifier::certificate() const { return certificate_of(work_); }

MatD RowCertifier::x() const { return Eigen::Map<const MatD>(x_.data(), k_, d_); }

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
