// Stage 5 by membership queries on two paths (proofs/span_by_membership.md): the
// fast span_by_membership against references on the same body, within derived bounds.
//
//   optima        each direction's max and min of ⟨u, θ⟩: the cutting-plane optimum against
//                 the full LP over every slab (ConvexBody::maximise, certified double),
//                 |v_f − v_r| ≤ e_r + P_f + (U_f − v_f)₊ (tolerance::optimum_two_paths_bound;
//                 U_f, P_f evaluated in MPFR from the fast dual and point and the reference dual);
//   certificates  the fast path's certified bound on each optimum (its cut LP's, rigorous on
//                 the cuts, hence on P) is not below the reference's verified lower bound L_r;
//   membership    every optimiser's excess over every slab, in MPFR, at most the oracle's
//                 tolerance plus the double test's error (membership_excess_evaluation_error);
//   span          the optimisers' differences D: the m − 1 leading left singular vectors of the
//                 fast JacobiSVD against those of DᵀD's eigendecomposition in MPFR (Wedin,
//                 singular_subspace_sin_bound), and the hull point (membership_hull_point_bound).
// The base point (K's minimum-norm point) is check_min_norm_point's (stages/stage3/check.hpp).
// The LPs are certified double (computed once); the MPFR parts escalate 128 → 256 bits.
#pragma once

#include "geometry/convex_body.hpp"
#include "numeric/comparison.hpp"
#include "stages/stage5/span_membership.hpp"

namespace mha {

// `fast` is span_by_membership's (or a replacement's) result on `body` with m heads.
Comparison check_span_membership(const ConvexBody& body, const MembershipSpan& fast, int m);

}  // namespace mha
