// Stage 3 on two paths.
//
//   the fit        W_Σ by least squares on the events the fast path kept, against the
//                  normal equations in MPFR / exact rationals (compare_least_squares,
//                  proofs/w_least_squares.md, "Fast against reference"), escalated
//                  128 → 256 bits → exact rationals; with the part
//   selection      every kept event and every row of the first examined samples
//                  re-decided with MPFR margins (selection_check.hpp).
//   the proxy      the minimum-norm point of K (the paper's proxy) by the fast dual
//                  active-set method (geometry/min_norm_active_set.hpp) against the
//                  certified QP (ConvexBody::min_norm_point: CLP with an a posteriori
//                  error bound), within the sum of the two paths' bounds
//                  (proofs/convex_body_programs.md, "The minimum-norm point on two paths").
//
// How far the proxy the learner uses (the least-squares centre, or the net's
// heads) lies from the minimum-norm point is a statistical property of the
// body, reported as a diagnostic by the learner, not compared here.
#pragma once

#include "data/oracle.hpp"
#include "geometry/convex_body.hpp"
#include "geometry/min_norm_active_set.hpp"
#include "numeric/comparison.hpp"
#include "stages/stage3/margin.hpp"

#include <functional>
#include <vector>

namespace mha {

// The fit and the selection of `fast`, a run of stage 3 on `source` from
// `first_sample` with `proxies`; `prefix_samples` rows of examined samples are
// re-decided. A run without a fit (too few events) compares nothing.
Comparison check_margin(const SampleSource& source, const std::vector<MatD>& proxies, const MarginResult& fast,
                        uint64_t first_sample, int64_t prefix_samples);

using MinNormFast = std::function<ActiveSetResult(const ConvexBody&)>;

// κ₂ of the active normals (the rows a_r of the slabs behind `active`, constraint
// index / 2, as min_norm_point_active_set numbers them), by JacobiSVD: (σ_max + δ) /
// (σ_min − δ) with δ = tolerance::jacobi_singular_value_bound(n, q)·σ_max the
// algorithm's own error (Eigen's Jacobi works on the n × q transpose's triangle); +∞
// when σ_min − δ is not positive, 1 with nothing active.
// (tests/verify/test_proxy_check_bounds.cpp pins it on hand-made normals.)
double active_condition(const ConvexBody& body, const std::vector<int>& active);

// The band of K's emptiness decision on the proxy's row: ‖θ_ref‖ against the ball's R
// within the point's bound plus one rounding of each, u(‖θ_ref‖ + R).
double ball_side_band(double point_bound, double reference_norm, double radius);

// The proxy's item when the reference certifies K empty (P = slabs ∩ box has a Farkas
// certificate): agree when the fast path finds no point of the ball; disagree when its
// point is not finite or violates a slab by more than twice its contract's tolerance
// (active_set_tolerance, plus the evaluation's rounding); undecided within that, where
// the certificate's margin is below what the fast path resolves.
void compare_empty(const ConvexBody& body, const ActiveSetResult& fast, Comparison& c);

// The proxy: `fast` (min_norm_point_active_set or a replacement) against the
// certified QP on the same body. `reference_point`, when given, receives the
// certified point (empty when the QP found none).
Comparison check_min_norm_point(const ConvexBody& body, const MinNormFast& fast = min_norm_point_active_set,
                                Eigen::VectorXd* reference_point = nullptr);
// Its decision on the two results: not compared when the certified QP failed or gave no
// certificate; compare_empty when it proves K empty; else the points within their bounds.
Comparison compare_min_norm_point(const ConvexBody& body, const ActiveSetResult& fast, const ConvexBody::QpResult& ref);

}  // namespace mha
