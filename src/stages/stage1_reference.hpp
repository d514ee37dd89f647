// Reference path of stage 1 (MATH.md §3): the population value
// Σ_i M(Θ_i) W_i exactly by enumeration (data/population.hpp, k·d ≤ 20), and
// otherwise a high-precision Monte Carlo mean: the stage-1 statistic of the
// oracle's first N samples with labels computed in MPFR. On the same samples
// the fast path must agree within a derived bound (proofs/stage1_identities.md):
//   |Ŵ_fast − Ŵ_ref|_{rc} ≤ (1/N) Σ_n [ (1/k)|Σ_t x_{t,r}| Σ_t B(X_n)_{t,c} + γ_{N+2k} |s_n,rc| ] + u|Ŵ_ref,rc|,
// with B(X) = forward_error_bound(X) and s_n the sample's statistic.
#pragma once

#include "model/layer.hpp"
#include "stages/stage1_wsum.hpp"

#include <cstdint>
#include <functional>

namespace mha {

struct Stage1SameSampleCheck {
  MatD fast;          // Ŵ from the fast path on samples 0..N−1
  MatD reference;     // the same statistic with MPFR labels
  MatD bound;         // entrywise bound on |fast − reference|
  int64_t samples = 0;
  double max_abs_diff = 0;
  double max_ratio = 0;   // max |fast − reference| / bound
  double seconds_fast = 0, seconds_reference = 0;
};

// `fast` is the fast path checked (stage1_estimate_wsum; tests pass a wrong copy).
using Stage1Fast = std::function<Stage1Result(const SampleSource&, const Stage1Options&)>;
Stage1SameSampleCheck stage1_same_sample_check(const Instance& instance, uint64_t seed, int64_t samples, unsigned bits,
                                               const Stage1Fast& fast = stage1_estimate_wsum);

}  // namespace mha
