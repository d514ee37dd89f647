// The parts `mhalearn verify` attaches to rows 2, 3 and 4 (verify/verify.hpp):
// decisions and derived quantities of a stage re-made on the reference path.
//
//   body (2, 4)  the sculpted body from the fast certifications against the body
//                from the reference's (MPFR) certifications of the same rows:
//                slab data, membership of test points, LP widths
//                (proofs/certification.md, "The body on two paths")
//   net (6)      stage 6's exhaustive net: every candidate tuple's relative
//                validation error re-evaluated in MPFR (designs, least squares and
//                residual), and the fast winner against the reference winner
//                (proofs/w_least_squares.md, "The net on two paths")
//   selection (3) stage 3's keep/drop decision of every event it accepted and of
//                every row of the first examined samples, re-decided with MPFR
//                margins (proofs/margin_stability.md, "The selection on two paths")
//
// Items within a derived band of a threshold are *undecided*: counted, never
// counted as agreement.
#pragma once

#include "data/oracle.hpp"
#include "geometry/convex_body.hpp"
#include "stages/certify.hpp"
#include "stages/certify_reference.hpp"
#include "stages/stage3_margin.hpp"
#include "stages/stage6_net.hpp"
#include "verify/comparison.hpp"

#include <vector>

namespace mha {

// ---- stage 3

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

// Re-decides the events of `fast` (a run of stage 3 on `source` from `first_sample`
// with `proxy`): each accepted event, and every row of the first `prefix_samples`
// samples examined after the pilot, against the threshold fast.report.threshold,
// with the reference margin at `bits`.
ComparisonPart compare_selection(const SampleSource& source, const MatD& proxy, const MarginResult& fast,
                                 uint64_t first_sample, int64_t prefix_samples, unsigned bits);

// ---- stages 2 and 4

// One certified row on both paths: the fast path's slabs (FastPaths::slabs) and the
// reference's check at the same bits.
struct BodyRow {
  std::vector<SlabConstraint> fast_slabs;   // empty unless the fast path certified the row
  const CertificationCheck* check = nullptr;
};

struct BodyOptions {
  double radius = 20;        // R of the ball (SculptOptions::radius)
  int slab_directions = 4;   // widths along this many slab normals
  int random_directions = 3; // and along this many Gaussian directions
  int boundary_rays = 4;     // rays from the fast centre to the fast body's boundary
  uint64_t seed = 1;
};

// The reference's decision on a point of the reference body at `bits`: above
// (outside) when some slab's |⟨a*, θ⟩ − b*| − η* or ‖θ‖ − R exceeds its band
// (tolerance::slab_membership_band with the slab's bounds, ball_membership_band,
// plus the reference's own error), below (inside) when every one is below minus
// its band, undecided otherwise (a band's edge included).
BandSide reference_membership(const ConvexBody& reference, const std::vector<const ReferenceSlab*>& bounds,
                              const Eigen::VectorXd& theta, unsigned bits);

// Three parts: "body slabs" (b, η, a of every slab both paths build), "body
// membership" (test points: the true Θ_i, the fast centre, points at derived
// multiples of the band around the boundary along random rays) and "body widths"
// (fast against reference LP widths within lp_value_difference_bound).
std::vector<ComparisonPart> compare_body(const std::vector<BodyRow>& rows, const Layer& truth,
                                         const BodyOptions& options, unsigned bits);

// ---- stage 6

// Every tuple of `fast` (net_candidates on `source`) re-evaluated at `bits`: the
// designs of its points from the same Θ and samples, W by the normal equations,
// the validation residual; |E_fast − E_ref| per tuple within the propagated bound,
// and the fast winner equal to the reference winner or tied with it (their
// reference errors within the sum of their bounds: counted undecided).
ComparisonPart compare_net(const SampleSource& source, const NetCandidates& fast, unsigned bits);

// The winner check: `fast_winner` against the argmin of the reference objectives
// E*; a different winner is a tie (undecided) when E*_f − E*_r ≤ B_f + B_r (the
// edge included), else a disagreement.
enum class WinnerCheck { same, tie, different };
WinnerCheck check_winner(size_t fast_winner, const std::vector<double>& reference_objectives,
                         const std::vector<double>& bounds);

}  // namespace mha
