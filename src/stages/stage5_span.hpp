// Stage 5 (MATH.md §3): the span of the attention matrices from the body K of stage 2.
//
// K is long along the m−1 directions of the affine hull H = aff{Θ_1..Θ_m} (at
// least the heads' separation; up to the ball when the slabs contain H exactly)
// and thin across them, so span{Θ_i} = span{x0, hull directions} (dimension m
// when 0 ∉ H). Two readings of the hull directions:
//
//   fast       the m−1 right singular vectors of the smallest singular values of the
//              weighted constraint matrix (ConvexBody::least_squares_centre), with the
//              number of free directions read off the largest ratio gap;
//   reference  LP widths of K (ConvexBody::width, certified a posteriori) along those
//              directions and along the next smallest constrained ones: a direction is
//              wide when its width is ≥ R/10; the wide ones' optimiser differences
//              x_max − x_min span the reference hull directions.
//
// They must agree on the dimension (m−1) and within `max_angle`.
// proofs/span_by_widths.md states why widths identify the hull directions and
// where the thresholds come from.
#pragma once

#include "geometry/convex_body.hpp"

#include <Eigen/Core>

#include <string>
#include <vector>

namespace mha {

struct SpanOptions {
  int candidates = 0;        // the reference measures the widths of the m−1 free directions plus this many of
                             // the smallest constrained ones; 0 means m
  bool reference = true;     // run the LP-width reference path
  double max_angle = 0.05;   // radians: fast and reference hull directions must agree within this
  double min_gap = 10;       // the fast path accepts j free directions only when s_j/s_{j−1} ≥ this
  double wide_width = 0;     // a candidate is wide when its width is ≥ this; 0 means R/10
};

struct SpanResult {
  // Fast path (singular values of the weighted constraint matrix).
  Eigen::VectorXd hull_point;        // x0 of the centre (orthogonal to the hull directions)
  Eigen::MatrixXd hull_directions;   // (m−1)×n orthonormal rows: the centre's free basis
  Eigen::MatrixXd span_basis;        // orthonormal rows: x0's direction first, then the hull directions
                                     // (m rows; m−1 when x0 = 0, i.e. 0 ∈ H)
  int dimension_fast = 0;            // j maximising s_j/s_{j−1} (1 ≤ j < min(n, 2m+1), ascending singular
                                     // values) when that ratio is ≥ min_gap, else 0 (no clear gap)
  double gap = 0;                    // that largest ratio s_j/s_{j−1}

  // Reference path (LP widths of K).
  bool reference_run = false;
  std::vector<double> candidate_widths;      // width of P ⊇ K along each candidate (free ones first); NaN on failure
  std::vector<double> width_error_bounds;    // ≥ |candidate_widths − true width|
  std::vector<bool> width_certified;         // both LPs of the width certified
  double wide_width = 0;                     // the threshold used (options.wide_width or R/10)
  int dimension_reference = 0;               // candidates with width ≥ wide_width
  Eigen::MatrixXd reference_directions;      // orthonormal rows spanning the wide candidates' x_max − x_min
  double subspace_angle = 0;                 // largest principal angle (radians), hull vs reference directions
  bool agree = false;                        // dimension_fast = dimension_reference = m−1 and angle ≤ max_angle
  std::string message;                       // why they disagree, which LP failed or was not certified
  double seconds_fast = 0, seconds_reference = 0;
};

// `centre` must be body.least_squares_centre(m − 1) (its free basis has m−1 rows;
// throws std::invalid_argument otherwise, or when m < 1 or candidates < 0). LP
// failures are reported in `message`, never thrown.
SpanResult find_span(const ConvexBody& body, const ConvexBody::Centre& centre, int m, const SpanOptions& options);

// Largest principal angle (radians) between the row spaces of two matrices with
// orthonormal rows, over min(rows) angles; 0 when either is empty.
double largest_principal_angle(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b);

}  // namespace mha
