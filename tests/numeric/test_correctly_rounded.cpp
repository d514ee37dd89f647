// The pinned hypot and cbrt (numeric/correctly_rounded.hpp) round correctly:
// checked with exact rational arithmetic, not with MPFR's own hypot or cbrt.
// A double r is the correct rounding of a positive real v when v lies between
// the midpoints of r and its neighbours, lo ≤ v ≤ hi, and at a midpoint only if
// r's last significand bit is 0 (ties to even). For hypot that is lo² ≤ a² + b²
// ≤ hi², for cbrt lo³ ≤ |x| ≤ hi³: comparisons of exact rationals.
#include "numeric/correctly_rounded.hpp"
#include "numeric/scalar.hpp"
#include "numeric/multiprecision.hpp"

#include "property.hpp"

#include <catch2/catch.hpp>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

// A named namespace: the unit tests are compiled in unity batches, where
// another file's file-local helpers would share this file's names.
namespace correctly_rounded_test {
using mha::Rational;
using mha::correctly_rounded_cbrt;
using mha::correctly_rounded_hypot;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMax = std::numeric_limits<double>::max();

double from_bits(uint64_t bits) {
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}
uint64_t bits_of(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

Rational power(const Rational& x, int n) {
  Rational p(1);
  for (int i = 0; i < n; ++i) p *= x;
  return p;
}

// Whether r ≥ 0 is the round-to-nearest-even double of v^(1/n), given v = target
// exactly (v ≥ 0): r = +∞ exactly when v^(1/n) reaches the overflow threshold
// 2¹⁰²⁴ − 2⁹⁷⁰ (the largest double plus half its ulp).
bool rounds_correctly(double r, const Rational& target, int n) {
  if (std::isinf(r)) return r > 0 && target >= power(Rational(kMax) + Rational(kMax - std::nextafter(kMax, 0.0)) / 2, n);
  if (!(r >= 0)) return false;
  if (r == 0) return target == 0;
  const double below = std::nextafter(r, 0.0);
  const Rational lo = (Rational(below) + Rational(r)) / 2;
  const Rational hi = r == kMax ? Rational(r) + (Rational(r) - Rational(below)) / 2
                                : (Rational(r) + Rational(std::nextafter(r, kInf))) / 2;
  const Rational lo_n = power(lo, n), hi_n = power(hi, n);
  const bool even = (bits_of(r) & 1) == 0;
  return (target > lo_n || (target == lo_n && even)) && (target < hi_n || (target == hi_n && even));
}

bool hypot_rounds_correctly(double a, double b, double r) {
  return rounds_correctly(r, Rational(a) * Rational(a) + Rational(b) * Rational(b), 2);
}
bool cbrt_rounds_correctly(double x, double r) {
  if (x == 0) return r == 0 && std::signbit(r) == std::signbit(x);
  if (std::signbit(r) != std::signbit(x)) return false;
  return rounds_correctly(std::fabs(r), Rational(std::fabs(x)), 3);
}

// Finite doubles from their bits: every exponent equally likely.
rc::Gen<double> any_finite() {
  return rc::gen::map(rc::gen::suchThat(rc::gen::arbitrary<uint64_t>(),
                                        [](uint64_t b) { return std::isfinite(from_bits(b)); }),
                      from_bits);
}
using HypotFunction = double (*)(double, double);
using CbrtFunction = double (*)(double);

// Which argument pairs a hypot property draws.
enum HypotArguments { kAnyTwo = 1, kNearby = 2, kSubnormal = 4, kAllArguments = 7 };

void hypot_property(const std::string& name, HypotFunction f, bool expect_pass, int which = kAllArguments) {
  const auto check = [f](double a, double b) { RC_ASSERT(hypot_rounds_correctly(a, b, f(a, b))); };
  const auto run = [&](const std::string& what, int cases, auto&& testable) {
    if (expect_pass)
      mha::test::property(name + ": " + what, cases, testable);
    else
      mha::test::property_rejects(name + ": " + what, cases, testable);
  };
  if (which & kAnyTwo)
    run("any two doubles", 2000, [check] {
      const double a = *any_finite(), b = *any_finite();
      check(a, b);
    });
  if (which & kNearby)
    run("two doubles within 2^4 binades", 2000, [check] {
      const double a = *any_finite();
      const int64_t step = *rc::gen::inRange<int64_t>(-(int64_t(1) << 56), int64_t(1) << 56);
      const double b = from_bits((bits_of(a) & ~(uint64_t(1) << 63)) + step);
      RC_PRE(std::isfinite(b));
      check(a, b);
    });
  if (which & kSubnormal)
    run("two subnormals", 1000, [check] {
      const uint64_t i = *rc::gen::inRange<uint64_t>(0, uint64_t(1) << 52), j = *rc::gen::inRange<uint64_t>(0, uint64_t(1) << 52);
      check(from_bits(i), -from_bits(j));
    });
}

void cbrt_property(const std::string& name, CbrtFunction f, bool expect_pass) {
  const auto testable = [f] {
    const double x = *any_finite();
    RC_ASSERT(cbrt_rounds_correctly(x, f(x)));
  };
  if (expect_pass)
    mha::test::property(name + ": any double", 3000, testable);
  else
    mha::test::property_rejects(name + ": any double", 3000, testable);
}

// Deliberately wrong implementations, each a mistake one could make.
double one_ulp_up_hypot(double a, double b) { return std::nextafter(correctly_rounded_hypot(a, b), kInf); }
double one_ulp_up_cbrt(double x) { return std::nextafter(correctly_rounded_cbrt(x), kInf); }
// The textbook formula: a² + b² rounded before the square root (a second rounding,
// and overflow or underflow of the squares).
double textbook_hypot(double a, double b) { return std::sqrt(a * a + b * b); }
// ∛x as x^(1/3) with 1/3 rounded to a double.
double pow_cbrt(double x) { return std::copysign(std::pow(std::fabs(x), 1.0 / 3), x); }
// MPFR's 53-bit hypot for every argument, without the subnormal path: below
// 2⁻¹⁰²² mpfr_get_d rounds the 53-bit result a second time, to fewer bits.
double mpfr_only_hypot(double a, double b) {
  mpfr_t x, y, r;
  mpfr_inits2(53, x, y, r, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_d(x, a, MPFR_RNDN);
  mpfr_set_d(y, b, MPFR_RNDN);
  mpfr_hypot(r, x, y, MPFR_RNDN);
  const double result = mpfr_get_d(r, MPFR_RNDN);
  mpfr_clears(x, y, r, static_cast<mpfr_ptr>(nullptr));
  return result;
}

TEST_CASE("correctly_rounded_hypot rounds √(a² + b²) to nearest (exact rational check)",
          "[numeric][reproducibility][correctly-rounded]") {
  hypot_property("correctly_rounded_hypot", correctly_rounded_hypot, true);
  CHECK(correctly_rounded_hypot(3, -4) == 5);
  CHECK(correctly_rounded_hypot(kMax, kMax) == kInf);
  CHECK(correctly_rounded_hypot(kMax, 0) == kMax);
  CHECK(correctly_rounded_hypot(from_bits(3), from_bits(4)) == from_bits(5));  // subnormals, exact
  CHECK(correctly_rounded_hypot(-kInf, std::nan("")) == kInf);
  CHECK(std::isnan(correctly_rounded_hypot(std::nan(""), 1)));
  const double zero = correctly_rounded_hypot(-0.0, -0.0);
  CHECK((zero == 0 && !std::signbit(zero)));
}

TEST_CASE("correctly_rounded_cbrt rounds ∛x to nearest (exact rational check)",
          "[numeric][reproducibility][correctly-rounded]") {
  cbrt_property("correctly_rounded_cbrt", correctly_rounded_cbrt, true);
  CHECK(correctly_rounded_cbrt(-27) == -3);
  CHECK(cbrt_rounds_correctly(0x1p-1074, correctly_rounded_cbrt(0x1p-1074)));
  CHECK(cbrt_rounds_correctly(-kMax, correctly_rounded_cbrt(-kMax)));
  CHECK(std::signbit(correctly_rounded_cbrt(-0.0)));
  CHECK(correctly_rounded_cbrt(-kInf) == -kInf);
  CHECK(std::isnan(correctly_rounded_cbrt(std::nan(""))));
  // `mhalearn hard --d 16 --m 3`'s (4(N − 1))^{1/3} for N = 455, where glibc's
  // x86-64 cbrt returns 12.200340400786125, one ulp above.
  CHECK(cbrt_rounds_correctly(1816, correctly_rounded_cbrt(1816)));
  CHECK(correctly_rounded_cbrt(1816) == 12.200340400786123);
}

TEST_CASE("test of the tester: the rounding check rejects hypot and cbrt one ulp off",
          "[numeric][reproducibility][correctly-rounded]") {
  hypot_property("one ulp above correctly_rounded_hypot", one_ulp_up_hypot, false);
  cbrt_property("one ulp above correctly_rounded_cbrt", one_ulp_up_cbrt, false);
  CHECK_FALSE(cbrt_rounds_correctly(1816, 12.200340400786125));
}

TEST_CASE("test of the tester: the rounding check rejects plausible wrong hypot and cbrt",
          "[numeric][reproducibility][correctly-rounded]") {
  hypot_property("sqrt(a*a + b*b)", textbook_hypot, false, kNearby);
  hypot_property("MPFR's hypot without the subnormal path", mpfr_only_hypot, false, kSubnormal);
  cbrt_property("pow(x, 1.0/3)", pow_cbrt, false);
}

}  // namespace correctly_rounded_test
