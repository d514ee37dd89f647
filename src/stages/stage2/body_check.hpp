// The sculpted body of stages 2 and 4 on two paths (proofs/certification.md,
// "The body on two paths"): the body built from the fast certifications of a set
// of rows against the body built from the reference's (MPFR) certifications of
// the same rows — slab data, membership of test points, LP widths.
// Items within a derived band of a threshold are *undecided*: counted, never
// agreement, never a disagreement.
#pragma once

#include "geometry/convex_body.hpp"
#include "model/layer.hpp"
#include "numeric/comparison.hpp"
#include "stages/stage2/certify.hpp"
#include "stages/stage2/certify_reference.hpp"

#include <optional>
#include <vector>

namespace mha {

// One certified row on both paths: the fast path's slabs (slabs_of_row) and the
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
// membership" (test points: the true Θ_i when `truth` is given, the fast centre,
// points at derived multiples of the band around the boundary along random
// rays) and "body widths" (fast against reference LP widths within
// lp_value_difference_bound, along slab normals, the true hull direction when
// known, and random directions). d and m are the layer's.
// The widths part's directions: the first min(slab_directions, N) reference slab normals,
// Θ_1 − Θ_2 when `truth` has two heads or more, and `random_directions` distinct Gaussian
// directions (the verify stream, indices 200, 201, …), each of unit norm.
std::vector<Eigen::VectorXd> width_directions(const ConvexBody& reference, int d, const Layer* truth,
                                              const BodyOptions& options);
// The widths part's pieces, named so that each is pinned to its formula
// (tests/verify/test_body_width_bound.cpp, on hand-made LP results and slab bounds).
//
// The LP value's shift under the slabs' data errors, for the dual multipliers y of one
// side's certificate: Σ_r |y_r| (Δb_r + Δη_r + R‖Δa_r‖₁) with the a priori bounds of
// `bounds` (one per slab, in the bodies' order), rounded upward by its evaluation factor
// (3N roundings of nonnegative terms: tolerance::bound_evaluation_factor(4N + 4)).
double dual_shift(const Eigen::VectorXd& y, const std::vector<const ReferenceSlab*>& bounds, double radius);
// The width of a bracket [lower, upper] around an LP's value, the value included.
double bracket_gap(const ConvexBody::LpResult& r);
// Both bodies' widths rest on rigorous brackets: all four LPs optimal and certified.
bool widths_certified(const ConvexBody::Width& fast, const ConvexBody::Width& reference);
// |w_fast − w_ref|'s bound: tolerance::lp_value_difference_bound for the maximum and the
// minimum (their bracket gaps and dual shifts), plus the widths' rounding — u(|w_fast| +
// |w_ref|), or u(|w_fast| + 2|w_exact|) when the reference width is the exact programs'
// (its conversion to double) — times the evaluation factor of the three-term sum.
double width_difference_bound(const ConvexBody::Width& fast, const ConvexBody::Width& reference,
                              const std::optional<double>& exact_reference_width,
                              const std::vector<const ReferenceSlab*>& bounds, double radius);

std::vector<ComparisonPart> compare_body(const std::vector<BodyRow>& rows, int d, int m, const Layer* truth,
                                         const BodyOptions& options, unsigned bits);

}  // namespace mha
