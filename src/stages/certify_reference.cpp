#include "stages/certify_reference.hpp"

#include "model/reference.hpp"
#include "numeric/multiprecision.hpp"
#include "numeric/precision.hpp"

#include <Eigen/QR>
#include <Eigen/SVD>

namespace mha {

namespace {
using MatM = Mat<Mpfr>;

Mpfr smallest_singular_value(const MatM& a) {
  Eigen::JacobiSVD<Eigen::Matrix<Mpfr, Eigen::Dynamic, Eigen::Dynamic>> svd(a);
  return svd.singularValues()(svd.singularValues().size() - 1);
}

struct Solved {
  RowVec<Mpfr> v;
  Mpfr residual;
  Mpfr y_norm;
};

Solved solve(const LayerT<Mpfr>& layer, const MatM& x, const MatM& w_hat, int row) {
  const MatM y = forward_reference<Mpfr>(layer, x);
  const MatM b = x * w_hat;
  const Eigen::Matrix<Mpfr, Eigen::Dynamic, Eigen::Dynamic> bt = b.transpose();
  const Eigen::Matrix<Mpfr, Eigen::Dynamic, 1> ya = y.row(row).transpose();
  Eigen::HouseholderQR<Eigen::Matrix<Mpfr, Eigen::Dynamic, Eigen::Dynamic>> qr(bt);
  Solved s;
  s.v = qr.solve(ya).transpose();
  s.residual = (y.row(row) - s.v * b).norm();
  s.y_norm = y.row(row).norm();
  return s;
}
}  // namespace

ReferenceRow certify_row_reference(const Layer& layer, const MatD& x, const MatD& w_hat, int row, unsigned bits) {
  ScopedPrecision precision(bits);
  const Solved s = solve(convert_layer<Mpfr>(layer), cast_matrix<Mpfr>(x), cast_matrix<Mpfr>(w_hat), row);
  ReferenceRow out;
  out.v = to_double_matrix<Mpfr>(s.v);
  out.residual = s.residual.convert_to<double>();
  out.relative_residual = Mpfr(s.residual / s.y_norm).convert_to<double>();
  return out;
}

LemmaQuantities certification_lemma(const Layer& layer, const MatD& x, const MatD& w_hat, int row, unsigned bits) {
  ScopedPrecision precision(bits);
  const LayerT<Mpfr> ref = convert_layer<Mpfr>(layer);
  const MatM xm = cast_matrix<Mpfr>(x), wm = cast_matrix<Mpfr>(w_hat);
  const Solved s = solve(ref, xm, wm, row);
  const int k = static_cast<int>(x.rows()), d = layer.d(), m = layer.m();
  MatM c_matrix(k * m, d);
  Mpfr c_sq(0), deviation(0);
  LemmaQuantities q;
  for (int i = 0; i < m; ++i) {
    const MatM a = attention<Mpfr>(ref.heads[i].theta, xm);
    const RowVec<Mpfr> diff = a.row(row) - s.v;
    c_sq += diff.squaredNorm();
    deviation = std::max(deviation, Mpfr(diff.norm()));
    q.head_rows.push_back(to_double_matrix<Mpfr>(a.row(row)));
    const MatM logits = xm * ref.heads[i].theta * xm.transpose();
    std::vector<double> diffs(k);
    for (int j = 0; j < k; ++j) diffs[j] = Mpfr(logits(row, j) - logits(row, row)).convert_to<double>();
    q.head_logit_differences.push_back(diffs);
    for (int j = 0; j < k; ++j) c_matrix.row(i * k + j) = xm.row(j) * ref.heads[i].w;
  }
  const Mpfr sigma = smallest_singular_value(c_matrix);
  const Mpfr w_term = (s.v * xm * (ref.w_sum() - wm)).norm();
  // The identity y_a − v̂ᵀB = cᵀC − v̂ᵀX(Ŵ − W_Σ) is exact for exact values; the
  // MPFR values carry relative errors below 2^20·2^-bits (at most 2^20 rounded
  // terms per quantity), so the computed bound adds that much of every term.
  Mpfr magnitude = forward_reference<Mpfr>(ref, xm).row(row).norm() + s.v.norm() * (xm * wm).norm() +
                   Mpfr(sqrt(c_sq)) * c_matrix.norm() + (s.v * xm).norm() * (ref.w_sum() - wm).norm();
  const Mpfr allowance = ldexp(magnitude, 20 - static_cast<int>(current_precision_bits()));
  q.deviation = deviation.convert_to<double>();
  q.c_norm = Mpfr(sqrt(c_sq)).convert_to<double>();
  q.sigma_min_c = sigma.convert_to<double>();
  q.c_matrix_norm = c_matrix.norm().convert_to<double>();
  q.w_term = w_term.convert_to<double>();
  q.residual = s.residual.convert_to<double>();
  q.bound = Mpfr((s.residual + w_term + allowance) / sigma).convert_to<double>();
  q.v = to_double_matrix<Mpfr>(s.v);
  return q;
}

double fast_solution_error_bound(const Layer& layer, const MatD& x, const MatD& w_hat, int row,
                                 const RowVec<double>& v_fast, unsigned bits) {
  ScopedPrecision precision(bits);
  const MatM xm = cast_matrix<Mpfr>(x);
  const MatM y = forward_reference<Mpfr>(convert_layer<Mpfr>(layer), xm);
  const MatM b = xm * cast_matrix<Mpfr>(w_hat);
  const RowVec<Mpfr> v = cast_matrix<Mpfr>(MatD(v_fast));
  const RowVec<Mpfr> grad = (v * b - y.row(row)) * b.transpose();
  const Mpfr sigma = smallest_singular_value(b);
  return Mpfr(grad.norm() / (sigma * sigma)).convert_to<double>();
}

}  // namespace mha
