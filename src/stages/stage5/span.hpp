// Stage 5 (MATH.md §3.5): the span of the attention matrices from the body K of stage 2.
//
// K is long along the m−1 directions of the affine hull H = aff{Θ_1..Θ_m} (at
// least the heads' separation; up to the ball when the slabs contain H exactly)
// and thin across them, so span{Θ_i} = span{x0, hull directions} (dimension m
// when 0 ∉ H).
//
//   fast       the m−1 right singular vectors of the smallest singular values of the
//              weighted constraint matrix (ConvexBody::least_squares_centre), with the
//              number of free directions read off the largest ratio gap (find_span);
//   reference  the same quantities of the same matrix in MPFR (span_reference.hpp);
//              check.hpp compares the two within bounds derived a priori
//              (proofs/span_by_widths.md, "The span on two paths").
//
// Whether the body is thin enough for the span to be the heads' — a statistical
// outcome of the sample budget, not a property of either computation — is the
// diagnostic of widths.hpp (LP widths of K along the hull directions).
#pragma once

#include "geometry/convex_body.hpp"

#include <Eigen/Core>

#include <string>

namespace mha {

struct SpanOptions {
  double min_gap = 10;       // the fast path accepts j free directions only when s_j/s_{j−1} ≥ this
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

  // The centre's singular values and rank, for the reference comparison (check.hpp).
  Eigen::VectorXd singular_values;   // all n, ascending (the iterative centre: its min(n, 2m + 1) smallest)
  double threshold = 0;              // rank threshold s_max·n·ε
  int rank = 0;
  ConvexBody::CentreMethod centre_method = ConvexBody::CentreMethod::dense;  // how the centre was computed,
  double free_basis_residual = 0;    // and its inverse iteration's ρ (ConvexBody::Centre)
  double value_residual = 0;         // the iterative centre's other values' residual (ConvexBody::Centre)
  std::string message;               // what the fast reading noticed (no clear gap, 0 ∈ H)
  double seconds = 0;
};

// The number of free directions read off ascending singular values s (the fast
// path's rule, which the reference check re-applies): the j ≥ 1 maximising
// s_j / s_{j−1} among the smallest min(n, 2m+1), accepted when that ratio is
// ≥ min_gap (a clear gap), else 0 (nothing is clearly free). Why 2m+1: the
// expected gap sits at j = m−1, and a window of about twice that lets a wrongly
// unconstrained extra direction or two show up as a gap further right without
// reaching into the bulk, whose ratios are close to 1. Values at or below the
// rank threshold count as the threshold (at least the smallest normal double),
// so a numerically zero free value followed by a nonzero one gives a large
// ratio instead of +inf/NaN. `gap` receives the largest ratio.
int gap_dimension(const Eigen::VectorXd& s, double threshold, int m, double min_gap, double& gap);

// `centre` must be body.least_squares_centre(m − 1) (its free basis has m−1 rows;
// throws std::invalid_argument otherwise, or when m < 1).
SpanResult find_span(const ConvexBody& body, const ConvexBody::Centre& centre, int m, const SpanOptions& options);

// Largest principal angle (radians) between the row spaces of two matrices with
// orthonormal rows, over min(rows) angles; 0 when either is empty.
double largest_principal_angle(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b);

}  // namespace mha
