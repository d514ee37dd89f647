// Row softmax, stable for logits up to ±1e6 on every path: each row is shifted
// by its maximum first (softmax is invariant to adding a constant to a row),
// so the largest exponent is exp(0) = 1 and nothing overflows.
#pragma once

#include "numeric/scalar.hpp"

#include <cmath>

namespace mha {

inline double exp_of(double x) { return std::exp(x); }
// The MPFR overload is in numeric/multiprecision.hpp.

template <class T>
void softmax_row_inplace(Eigen::Ref<RowVec<T>> row) {
  T top = row(0);
  for (Eigen::Index j = 1; j < row.size(); ++j)
    if (row(j) > top) top = row(j);
  T total(0);
  for (Eigen::Index j = 0; j < row.size(); ++j) {
    row(j) = exp_of(T(row(j) - top));
    total += row(j);
  }
  for (Eigen::Index j = 0; j < row.size(); ++j) row(j) /= total;
}

template <class T>
Mat<T> softmax_rows(Mat<T> logits) {
  for (Eigen::Index r = 0; r < logits.rows(); ++r) {
    RowVec<T> row = logits.row(r);
    softmax_row_inplace<T>(row);
    logits.row(r) = row;
  }
  return logits;
}

}  // namespace mha
