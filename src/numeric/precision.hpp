// MPFR working precision, set for a scope and restored on exit.
//
// Boost 1.74 keeps the default precision of `mpfr_float_backend<0>` in one
// process-wide variable, so reference computations run on one thread and
// every entry point states its precision with a ScopedPrecision.
#pragma once

#include "numeric/scalar.hpp"

namespace mha {

constexpr unsigned kDefaultPrecisionBits = 200;
constexpr unsigned kMinPrecisionBits = 53;
constexpr unsigned kMaxPrecisionBits = 1u << 16;

class ScopedPrecision {
 public:
  explicit ScopedPrecision(unsigned bits);
  ~ScopedPrecision();
  ScopedPrecision(const ScopedPrecision&) = delete;
  ScopedPrecision& operator=(const ScopedPrecision&) = delete;

 private:
  unsigned saved_digits10_;
};

// Bits of a freshly constructed Mpfr at the current default precision.
unsigned current_precision_bits();
// Bits an Mpfr gets under ScopedPrecision(requested) (≥ requested).
unsigned effective_precision_bits(unsigned requested);

}  // namespace mha
