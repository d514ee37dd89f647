// Stage 5 on two paths (proofs/span_by_widths.md, "The span on two paths"): the
// fast span (find_span on the double SVD of the weighted constraint matrix M)
// against span_reference (the same quantities of the same M in MPFR), escalated
// 128 → 256 bits before a disagreement is declared.
//
// With ε_M = tolerance::svd_backward_error(N, n)·‖M‖_F (streamed_svd_backward_error
// for the streamed centre) the bound on the fast SVD's backward error (‖E‖₂, the reference's ‖M‖_F), the row compares
//   the hull directions   sin θ(fast, reference) ≤ tolerance::singular_subspace_sin_bound
//                         (Wedin, with the reference's gap s_m − s_{m−1});
// and its parts
//   singular values       |ŝ_j − s_j| ≤ ε_M for every j (Weyl);
//   dimension             the gap rule (gap_dimension) re-applied to every value within
//                         ε_M of the reference's: decided when every such value gives the
//                         same dimension, then it must be the fast one;
//   hull point            ‖x̂0 − x0‖ ≤ tolerance::hull_point_bound, when the kept set
//                         (constrained values above the rank threshold) is decided.
// An item whose bound is not finite (no separation at this accuracy) or whose
// decision is within its band is *undecided*: counted, never agreement, never a
// disagreement.
#pragma once

#include "geometry/convex_body.hpp"
#include "numeric/comparison.hpp"
#include "stages/stage5/span.hpp"

#include <optional>

namespace mha {

// `fast` is find_span's (or a replacement's) result on `body` with m heads; a
// centre the streamed method computed (fast.centre_method) is compared with
// tolerance::streamed_svd_backward_error at its own ρ (fast.free_basis_residual).
Comparison check_span(const ConvexBody& body, const SpanResult& fast, int m, const SpanOptions& options);

// The dimension part's decision: the fast gap rule (gap_dimension) re-applied to every
// vector of singular values within `e` of `s` and every rank threshold within
// `e_threshold` of `threshold`. Returns the dimension when all of them give the same
// one, 0 when none of them can pass min_gap, and nothing (undecided) otherwise, or
// when any argument is NaN or ±∞.
// (tests/verify/test_span_gap_rule.cpp: soundness against gap_dimension on
// perturbed values, exactness at e = 0.)
std::optional<int> decided_gap_dimension(const Eigen::VectorXd& s, double threshold, double e, double e_threshold,
                                         int m, double min_gap);

}  // namespace mha
