#include "stages/w_least_squares.hpp"

#include "numeric/multiprecision.hpp"

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
