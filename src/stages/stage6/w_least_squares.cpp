#include "stages/stage6/w_least_squares.hpp"

#include "numeric/multiprecision.hpp"
#include "numeric/precision.hpp"
#include "numeric/tolerance.hpp"

#include <Eigen/SVD>

#include <cmath>
#include <cstdio>
#include <limits>

#include <Eigen/QR>

namespace mha {

template <class T>
Mat<T> w_design_rows(const std::vector<Mat<T>>& attentions, const Mat<T>& x) {
  const Eigen::Index k = x.rows(), d = x.cols();
  Mat<T> rows(k, static_cast<Eigen::Index>(attentions.size()) * d);
  for (size_t i = 0; i < attentions.size(); ++i) rows.middleCols(i * d, d) = attentions[i] * x;
  return rows;
}

template <class T>
std::optional<Mat<T>> solve_w_stack_reference(const Mat<T>& design, const Mat<T>& labels) {
  using std::abs;  // double; MPFR and rationals find theirs by ADL
  Mat<T> a = design.transpose() * design;
  Mat<T> b = design.transpose() * labels;
  const Eigen::Index n = a.rows();
  for (Eigen::Index col = 0; col < n; ++col) {
    Eigen::Index pivot = col;
    for (Eigen::Index r = col + 1; r < n; ++r)
      if (abs(a(r, col)) > abs(a(pivot, col))) pivot = r;
    if (a(pivot, col) == T(0)) return std::nullopt;
    a.row(pivot).swap(a.row(col));
    b.row(pivot).swap(b.row(col));
    for (Eigen::Index r = 0; r < n; ++r) {
      if (r == col || a(r, col) == T(0)) continue;
      const T f = a(r, col) / a(col, col);
      a.row(r) -= f * a.row(col);
      b.row(r) -= f * b.row(col);
    }
  }
  for (Eigen::Index r = 0; r < n; ++r) b.row(r) /= a(r, r);
  return b;
}

std::optional<MatD> solve_w_stack(const MatD& design, const MatD& labels) {
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(design);
  if (qr.rank() < design.cols()) return std::nullopt;
  return MatD(qr.solve(labels));
}

namespace {
// κ₂(D) = σ_max/σ_min from a double SVD; σ_min is lowered by the SVD's own error:
// a backward stable SVD computes the singular values of D + ΔD, and by Weyl's
// inequality |σ̂_i − σ_i| ≤ ‖ΔD‖₂, taken as γ_{N·n}·σ_max (the QR bound's form).
double design_condition_number(const MatD& design, double& sigma_max) {
  const Eigen::VectorXd s = Eigen::JacobiSVD<MatD>(design).singularValues();
  sigma_max = s(0);
  const double lower = s(s.size() - 1) - tolerance::gamma(design.rows() * design.cols()) * sigma_max;
  return lower > 0 ? sigma_max / lower : std::numeric_limits<double>::infinity();
}

template <class T>
Comparison compare_in(const MatD& design, const MatD& labels, const MatD& fast, unsigned bits) {
  Comparison c;
  c.quantity = "‖w_fast − w_ref‖/‖w_ref‖ per output column";
  double sigma_max = 0;
  const double kappa = design_condition_number(design, sigma_max);
  const Mat<T> dm = cast_matrix<T>(design), ym = cast_matrix<T>(labels);
  const std::optional<Mat<T>> ref = solve_w_stack_reference<T>(dm, ym);
  if (!ref) {
    // The fast path solved a design the reference finds singular: its rank
    // decision lies within rounding of the truth, and the least-squares solution
    // is not unique, so nothing can be compared — undecided, never a silent agree.
    c.record_undecided();
    c.detail = "the reference found DᵀD singular where the fast path found full rank: undecided";
    return c;
  }
  const Mat<T> residual = ym - dm * *ref;
  const Mat<T> diff = cast_matrix<T>(fast) - *ref;
  const long long rows = design.rows(), cols = design.cols();
  const double own = bits == kExactRationals ? 0.0 : tolerance::normal_equations_relative_bound(kappa, rows, cols, bits);
  for (Eigen::Index col = 0; col < labels.cols(); ++col) {
    // Squared norms in T (rationals have no square root), square roots in double.
    const double ref_norm = std::sqrt(ScalarTraits<T>::to_double(ref->col(col).squaredNorm()));
    const double diff_norm = std::sqrt(ScalarTraits<T>::to_double(diff.col(col).squaredNorm()));
    const double r_norm = std::sqrt(ScalarTraits<T>::to_double(residual.col(col).squaredNorm()));
    if (ref_norm == 0) {  // an exactly zero column: the fast one must be exactly zero too
      c.record_decision(diff_norm == 0);
      continue;
    }
    const double ratio = r_norm / (sigma_max * ref_norm);
    const double bound = tolerance::qr_least_squares_relative_bound(kappa, rows, cols, ratio) + own;
    c.record(diff_norm / ref_norm, bound);
  }
  char line[160];
  std::snprintf(line, sizeof line, "D: %lld × %lld, κ₂(D) ≤ %.3g", rows, cols, kappa);
  c.detail = line;
  return c;
}
}  // namespace

Comparison compare_least_squares(const MatD& design, const MatD& labels, const MatD& fast, unsigned bits) {
  if (!fast.allFinite()) {  // NaN or ±∞ in the fast W: no rational to compare it with, and never within a bound
    Comparison c;
    c.quantity = "‖w_fast − w_ref‖/‖w_ref‖ per output column";
    for (Eigen::Index col = 0; col < fast.cols(); ++col)
      if (!fast.col(col).allFinite()) c.record(std::numeric_limits<double>::quiet_NaN(), 1.0);
    c.detail = "the fast W is not finite";
    return c;
  }
  if (bits == kExactRationals) return compare_in<Rational>(design, labels, fast, bits);
  ScopedPrecision precision(bits);
  return compare_in<Mpfr>(design, labels, fast, bits);
}

Layer layer_from_stack(const std::vector<MatD>& thetas, const MatD& w_stack) {
  Layer layer;
  const Eigen::Index d = w_stack.cols();
  for (size_t i = 0; i < thetas.size(); ++i) layer.heads.push_back({thetas[i], w_stack.middleRows(i * d, d)});
  return layer;
}

template Mat<double> w_design_rows<double>(const std::vector<Mat<double>>&, const Mat<double>&);
template Mat<Mpfr> w_design_rows<Mpfr>(const std::vector<Mat<Mpfr>>&, const Mat<Mpfr>&);
template Mat<Rational> w_design_rows<Rational>(const std::vector<Mat<Rational>>&, const Mat<Rational>&);
template std::optional<Mat<double>> solve_w_stack_reference<double>(const Mat<double>&, const Mat<double>&);
template std::optional<Mat<Mpfr>> solve_w_stack_reference<Mpfr>(const Mat<Mpfr>&, const Mat<Mpfr>&);
template std::optional<Mat<Rational>> solve_w_stack_reference<Rational>(const Mat<Rational>&, const Mat<Rational>&);

}  // namespace mha
