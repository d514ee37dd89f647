// How much of each stage's input a reference check re-computes: the one home of
// the sample sizes that the learner's reference step (learn/reference_checks.cpp)
// and `mhalearn verify` (VerifyOptions' defaults, verify/verify.hpp) share. Effort,
// not tolerances: the MPFR paths cost 10²–10³ times the fast ones.
#pragma once

#include <cstdint>

namespace mha {

struct ReferenceSamples {
  int64_t forward = 64;          // forward: samples re-computed in MPFR
  int64_t stage1 = 2000;         // stage 1: samples of the statistic accumulated in MPFR
  int64_t certification = 200;   // stages 2 and 4: samples, every row of each (× k rows)
  int64_t selection = 1000;      // stage 3: every row of this many examined samples re-decided
  int64_t least_squares = 256;   // stage 6: design rows (× k) of least squares for W
  int64_t net = 32;              // stage 6's net: training samples, and as many for validation
  int64_t net_tuples = 28;       // stage 6's net: the coarse exhaustive level (28 tuples: 8 points for m = 2)
  int64_t polish = 0;            // polishing: 0 = polish_check_samples (the MPFR Jacobian is costly)
};

inline constexpr ReferenceSamples kReferenceSamples{};

}  // namespace mha
