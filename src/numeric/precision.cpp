#include "numeric/precision.hpp"

#include "numeric/multiprecision.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace mha {

ScopedPrecision::ScopedPrecision(unsigned bits) : saved_digits10_(Mpfr::default_precision()) {
  if (bits < kMinPrecisionBits || bits > kMaxPrecisionBits)
    throw std::invalid_argument("precision must be between " + std::to_string(kMinPrecisionBits) +
                                " and " + std::to_string(kMaxPrecisionBits) + " bits, got " +
                                std::to_string(bits));
  // Boost counts precision in decimal digits; round up so we get >= bits.
  Mpfr::default_precision(static_cast<unsigned>(std::ceil(bits * 0.30102999566398120)) + 1);
}

ScopedPrecision::~ScopedPrecision() { Mpfr::default_precision(saved_digits10_); }

unsigned current_precision_bits() {
  Mpfr x(0);
  return static_cast<unsigned>(mpfr_get_prec(x.backend().data()));
}

unsigned effective_precision_bits(unsigned requested) {
  ScopedPrecision precision(requested);
  return current_precision_bits();
}

Mpfr ScalarTraits<Mpfr>::unit_roundoff() {
  Mpfr u(1);
  return ldexp(u, -static_cast<int>(current_precision_bits()));
}

}  // namespace mha
