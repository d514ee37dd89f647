// Conversions between the SQ family's exact rationals, MPFR numbers and doubles
// with a chosen rounding (internal to hardness/; defined in sq_rational.cpp).
#pragma once

#include "numeric/multiprecision.hpp"

namespace mha::sq_detail {

// Nearest (or upward) double of a rational, through a 53-bit MPFR number
// (correct rounding; our values are far from the subnormal range).
double rational_to_double_mode(const Rational& r, mpfr_rnd_t mode);
double mpfr_to_double(const Mpfr& x, mpfr_rnd_t mode);
// r rounded to nearest at the current MPFR precision.
Mpfr rational_to_mpfr(const Rational& r);

}  // namespace mha::sq_detail
