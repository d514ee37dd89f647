// Stage 5 on two paths (proofs/span_by_widths.md, "The span on two paths"): the
// fast span (find_span on the double SVD of the weighted constraint matrix M)
// against span_reference (the same quantities of the same M in MPFR), escalated
// 128 → 256 bits before a disagreement is declared.
//
// With ε_M = tolerance::svd_backward_error(N, n)·‖M‖_F (streamed_svd_backward_error
// for the streamed centre) the bound on the fast SVD's backward error (‖E‖₂, the reference's ‖M‖_F), the row compares
//   the hull directions   sin θ(fast, reference) ≤ tolerance::singular_subspace_sin_bound
//                         (Wedin, with the reference's gap s_m − s_{m−1});
// and its parts
//   singular values       |ŝ_j − s_j| ≤ ε_M for every j (Weyl);
//   dimension             the gap rule (gap_dimension) re-applied to every value within
//                         ε_M of the reference's: decided when every such value gives the
//                         same dimension, then it must be the fast one;
//   hull point            ‖x̂0 − x0‖ ≤ tolerance::hull_point_bound, when the kept set
//                         (constrained values above the rank threshold) is decided.
// An item whose bound is not finite (no separation at this accuracy) or whose
// decision is within its band is *undecided*: counted, never agreement, never a
// disagreement.
#pragma once

#include "geometry/convex_body.hpp"
#include "numeric/comparison.hpp"
#include "stages/stage5/span.hpp"

#include <optional>

namespace mha {

// `fast` is find_span's (or a replacement's) result on `body` with m heads; a
// centre the streamed method computed (fast.centre_method) is compared with
// tolerance::streamed_svd_backward_error at its own ρ (fast.free_basis_residual).
Comparison check_span(const ConvexBody& body, const SpanResult& fast, int m, const SpanOptions& options);

// The dimension part's decision: the fast gap rule (gap_dimension) re-applied to every
// vector of singular values within `e` of `s` and every rank threshold within
// `e_threshold` of `threshold`. Returns the dimension when all of them give the same
// one, 0 when none of them can pass min_gap, and nothing (undecided) otherwise, or
// when any argument is NaN or ±∞.
// (tests/verify/test_span_gap_rule.cpp: soundness against gap_dimension on
// perturbed values, exactness at e = 0.)
std::optional<int> decided_gap_dimension(const Eigen::VectorXd& s, double threshold, double e, double e_threshold,
                                         int m, double min_gap);

// The hull point's kept set (span_reference.hpp: x0 over the constrained values above the
// rank threshold): how many of s_p, …, s_{n−1} (ascending) lie above `threshold`, when
// none is within e + e_threshold of it (the edge included); nothing (undecided) when one
// is, or when any argument is NaN or ±∞. The iterative centre keeps every constrained
// direction, so its check needs the count n − p, decided.
// (tests/verify/test_span_check_bounds.cpp: values placed at the band's edges.)
std::optional<long long> decided_kept_count(const Eigen::VectorXd& s, int p, double threshold, double e,
                                            double e_threshold);

// The kept values' edge: the smallest kept value s_{n−kept} and the largest dropped one
// s_{n−kept−1} (0 when every value is kept), of the ascending values `s`.
struct KeptValueGap {
  double s_kept = 0, s_drop = 0;
};
KeptValueGap kept_value_gap(const Eigen::VectorXd& s, long long kept);

// sin θ of the kept subspace on the dense and streamed paths: Wedin's bound
// (tolerance::singular_subspace_sin_bound) at the kept values' gap s_kept − s_drop,
// for a subspace of min(kept, n − kept) dimensions.
double kept_subspace_sin(double e, const Eigen::VectorXd& s, long long kept);

// What the hull point's bound needs besides the reference's values.
struct HullPointInputs {
  double e = 0;                  // the error on each value: ε_M + the reference's (dense, streamed), or the
                                 // iterative centre's point backward error
  double sin_kept = 0;           // sin θ of the kept subspace (singular_subspace_sin_bound)
  double x0_norm = 0;            // ‖x0‖, the reference's point
  double weighted_residual = 0;  // ‖M x0 − c‖, the reference's
  double c_norm = 0;             // ‖c‖
  long long rows = 0;            // max(slabs, unknowns)
  unsigned bits = 128;           // the reference's precision
};

// ‖x̂0 − x0‖'s bound term by term, with the `kept` largest of the ascending values `s`
// kept: tolerance::hull_point_bound at s_max, the smallest kept value s_kept and the
// largest dropped one s_drop (0 when none is dropped), one rounding of x0 (u‖x0‖), and
// the reference's own error, tolerance::span_reference_point_error at κ = s_max/s_kept.
// Each term is pinned to its formula in tests/verify/test_span_check_bounds.cpp.
struct HullPointBound {
  double s_kept = 0, s_drop = 0;
  double solve = 0;      // tolerance::hull_point_bound
  double rounding = 0;   // u‖x0‖
  double reference = 0;  // tolerance::span_reference_point_error
  double total() const { return solve + rounding + reference; }
};
HullPointBound hull_point_bound_terms(const Eigen::VectorXd& s, long long kept, const HullPointInputs& inputs);

// sin θ ≤ 1 always: a bound that is not below 1 (NaN included) decides nothing, and the
// directions are undecided.
bool sin_bound_decides(double bound);

// The hull directions' bound on the dense and streamed paths: Wedin's sin θ bound
// (tolerance::singular_subspace_sin_bound) at the reference's gap s_p − s_{p−1}, plus the
// reference's own angle (tolerance::span_reference_angle_error).
double directions_bound(double e, double s_p, double s_p_below, long long p, long long n, double reference_angle);

// The iterative centre's (Davis–Kahan on A = MᵀM): the Ritz values of the free block are ≤
// λ̂_{p−1} = ŝ_{p−1}², the rest of A's spectrum ≥ λ_p = s_p² less the reference's error on it,
// 2 s_p e_ref + e_ref² (e_ref on s_p); each side widened by 2u for its rounding. With that
// separation > 0 the bound is (residual/separation + √p·γ_{16nk} + the reference's angle),
// times the evaluation factor; +∞ otherwise.
struct IterativeDirectionsBound {
  double separation = 0;  // λ_p − λ̂_{p−1}, its errors taken off
  double bound = 0;
};
IterativeDirectionsBound iterative_directions_bound(double s_p, double reference_value, double s_hat_free,
                                                    double residual, long long p, long long n, long long k,
                                                    double reference_angle);

}  // namespace mha
