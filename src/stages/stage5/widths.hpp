// A diagnostic of stage 5, not a cross-check: is the sculpted body thin across
// the hull, so that the span the fast path reads off K is the heads' span?
//
// LP widths of K (ConvexBody::width, certified a posteriori) along the m−1 free
// directions of the centre and along the next smallest constrained ones: a
// direction is wide when its width is ≥ R/10; the wide ones' optimiser
// differences x_max − x_min span the "hull directions by widths". When the body
// is thin, exactly m−1 candidates are wide and their span is close to the SVD's.
// Whether that happens is a statistical outcome of the sample budget (how many
// diverse slabs certification kept), not a property of either computation, so
// a body that is not thin is reported as a diagnostic — never as a disagreement
// of two paths (proofs/span_by_widths.md).
#pragma once

#include "geometry/convex_body.hpp"

#include <Eigen/Core>

#include <string>
#include <vector>

namespace mha {

struct WidthsOptions {
  int candidates = 0;        // widths along the m−1 free directions plus this many of the smallest
                             // constrained ones; 0 means m
  double wide_width = 0;     // a candidate is wide when its width is ≥ this; 0 means R/10
  double max_angle = 0.05;   // radians: the body counts as thin when the angle to the SVD's hull
                             // directions is at most this (a stated threshold of the diagnostic)
};

struct BodyWidths {
  std::vector<double> candidate_widths;      // width of P ⊇ K along each candidate (free ones first); NaN on failure
  std::vector<double> width_error_bounds;    // ≥ |candidate_widths − true width|
  std::vector<bool> width_certified;         // both LPs of the width certified
  double wide_width = 0;                     // the threshold used
  int dimension = 0;                         // candidates with width ≥ wide_width
  Eigen::MatrixXd directions;                // orthonormal rows spanning the wide candidates' x_max − x_min
  double angle = 0;                          // largest principal angle (radians), SVD vs width hull directions
  bool thin = false;                         // every LP measured, dimension = m − 1 and angle ≤ max_angle
  std::string message;                       // which LP failed or was not certified, what is not thin
  double seconds = 0;
};

// `centre` must be body.least_squares_centre(m − 1) (throws std::invalid_argument
// otherwise, or when m < 1 or candidates < 0). LP failures are reported in
// `message`, never thrown.
BodyWidths body_widths(const ConvexBody& body, const ConvexBody::Centre& centre, int m, const WidthsOptions& options);

}  // namespace mha
