// The minimum-norm point of the slabs, fast path: the dual active-set method of
// Goldfarb & Idnani ("A numerically stable dual method for solving strictly
// convex quadratic programs", Math. Programming 27, 1983) for
//
//   min ½‖θ‖²  s.t.  b_r − η_r ≤ ⟨a_r, θ⟩ ≤ b_r + η_r,
//
// in double, with the identity Hessian (so J = Q of the active normals' QR).
// Starting from θ = 0 it adds the most violated half-space (violation relative
// to ‖a_r‖) and drops active ones whose multiplier would turn negative, keeping
// a QR factorisation of the active normals by Givens updates; at the end θ is
// recomputed from that factorisation as the minimum-norm solution of the active
// equalities. The same quantity as ConvexBody::min_norm_point (CLP's barrier
// and crossover, certified a posteriori), which is its reference
// (stages/stage3/check.hpp).
//
// Contract (@fast): the returned point violates no half-space by more than
// `tolerance(r)` = 2⁻⁴⁰·(‖a_r‖₂‖θ‖₂ + |b_r| + η_r) — a solver setting, not the
// tolerance of any check; `infeasible` means the method found the slabs empty
// (a dependent constraint could not be added: no certificate). Failures are
// reported in `status` and `message`, never as a silently wrong value.
#pragma once

#include "geometry/convex_body.hpp"

#include <Eigen/Core>

#include <string>
#include <vector>

namespace mha {

struct ActiveSetResult {
  enum Status { optimal, infeasible, failed } status = failed;
  Eigen::VectorXd x;             // the minimum-norm point of the slabs (status optimal)
  std::vector<int> active;       // half-spaces active at x: 2r (lower side of slab r) or 2r + 1 (upper)
  Eigen::VectorXd multipliers;   // their Lagrange multipliers (≥ 0), x = Σ multiplier·(±a_r)
  bool inside_ball = false;      // ‖x‖ ≤ R (then x is the minimum-norm point of K)
  int iterations = 0;            // constraints added and dropped
  double max_violation = 0;      // max_r (|⟨a_r, x⟩ − b_r| − η_r)₊ at the returned x, in double
  std::string message;
};

// The half-space violation the method accepts at the end (see the contract).
double active_set_tolerance(const Slab& slab, double x_norm);

ActiveSetResult min_norm_point_active_set(const ConvexBody& body);

}  // namespace mha
