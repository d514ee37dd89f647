// Matrix aliases every module uses and the traits of a scalar type.
// The multiprecision types live in numeric/multiprecision.hpp, included only
// by the translation units of the reference paths (they are costly to compile).
#pragma once

#include "numeric/tolerance.hpp"

#include <Eigen/Core>

#include <string>

namespace mha {

// Row-major so that row t of a token matrix is token x_t, as in MATH.md.
template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using RowVec = Eigen::Matrix<T, 1, Eigen::Dynamic>;

using MatD = Mat<double>;

// What a scalar type can do exactly. Algorithms ask these traits instead of
// hard-coding tolerances or branching on the type.
template <class T>
struct ScalarTraits;

template <>
struct ScalarTraits<double> {
  static constexpr bool exact = false;
  static constexpr bool has_transcendentals = true;
  static const char* name() { return "double"; }
  static double unit_roundoff() { return tolerance::kDoubleUnitRoundoff; }
  static double from_double(double x) { return x; }
  static double to_double(double x) { return x; }
};

template <class T>
Mat<T> cast_matrix(const MatD& a) {
  Mat<T> out(a.rows(), a.cols());
  for (Eigen::Index r = 0; r < a.rows(); ++r)
    for (Eigen::Index c = 0; c < a.cols(); ++c) out(r, c) = ScalarTraits<T>::from_double(a(r, c));
  return out;
}

template <class T>
MatD to_double_matrix(const Mat<T>& a) {
  MatD out(a.rows(), a.cols());
  for (Eigen::Index r = 0; r < a.rows(); ++r)
    for (Eigen::Index c = 0; c < a.cols(); ++c) out(r, c) = ScalarTraits<T>::to_double(a(r, c));
  return out;
}

}  // namespace mha
