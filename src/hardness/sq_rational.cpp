// The SQ family's rationals: parsed from and printed as text ("3", "-7/4",
// "1.25"), and converted to and from doubles and MPFR numbers with a chosen
// rounding (hardness/sq_family.hpp, hardness/sq_rational.hpp).
#include "hardness/sq_family.hpp"
#include "hardness/sq_rational.hpp"

#include <algorithm>
#include <stdexcept>

namespace mha {

using boost::multiprecision::mpz_int;

namespace {
bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}
}  // namespace

bool parse_rational(const std::string& text, Rational& out) {
  if (text.empty() || text.size() > 4096) return false;
  std::string s = text;
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s = s.substr(1);
  }
  Rational value;
  if (const auto slash = s.find('/'); slash != std::string::npos) {
    const std::string num = s.substr(0, slash), den = s.substr(slash + 1);
    if (!all_digits(num) || !all_digits(den)) return false;
    const mpz_int n(num), dd(den);
    if (dd == 0) return false;
    value = Rational(n, dd);
  } else if (const auto dot = s.find('.'); dot != std::string::npos) {
    const std::string ip = s.substr(0, dot), fp = s.substr(dot + 1);
    if ((ip.empty() && fp.empty()) || (!ip.empty() && !all_digits(ip)) || (!fp.empty() && !all_digits(fp))) return false;
    mpz_int scale(1);
    for (size_t i = 0; i < fp.size(); ++i) scale *= 10;
    const mpz_int n((ip.empty() ? std::string("0") : ip) + fp);
    value = Rational(n, scale);
  } else {
    if (!all_digits(s)) return false;
    value = Rational(mpz_int(s));
  }
  out = negative ? Rational(-value) : value;
  return true;
}

std::string rational_to_string(const Rational& r) { return r.str(); }

namespace sq_detail {

double rational_to_double_mode(const Rational& r, mpfr_rnd_t mode) {
  mpfr_t t;
  mpfr_init2(t, 53);
  mpfr_set_q(t, r.backend().data(), mode);
  const double v = mpfr_get_d(t, mode);
  mpfr_clear(t);
  return v;
}
double mpfr_to_double(const Mpfr& x, mpfr_rnd_t mode) { return mpfr_get_d(x.backend().data(), mode); }
Mpfr rational_to_mpfr(const Rational& r) {
  Mpfr v(0);
  mpfr_set_q(v.backend().data(), r.backend().data(), MPFR_RNDN);
  return v;
}

}  // namespace sq_detail

double rational_to_double(const Rational& r) { return sq_detail::rational_to_double_mode(r, MPFR_RNDN); }

Rational mpfr_to_rational(const Mpfr& x) {
  mpfr_srcptr v = x.backend().data();
  if (!mpfr_number_p(v)) throw std::invalid_argument("mpfr_to_rational: value is not finite");
  if (mpfr_zero_p(v)) return Rational(0);
  mpz_t z;
  mpz_init(z);
  const mpfr_exp_t e = mpfr_get_z_2exp(z, v);
  Rational r;
  mpq_set_z(r.backend().data(), z);
  mpz_clear(z);
  if (e > 0) mpq_mul_2exp(r.backend().data(), r.backend().data(), static_cast<mp_bitcnt_t>(e));
  if (e < 0) mpq_div_2exp(r.backend().data(), r.backend().data(), static_cast<mp_bitcnt_t>(-e));
  return r;
}

}  // namespace mha
