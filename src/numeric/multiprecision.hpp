// Scalar types of the reference path: MPFR (precision chosen at run time)
// and, where a stage needs no transcendental function, exact GMP rationals.
// Both are `et_off` number types: expression templates crash inside Eigen's
// decompositions. Boost's eigen.hpp supplies Eigen::NumTraits for them
// (its lowest() is wrong, so no code here relies on NumTraits::lowest()).
#pragma once

#include "numeric/scalar.hpp"

#include <boost/multiprecision/eigen.hpp>
#include <boost/multiprecision/gmp.hpp>
#include <boost/multiprecision/mpfr.hpp>

namespace mha {

using Mpfr = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<0>,
                                           boost::multiprecision::et_off>;
using Rational = boost::multiprecision::number<boost::multiprecision::gmp_rational,
                                               boost::multiprecision::et_off>;

template <>
struct ScalarTraits<Mpfr> {
  static constexpr bool exact = false;
  static constexpr bool has_transcendentals = true;
  static const char* name() { return "mpfr"; }
  // 2^-p for the current default precision p (bits).
  static Mpfr unit_roundoff();
  static Mpfr from_double(double x) { return Mpfr(x); }
  static double to_double(const Mpfr& x) { return x.convert_to<double>(); }
};

template <>
struct ScalarTraits<Rational> {
  static constexpr bool exact = true;
  static constexpr bool has_transcendentals = false;
  static const char* name() { return "rational"; }
  static Rational unit_roundoff() { return Rational(0); }
  // Every finite double is a dyadic rational: the conversion is exact.
  static Rational from_double(double x) { return Rational(x); }
  static double to_double(const Rational& x) { return x.convert_to<double>(); }
};

inline Mpfr exp_of(const Mpfr& x) { return boost::multiprecision::exp(x); }

}  // namespace mha

// Eigen 3.4's generic hypot needs NumTraits<T>::infinity() and quiet_NaN(), which
// Boost 1.74's NumTraits for MPFR lacks; MPFR's own hypot is correctly rounded
// (SelfAdjointEigenSolver calls it in its QR steps).
namespace Eigen::internal {
template <>
struct hypot_impl<mha::Mpfr> {
  static mha::Mpfr run(const mha::Mpfr& x, const mha::Mpfr& y) { return boost::multiprecision::hypot(x, y); }
};
}  // namespace Eigen::internal

namespace mha {
// Rationals have no exp: rational paths never call softmax (see data/population.hpp).

}  // namespace mha
