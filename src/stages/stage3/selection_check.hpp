// Stage 3's event selection on two paths (proofs/margin_stability.md, "The
// selection on two paths"): the keep/drop decision of every event the fast path
// accepted, and of every row of the first examined samples, re-made with the
// proxies' margins computed in MPFR. Items within a derived band of the
// threshold are *undecided*: counted, never agreement, never a disagreement.
#pragma once

#include "data/oracle.hpp"
#include "numeric/comparison.hpp"
#include "stages/stage3/margin.hpp"

#include <vector>

namespace mha {

// The reference margin of row a of x with proxy P at `bits`: the logits x_a P x_bᵀ
// in MPFR, their largest minus second largest, the argmax, and the band
// (tolerance::logit_margin_bound plus the reference's own error) within which
// the fast margin lies.
struct ReferenceMargin {
  double margin = 0;
  int argmax = 0;
  double band = 0;
};
ReferenceMargin reference_margin(const MatD& x, const MatD& proxy, int a, unsigned bits);

// The joint margin of several proxies (margin.hpp joint_margin) on the reference
// path: every proxy's argmax decided (margin beyond its band) and the same token
// gives the smallest margin with the largest band; decidedly different argmaxes
// give −∞ (never an event); anything else is undecided (nullopt).
std::optional<ReferenceMargin> reference_joint_margin(const MatD& x, const std::vector<MatD>& proxies, int a,
                                                      unsigned bits);

// Re-decides the events of `fast` (a run of stage 3 on `source` from `first_sample`
// with `proxies`): each accepted event, and every row of the first `prefix_samples`
// samples examined after the pilot, against the threshold fast.report.threshold,
// with the reference margins at `bits`.
ComparisonPart compare_selection(const SampleSource& source, const std::vector<MatD>& proxies, const MarginResult& fast,
                                 uint64_t first_sample, int64_t prefix_samples, unsigned bits);

}  // namespace mha
