// Stage 6's linear step (MATH.md §3.6, Lemmas 3.6.1–3.6.2): for fixed candidate Θ_1..Θ_m the layer is
// linear in the W_i,
//
//   y_a = Σ_i (A_i(X)[a,:] X) W_i,
//
// so one design row per (sample n, row a),  D[(n,a), i·d + r] = (A_i(X_n)[a,:] X_n)_r,
// is shared by all d output columns, and W_stack = [W_1; …; W_m] (md × d) solves
//
//   min ‖D W_stack − Y‖_F   ⇔   (DᵀD) W_stack = DᵀY   when D has full column rank.
//
// Claim (property_tests/w_least_squares_exact.cpp, proofs/w_least_squares.md): when
// the candidate Θs are the true ones and D has full column rank, the solution is
// exactly the true W_i — checked in exact rationals, where attention weights are
// rational because the logits are integer multiples of ln q.
#pragma once

#include "model/layer.hpp"
#include "numeric/comparison.hpp"

#include <optional>
#include <vector>

namespace mha {

// The k design rows of one sample: row a is [A_1[a,:] X, …, A_m[a,:] X] (k × md).
template <class T>
Mat<T> w_design_rows(const std::vector<Mat<T>>& attentions, const Mat<T>& x);

// Reference path: the normal equations solved by Gauss–Jordan elimination with
// largest-magnitude pivots — exact for rationals. nullopt when DᵀD is singular
// (exactly, for rationals; a zero pivot for the other types).
template <class T>
std::optional<Mat<T>> solve_w_stack_reference(const Mat<T>& design, const Mat<T>& labels);

// Fast path: column-pivoting Householder QR of D in double (no squaring of the
// condition number, which polishing to 1e−12 needs). nullopt when rank(D) < md.
std::optional<MatD> solve_w_stack(const MatD& design, const MatD& labels);

// Fast against reference on the same double design and labels
// (proofs/w_least_squares.md, "Fast against reference"): the normal equations
// solved at `bits` (or exactly in rationals, bits = kExactRationals — every double
// is a rational, so this is the exact least-squares solution of the data the fast
// path saw) against the fast answer, column by column, relative to the
// reference's column norm, within tolerance::qr_least_squares_relative_bound
// (+ the reference's own error at `bits`). κ₂(D) is computed independently of
// both answers (double SVD of D, σ_min lowered by its own rounding).
Comparison compare_least_squares(const MatD& design, const MatD& labels, const MatD& fast, unsigned bits);

// Split W_stack (md × d) into the heads' W_i, with the given Θ_i.
Layer layer_from_stack(const std::vector<MatD>& thetas, const MatD& w_stack);

}  // namespace mha
