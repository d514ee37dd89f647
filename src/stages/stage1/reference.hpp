// Reference path of stage 1 (MATH.md §3.1): the population value
// Σ_i M(Θ_i) W_i exactly by enumeration (data/population.hpp, k·d ≤ 20), and
// otherwise the stage-1 statistic of the same N samples accumulated in MPFR —
// with labels recomputed in MPFR from the layer when it is known (the fast
// labels then carry the forward pass's rounding), or the source's own labels
// (a dataset: only the accumulation differs). On the same samples the fast path
// must agree within a derived bound (MATH.md §3.1, Lemma 3.1.4; proofs/stage1_identities.md):
//   |Ŵ_fast − Ŵ_ref|_{rc} ≤ (1/N) Σ_n [ p_n,rc + γ_{N+2k}(|s_n,rc| + p_n,rc) ] + u|Ŵ_ref,rc|,
//   p_n,rc = (1/k)|Σ_t x_{t,r}| Σ_t B(X_n)_{t,c},
// times bound_evaluation_factor(N + 2k + 8), with B(X) = forward_error_bound(X)
// (0 with the source's labels) and s_n the sample's statistic.
#pragma once

#include "model/layer.hpp"
#include "stages/stage1/wsum.hpp"

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

// `fast` is the fast path checked (stage1_estimate_wsum; tests pass a wrong copy),
// run on samples first .. first + samples − 1 of `source`. With `layer` the
// reference labels are F(X) in MPFR; without, the source's labels.
using Stage1Fast = std::function<Stage1Result(const SampleSource&, const Stage1Options&)>;
Stage1SameSampleCheck stage1_same_sample_check(const SampleSource& source, const Layer* layer, uint64_t first,
                                               int64_t samples, unsigned bits,
                                               const Stage1Fast& fast = stage1_estimate_wsum);

}  // namespace mha
