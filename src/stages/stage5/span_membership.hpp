// Stage 5 as the paper's sources state it (MATH.md §3.5): "use membership queries to
// this convex body to extract a close approximation to the span of the attention
// matrices" (the summary's phase 5).
//
// The body K is reached only through its separation oracle: at a point θ it answers
// with the slabs θ violates beyond a stated tolerance (the most violated first, at
// most `cuts_per_query` of them), or with none. Separation gives linear optimisation
// (Grötschel, Lovász & Schrijver): by cutting planes, max ⟨u, θ⟩ is solved over the
// box |θ_c| ≤ R and the cuts received so far, the oracle is asked at the optimiser,
// and its cuts are added, until it answers none — then the optimiser is a point of P
// (ConvexBody's polytope: the slabs and the box) that maximises ⟨u, ·⟩ over a
// superset of P, i.e. over P. The final cut set's LP is solved once more with its
// certificate (ConvexBody::maximise): the dual of a subset of the slabs is a dual of
// all of them (Lemma 3.2.5), so its upper bound holds for P.
//
// The span: K lies within its thickness ε of the affine hull H of the heads and is
// longer along H. Along a random unit direction u, the maximiser and minimiser of
// ⟨u, θ⟩ over K differ mostly along H: H's share of ⟨u, θ⟩ is of order L/√n (L the
// body's extent along H), the thickness's at most ε — the sources' condition
// ε ≪ 1/√n (slides, "Approximation errors: issue #2"). With r such directions the
// differences D = [x_max − x_min] (n × r) have m − 1 singular values of order L and
// the rest of order ε: their m − 1 leading left singular vectors are the hull's
// directions, s_{m−1}/s_m says how clearly (the gap), and with a point of K — its
// minimum-norm point, stage 3's fast path — they give span{Θ_i} = span{p0, H's
// directions} (dimension m when 0 ∉ H).
//
// Reference: span_membership_reference.hpp (each optimum against the full LP over
// every slab, the optimisers' membership in MPFR, the SVD of D in MPFR).
#pragma once

#include "geometry/convex_body.hpp"
#include "geometry/min_norm_active_set.hpp"

#include <Eigen/Core>

#include <cstdint>
#include <string>
#include <vector>

namespace mha {

struct MembershipSpanOptions {
  int directions = 0;        // random directions r; 0: m (m − 1 span the hull, one more shows the gap)
  uint64_t seed = 1;         // of the directions (Philox, Stream::span_directions)
  int cuts_per_query = 0;    // most violated slabs the oracle returns per query; 0: max(16, n/8)
  int64_t max_queries = 0;   // per optimisation; 0: N + 10 (each query adds at least one new cut)
};

// max and min of ⟨u, θ⟩ over P by cutting planes.
struct MembershipOptimum {
  Eigen::VectorXd direction;           // the unit direction u
  Eigen::VectorXd x_max, x_min;        // the optimisers (points of P within the oracle's tolerance)
  double value_max = 0, value_min = 0; // ⟨u, x_max⟩, ⟨u, x_min⟩ in double
  // The cut LPs' certificates: max_P ⟨u, θ⟩ ≤ upper_max and min_P ⟨u, θ⟩ ≥ lower_min, rigorous
  // (ConvexBody::maximise on the final cut set); their dual vectors, over every slab of the
  // body (0 off the cuts), as ConvexBody returns them for max ⟨u,·⟩ and for max ⟨−u,·⟩.
  double upper_max = 0, lower_min = 0;
  Eigen::VectorXd dual_max, dual_min;
  int64_t queries = 0;                 // oracle queries of both optimisations
  int64_t cuts_max = 0, cuts_min = 0;  // slabs the relaxations ended with
};

struct MembershipSpan {
  Eigen::VectorXd base_point;          // a point of K: its minimum-norm point (the fast active-set path)
  std::vector<MembershipOptimum> optima;
  Eigen::MatrixXd differences;         // n × r: x_max − x_min per direction
  Eigen::VectorXd singular_values;     // of `differences`, descending
  Eigen::MatrixXd hull_directions;     // (m−1) × n orthonormal rows: the leading left singular vectors
  Eigen::VectorXd hull_point;          // base_point minus its component along them
  Eigen::MatrixXd span_basis;          // orthonormal rows: the hull point's direction, then the hull directions
  double gap = 0;                      // s_{m−1}/s_m (1-based; +inf when s_m = 0; 0 when r < m)
  int64_t oracle_queries = 0;
  std::string failure;                 // why no span was read ("" when it was)
  std::string message;                 // what the reading noticed
  double seconds = 0;
  bool ok() const { return failure.empty(); }
};

// The oracle's answer at θ: the slabs outside their band by more than
// active_set_tolerance(slab, ‖θ‖), most violated first (violation over ‖a_r‖), at most
// `limit`, skipping those `skip` marks.
std::vector<int> separating_slabs(const ConvexBody& body, const Eigen::VectorXd& theta, int limit,
                                  const std::vector<char>& skip = {});

// The r directions: Gaussian vectors from (seed, direction index), normalised.
Eigen::VectorXd membership_direction(uint64_t seed, int index, int n);

// `base` is the fast minimum-norm point of the body (min_norm_point_active_set); the
// span fails, as a value, when K is empty or an optimisation does not converge.
MembershipSpan span_by_membership(const ConvexBody& body, int m, const ActiveSetResult& base,
                                  const MembershipSpanOptions& options);

// The span read off given optimisers (the last step of span_by_membership, shared with the
// tests): the SVD of their differences, the hull point and the span basis.
void read_span(MembershipSpan& span, int m);

}  // namespace mha
