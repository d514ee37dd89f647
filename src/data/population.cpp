#include "data/population.hpp"

#include "model/reference.hpp"
#include "numeric/precision.hpp"

#include <stdexcept>
#include <string>

namespace mha {

namespace {
void require_enumerable(int k, int d) {
  if (k < 1 || d < 1 || k * d > kMaxEnumerationBits)
    throw std::invalid_argument("exhaustive enumeration needs 1 <= k*d <= " +
                                std::to_string(kMaxEnumerationBits) + ", got k*d = " + std::to_string(k * d));
}

template <class T>
T inverse_count(int k, int d) {
  return T(1) / T(static_cast<unsigned long long>(uint64_t{1} << (k * d)));
}
}  // namespace

template <class T>
Mat<T> expect_xt_a_x(const Mat<T>& a, int d) {
  const int k = static_cast<int>(a.rows());
  require_enumerable(k, d);
  Mat<T> sum = Mat<T>::Zero(d, d);
  for_each_boolean_input<T>(k, d, [&](const Mat<T>& x) { sum += x.transpose() * a * x; });
  return sum * inverse_count<T>(k, d);
}

template <class T>
Mat<T> population_m_fixed_pattern(const Mat<T>& s, int d) {
  const int k = static_cast<int>(s.rows());
  const Mat<T> j_times_s = Mat<T>::Ones(k, k) * s;
  return expect_xt_a_x<T>(j_times_s, d) / T(k);
}

template <class T>
Mat<T> population_m(const Mat<T>& theta, int k) {
  const int d = static_cast<int>(theta.rows());
  require_enumerable(k, d);
  Mat<T> sum = Mat<T>::Zero(d, d);
  const Mat<T> ones = Mat<T>::Ones(k, k);
  for_each_boolean_input<T>(k, d, [&](const Mat<T>& x) {
    sum += x.transpose() * ones * attention<T>(theta, x) * x;
  });
  return sum * inverse_count<T>(k, d) / T(k);
}

template <class T>
Mat<T> population_stage1(const LayerT<T>& layer, int k) {
  const int d = layer.d();
  require_enumerable(k, d);
  Mat<T> sum = Mat<T>::Zero(d, d);
  const Mat<T> ones = Mat<T>::Ones(k, k);
  for_each_boolean_input<T>(k, d, [&](const Mat<T>& x) {
    sum += x.transpose() * ones * forward_reference<T>(layer, x);
  });
  return sum * inverse_count<T>(k, d) / T(k);
}

template Mat<Rational> expect_xt_a_x<Rational>(const Mat<Rational>&, int);
template Mat<Mpfr> expect_xt_a_x<Mpfr>(const Mat<Mpfr>&, int);
template Mat<Rational> population_m_fixed_pattern<Rational>(const Mat<Rational>&, int);
template Mat<Mpfr> population_m<Mpfr>(const Mat<Mpfr>&, int);
template Mat<double> population_m<double>(const Mat<double>&, int);
template Mat<Mpfr> population_stage1<Mpfr>(const LayerT<Mpfr>&, int);

MatD population_stage1_mpfr(const Layer& layer, int k, unsigned bits) {
  ScopedPrecision precision(bits);
  return to_double_matrix(population_stage1<Mpfr>(convert_layer<Mpfr>(layer), k));
}

}  // namespace mha
