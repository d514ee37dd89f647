// Stage 6's exhaustive net on two paths (proofs/w_least_squares.md, "The net on
// two paths"): every candidate tuple's relative validation error re-evaluated in
// MPFR (designs, least squares and residual) within a propagated bound, and the
// fast winner against the reference winner (a different winner within both
// bounds is a tie: undecided).
#pragma once

#include "data/oracle.hpp"
#include "numeric/comparison.hpp"
#include "stages/stage6/net.hpp"

#include <vector>

namespace mha {

// Every tuple of `fast` (net_candidates on `source`) re-evaluated at `bits`: the
// designs of its points from the same Θ and samples, W by the normal equations,
// the validation residual; |E_fast − E_ref| per tuple within the propagated bound,
// and the fast winner equal to the reference winner or tied with it (their
// reference errors within the sum of their bounds: counted undecided).
ComparisonPart compare_net(const SampleSource& source, const NetCandidates& fast, unsigned bits);

// The winner check: `fast_winner` against the argmin of the reference objectives
// E* (the fast winner when it attains the minimum); a different winner is a tie
// (undecided) when E*_f − E*_r ≤ B_f + B_r (the edge included), else a
// disagreement. A NaN objective or bound of either is a tie: never "same".
enum class WinnerCheck { same, tie, different };
WinnerCheck check_winner(size_t fast_winner, const std::vector<double>& reference_objectives,
                         const std::vector<double>& bounds);

}  // namespace mha
