// Reference path of stage 5 (MATH.md §3.5): the same quantity as the fast path —
// the singular values and right singular vectors of the weighted constraint
// matrix M of ConvexBody::least_squares_centre, the free directions and the
// hull point x0 — computed in MPFR.
//
// M and c are formed from the slab data in MPFR (w_r = 1/max(η_r, φ_r),
// φ_r = n·u·(|b_r| + ‖a_r‖₂R), rows w_r a_rᵀ, entries w_r b_r), the Gram
// matrix G = MᵀM = Σ_r w_r² a_r a_rᵀ and Mᵀc are accumulated at the working
// precision, and G's eigendecomposition (Eigen's SelfAdjointEigenSolver over
// MPFR) gives s_j = √λ_j and the right singular vectors. Forming G squares the
// condition number, which costs 2·log₂(s_max/s_min) of the precision's bits —
// at 128 bits and s_max/s_min ≤ 10¹², still ≥ 48 bits beyond double.
//
// The comparison with the fast path, and why its bound holds, is in
// stages/stage5/check.hpp and proofs/span_by_widths.md, "The span on two paths".
#pragma once

#include "geometry/convex_body.hpp"

#include <Eigen/Core>

namespace mha {

struct SpanReference {
  Eigen::VectorXd singular_values;   // all n, ascending (zeros when N < n), rounded once to double
  Eigen::MatrixXd free_basis;        // free × n orthonormal rows: the vectors of the `free` smallest values
  Eigen::VectorXd x0;                // Σ_j (v_jᵀMᵀc / s_j²) v_j over the n − free largest with s_j > threshold
  double threshold = 0;              // s_max·n·2⁻⁵², the fast path's rank threshold, at the reference's s_max
  int rank = 0;                      // #{ s_j > threshold }
  double frobenius = 0;              // ‖M‖_F
  double c_norm = 0;                 // ‖c‖₂
  double weighted_residual = 0;      // ‖M x0 − c‖₂
  unsigned bits = 0;
  double seconds = 0;
};

// Throws std::invalid_argument unless 0 ≤ free ≤ body.dim().
SpanReference span_reference(const ConvexBody& body, int free, unsigned bits);

}  // namespace mha
