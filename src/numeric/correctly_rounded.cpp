#include "numeric/correctly_rounded.hpp"

#include <gmp.h>
#include <mpfr.h>

#include <cmath>

namespace mha {
namespace {

// Three MPFR numbers of a double's 53 bits, one set per thread (the geometry's
// OpenMP loops call these). MPFR's exponent range is left as it is (far wider
// than a double's): its 53-bit result is the double's correct rounding whenever
// that double is normal, and overflows to ±∞ in mpfr_get_d exactly where
// IEEE 754 round-to-nearest does.
struct Scratch {
  mpfr_t x, y, r;
  Scratch() { mpfr_inits2(53, x, y, r, static_cast<mpfr_ptr>(nullptr)); }
  ~Scratch() { mpfr_clears(x, y, r, static_cast<mpfr_ptr>(nullptr)); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};
Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

constexpr double kSmallestNormal = 0x1p-1022;
constexpr double kSubnormalUnit = 0x1p-1074;  // the spacing of doubles below 2⁻¹⁰²¹

// hypot of two subnormal (or zero) magnitudes a = i·2⁻¹⁰⁷⁴, b = j·2⁻¹⁰⁷⁴: the
// result lies below √2·2⁻¹⁰²² < 2⁻¹⁰²¹, where doubles are the multiples of
// 2⁻¹⁰⁷⁴, so it is s·2⁻¹⁰⁷⁴ with s = √(i² + j²) rounded to an integer.
// n = i² + j² = s₀² + rem (s₀ = ⌊√n⌋); √n > s₀ + ½ ⇔ n > s₀² + s₀ + ¼ ⇔ rem > s₀
// (integers): no ties. Exact integer arithmetic, so no double rounding.
double subnormal_hypot(double a, double b) {
  const auto i = static_cast<unsigned long>(a / kSubnormalUnit);  // exact: i < 2⁵²
  const auto j = static_cast<unsigned long>(b / kSubnormalUnit);
  mpz_t n, s, rem;
  mpz_inits(n, s, rem, nullptr);
  mpz_set_ui(n, i);
  mpz_mul_ui(n, n, i);
  mpz_set_ui(s, j);
  mpz_addmul_ui(n, s, j);  // n = i² + j²
  mpz_sqrtrem(s, rem, n);
  if (mpz_cmp(rem, s) > 0) mpz_add_ui(s, s, 1);
  const double result = static_cast<double>(mpz_get_ui(s)) * kSubnormalUnit;  // s ≤ 2⁵³: exact
  mpz_clears(n, s, rem, nullptr);
  return result;
}

}  // namespace

double correctly_rounded_hypot(double a, double b) {
  a = std::fabs(a);
  b = std::fabs(b);
  if (a < kSmallestNormal && b < kSmallestNormal) return subnormal_hypot(a, b);  // false for NaN
  Scratch& s = scratch();
  mpfr_set_d(s.x, a, MPFR_RNDN);  // exact: 53 bits hold any double
  mpfr_set_d(s.y, b, MPFR_RNDN);
  mpfr_hypot(s.r, s.x, s.y, MPFR_RNDN);  // ≥ max(a, b) ≥ 2⁻¹⁰²²: a normal double or beyond
  return mpfr_get_d(s.r, MPFR_RNDN);   // exact, or ±∞ past the largest double
}

double correctly_rounded_cbrt(double x) {
  // |∛x| ≥ ∛(2⁻¹⁰⁷⁴) > 2⁻³⁵⁹ and < 2³⁴²: always a normal double.
  Scratch& s = scratch();
  mpfr_set_d(s.x, x, MPFR_RNDN);
  mpfr_cbrt(s.r, s.x, MPFR_RNDN);
  return mpfr_get_d(s.r, MPFR_RNDN);
}

}  // namespace mha
