// Polishing on two paths (proofs/attention_jacobian.md, "The objective in MPFR"
// and "polish.cpp's gradient on two paths"): one Levenberg–Marquardt iteration
// of polish.cpp, computed by polish.cpp's own code (polish_iteration), against
// MPFR on the same samples, escalated 128 → 256 bits:
//
//   row              the objective E = Σ‖F(X) − Y‖²/Σ‖Y‖² as polish evaluates it
//                    (design route), at the start and at the accepted step, within
//                    the bound built from design_route_error_bound;
//   part "gradient"  the linear model's gradient Jᵀ P⊥ r against the MPFR Kaufman
//                    gradient at the same (Θ, Ŵ), within the first-order bound;
//   part "accepted step"  the fast decision E(next) < E(start) re-decided on the
//                    reference: disagree only beyond both objectives' bounds,
//                    undecided within them, not compared when no step was accepted.
#pragma once

#include "data/oracle.hpp"
#include "numeric/comparison.hpp"
#include "stages/polish/polish.hpp"

#include <functional>

namespace mha {

// polish.cpp's iteration as a replaceable fast path (stages/fast_paths.hpp).
using PolishIterationFast =
    std::function<PolishIteration(const LabelledBatch& train, const Layer& start, const PolishOptions& options)>;

// Training samples of the check: the design (N·k × m·d) must have full column
// rank, N·k ≥ m·d, and the MPFR Jacobian costs N·k·d × m·d² entries: twice the
// rank's minimum, at least 32 — max(32, ⌈2·m·d/k⌉).
int64_t polish_check_samples(int d, int k, int m);

Comparison check_polish_iteration(const PolishIteration& iteration);

// The band of the accepted step's decision E(next) < E(start): each fast objective is
// within its reference's bound, so the decision can differ from the reference's only
// when E_ref(next) − E_ref(start) lies within the two bounds' sum (one addition,
// rounded upward by bound_evaluation_factor(1)). Pinned in tests/verify/test_check_branches.cpp.
double accepted_step_band(double start_bound, double next_bound);

// polish_iteration from `layer` on samples first .. first + samples − 1 of
// `source` (samples = 0: polish_check_samples), one thread, default options,
// checked by check_polish_iteration.
Comparison check_polish(const Layer& layer, const SampleSource& source, uint64_t first, int64_t samples,
                        const PolishIterationFast& fast = polish_iteration);

}  // namespace mha
