// Stage 6's exhaustive net on two paths (proofs/w_least_squares.md, "The net on
// two paths"): every candidate tuple's relative validation error re-evaluated in
// MPFR (designs, least squares and residual) within a propagated bound, and the
// fast winner against the reference winner (a different winner within both
// bounds is a tie: undecided).
#pragma once

#include "data/oracle.hpp"
#include "numeric/comparison.hpp"
#include "stages/stage6/net.hpp"

#include <limits>
#include <vector>

namespace mha {

// Every tuple of `fast` (net_candidates on `source`) re-evaluated at `bits`: the
// designs of its points from the same Θ and samples, W by the normal equations,
// the validation residual; |E_fast − E_ref| per tuple within the propagated bound,
// and the fast winner equal to the reference winner or tied with it (their
// reference errors within the sum of their bounds: counted undecided).
ComparisonPart compare_net(const SampleSource& source, const NetCandidates& fast, unsigned bits);

// One tuple's bound |E_fast − E*| ≤ B from the doubles the reference computes
// (proofs/w_least_squares.md, "The net on two paths"): the training design's singular
// values s_hi, s_lo by Jacobi on its rounding (σ_min, σ_max widened by Jacobi's error and
// u‖D‖_F), the fast designs' entrywise error norms, W*'s and the residuals' norms, and
// the sizes. +∞ (bound) when σ_min is not above the training design's error.
struct NetTupleInputs {
  double s_hi = 0, s_lo = 0;             // largest and smallest singular value of fl(D_train)
  double design_fro = 0;                 // ‖fl(D_train)‖_F
  double train_error_fro = 0;            // ‖|D̂_train − D_train|‖_F (entrywise bounds)
  double validation_error_fro = 0;       // the same for the validation design
  double validation_design_fro = 0;      // ‖D_val‖_F
  double w_fro = 0;                      // ‖W*‖_F
  double train_residual_fro = 0;         // ‖D_train W* − Y_train‖_F
  double train_labels_fro = 0;           // ‖Y_train‖_F
  double validation_residual = 0;        // ρ = ‖D_val W* − Y_val‖_F
  double validation_labels2 = 0;         // ‖Y_val‖²
  double objective = 0;                  // E* = ρ²/‖Y_val‖²
  long long rows = 0, validation_rows = 0, cols = 0, m = 0, d = 0;
  unsigned bits = 128;
};
struct NetTupleBound {
  double sigma_min = 0, train_error = 0;                // σ_min(D) lowered, ‖D̂ − D‖₂'s bound
  double validation_error = 0;                          // ‖D̂_val − D_val‖₂'s bound
  double dw_design = 0, dw_solve = 0, dw_reference = 0;  // the W error's three parts
  double residual_error = 0;                             // ‖R̂ − R*‖_F
  double bound = std::numeric_limits<double>::infinity();
};
NetTupleBound net_tuple_bound(const NetTupleInputs& inputs);

// One row of a net point's design on two paths: the entrywise bound on |D̂ − D| for the
// row (n, a) = A(X_n)[a,:] X_n. The fast logits fl(fl(XΘ)Xᵀ) are within
// logit_error = γ_{2d}·max_b (|X||Θ||X|ᵀ)[a,b] of the exact ones (Higham (3.13); evaluated
// with 2d + 2 roundings); the softmax's relative error follows from that error and the
// row's logit span (max − min of `logits`, the row's logits rounded to double) widened by
// it (double_softmax_relative_error), then A X's
// (design_entry_relative_error); the bound on row entry c is that relative error times
// (Â|X|)_c, times (1 + γ_{k+3}) for the k-term sums of Â|X| in double.
double net_logit_error(double abs_logit_row_max, long long d);
// `tokens` is X_n (its entries' absolute values are taken here, in the product's own form).
RowVec<double> net_design_row_error(double logit_error, const RowVec<double>& logits, const RowVec<double>& attention,
                                    const MatD& tokens);

// The winner check: `fast_winner` against the argmin of the reference objectives
// E* (the fast winner when it attains the minimum); a different winner is a tie
// (undecided) when E*_f − E*_r ≤ B_f + B_r (the edge included), else a
// disagreement. A NaN objective or bound of either is a tie: never "same".
enum class WinnerCheck { same, tie, different };
// The argmin of the reference objectives that are numbers; among equal least ones the
// fast winner (when it is a tuple), else the first.
size_t reference_winner(size_t fast_winner, const std::vector<double>& reference_objectives);
WinnerCheck check_winner(size_t fast_winner, const std::vector<double>& reference_objectives,
                         const std::vector<double>& bounds);

}  // namespace mha
