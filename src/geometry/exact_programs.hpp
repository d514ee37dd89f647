// Reference path of the convex body's programs: exact, with CGAL's QP solver.
//
// The same programs as ConvexBody::maximise/minimise (LP over the polytope
// P = slabs ∩ box |θ_c| ≤ R) and ConvexBody::min_norm_point (min ½‖θ‖² over the
// slabs alone), solved exactly: every double of the input is a dyadic rational,
// converted exactly to CGAL::Gmpzf, and b_r ± η_r are formed exactly; CGAL's
// solver works in exact arithmetic (Gmpzf) and returns the optimum and the
// solution as exact quotients, converted here to mha::Rational without rounding.
// No tolerance appears anywhere on this path.
//
// Cost: CGAL's exact simplex pivots on a basis of up to min(#rows, n) exact
// numbers whose bit length grows with the pivots; meant for small bodies
// (n = d² ≤ 36, up to ~100 slabs), where one program takes milliseconds to about a
// second. Do not call it at the learner's size (n = 256, 1000 slabs).
//
// Also an exact membership verifier (independent of both solvers).
#pragma once

#include "geometry/convex_body.hpp"
#include "numeric/multiprecision.hpp"

#include <string>
#include <vector>

namespace mha {

enum class ExactStatus { optimal, infeasible, unbounded };
const char* to_string(ExactStatus s);

struct ExactLpResult {
  ExactStatus status = ExactStatus::infeasible;
  Rational value;              // the exact optimum (when optimal)
  std::vector<Rational> x;     // an exact optimal point (when optimal)
};

// max / min ⟨u, θ⟩ over P, exactly. u must have body.dim() finite entries (throws otherwise).
ExactLpResult exact_maximise(const ConvexBody& body, const Eigen::VectorXd& u);
ExactLpResult exact_minimise(const ConvexBody& body, const Eigen::VectorXd& u);

// Minimum-norm point of the slabs alone, exactly; `infeasible` when P = slabs ∩ box
// is empty (checked first with an exact LP), as in ConvexBody::min_norm_point.
struct ExactQpResult {
  ExactStatus status = ExactStatus::infeasible;
  std::vector<Rational> x;     // the exact minimum-norm point of the slabs (when optimal)
  Rational norm_squared;       // ‖x‖² exactly
  bool inside_ball = false;    // ‖x‖² ≤ R² exactly, i.e. K ≠ ∅ and x is its minimum-norm point
};
ExactQpResult exact_min_norm_point(const ConvexBody& body);

// Exact membership: every slab |⟨a_r,θ⟩ − b_r| ≤ η_r and ‖θ‖² ≤ R², in rational arithmetic.
bool exact_contains(const ConvexBody& body, const std::vector<Rational>& theta);
bool exact_contains(const ConvexBody& body, const Eigen::VectorXd& theta);
// Exact largest slab violation max_r (|⟨a_r,θ⟩ − b_r| − η_r)_+ (the ball is not included).
Rational exact_slab_violation(const ConvexBody& body, const std::vector<Rational>& theta);

std::vector<Rational> to_rational(const Eigen::VectorXd& v);
// ‖a − b‖² exactly.
Rational squared_distance(const std::vector<Rational>& a, const std::vector<Rational>& b);

}  // namespace mha
