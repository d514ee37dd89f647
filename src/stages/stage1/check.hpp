// Stage 1 on two paths (proofs/stage1_identities.md, "The same-sample check"): the fast
// statistic against the same statistic accumulated in MPFR on the same samples
// (stage1_same_sample_check), entrywise within its derived bound, escalated
// 128 → 256 bits before a disagreement is declared.
#pragma once

#include "numeric/comparison.hpp"
#include "stages/stage1/reference.hpp"

namespace mha {

// Samples first .. first + samples − 1 of `source`; with `layer`, the reference
// labels are recomputed in MPFR (verify, on an instance), else the source's own
// labels are used (the learner, whose data may have no layer behind them).
Comparison check_stage1(const SampleSource& source, const Layer* layer, uint64_t first, int64_t samples,
                        const Stage1Fast& fast = stage1_estimate_wsum);

}  // namespace mha
