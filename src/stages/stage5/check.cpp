#include "stages/stage5/check.hpp"
#include "util/format.hpp"

#include "numeric/tolerance.hpp"
#include "stages/stage5/span_reference.hpp"

#include <Eigen/SVD>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>

namespace mha {

namespace {

namespace tol = mha::tolerance;
constexpr double kU = tol::kDoubleUnitRoundoff;

}  // namespace

// max(·, floor) is monotone, the ratio increasing in its numerator and decreasing in its
// denominator, so each ratio ranges over [lo_j, hi_j]; 1 ∓ 2u covers the division's and
// the fast rule's own rounding of each ratio. (.at(): a window past the values throws.)
std::optional<int> decided_gap_dimension(const Eigen::VectorXd& s, double threshold, double e, double e_threshold,
                                         int m, double min_gap) {
  // NaN or ±∞ anywhere: no interval to decide by (NaN would pass every `<` test as false).
  if (!s.allFinite() || !std::isfinite(threshold) || !std::isfinite(e) || !std::isfinite(e_threshold) ||
      !std::isfinite(min_gap))
    return std::nullopt;
  const Eigen::Index window = std::min<Eigen::Index>(s.size(), 2 * Eigen::Index{m} + 1);
  const double tiny = std::numeric_limits<double>::min();
  const double floor_lo = std::max(threshold - e_threshold, tiny), floor_hi = std::max(threshold + e_threshold, tiny);
  std::vector<double> lo(window, 0), hi(window, 0);
  bool any_may_pass = false;
  for (Eigen::Index j = 1; j < window; ++j) {
    lo.at(j) = std::max(s(j) - e, floor_lo) / std::max(s(j - 1) + e, floor_hi) * (1 - 2 * kU);
    hi.at(j) = std::max(s(j) + e, floor_hi) / std::max(s(j - 1) - e, floor_lo) * (1 + 2 * kU);
    any_may_pass |= hi[j] >= min_gap;
  }
  if (!any_may_pass) return 0;
  for (Eigen::Index j = 1; j < window; ++j) {
    if (lo.at(j) < min_gap) continue;
    bool clear = true;
    for (Eigen::Index i = 1; i < window; ++i) clear = clear && (i == j || lo[j] > hi.at(i));
    if (clear) return static_cast<int>(j);
  }
  return std::nullopt;
}

std::optional<long long> decided_kept_count(const Eigen::VectorXd& s, int p, double threshold, double e,
                                            double e_threshold) {
  if (!s.allFinite() || !std::isfinite(threshold) || !std::isfinite(e) || !std::isfinite(e_threshold))
    return std::nullopt;
  long long kept = 0;
  for (Eigen::Index j = p; j < s.size(); ++j) {
    if (std::abs(s(j) - threshold) <= e + e_threshold) return std::nullopt;
    kept += s(j) > threshold;
  }
  return kept;
}

KeptValueGap kept_value_gap(const Eigen::VectorXd& s, long long kept) {
  const long long n = s.size();
  return {s(n - kept), n - kept - 1 >= 0 ? s(n - kept - 1) : 0.0};
}

double kept_subspace_sin(double e, const Eigen::VectorXd& s, long long kept) {
  const long long n = s.size();
  const KeptValueGap g = kept_value_gap(s, kept);
  return tol::singular_subspace_sin_bound(e, g.s_kept - g.s_drop, std::min(kept, n - kept), n);
}

HullPointBound hull_point_bound_terms(const Eigen::VectorXd& s, long long kept, const HullPointInputs& in) {
  const long long n = s.size();
  HullPointBound b;
  b.s_kept = kept_value_gap(s, kept).s_kept;
  b.s_drop = kept_value_gap(s, kept).s_drop;
  b.solve = tol::hull_point_bound(in.e, s(n - 1), b.s_kept, b.s_drop, in.sin_kept, in.x0_norm, in.weighted_residual,
                                  in.c_norm, in.rows, n, kept);
  b.rounding = kU * in.x0_norm;
  b.reference = tol::span_reference_point_error(in.rows, n, in.bits, s(n - 1) / b.s_kept, in.x0_norm);
  return b;
}

bool sin_bound_decides(double bound) { return bound < 1; }

double directions_bound(double e, double s_p, double s_p_below, long long p, long long n, double reference_angle) {
  return tol::singular_subspace_sin_bound(e, s_p - s_p_below, p, n) + reference_angle;
}

IterativeDirectionsBound iterative_directions_bound(double s_p, double reference_value, double s_hat_free,
                                                    double residual, long long p, long long n, long long k,
                                                    double reference_angle) {
  IterativeDirectionsBound b;
  const double reference_lambda_error = 2 * s_p * reference_value + reference_value * reference_value;
  const double lambda_hat = s_hat_free * s_hat_free * (1 + 2 * kU);
  b.separation = (s_p * s_p - reference_lambda_error) * (1 - 2 * kU) - lambda_hat;
  b.bound = b.separation > 0 ? (residual / b.separation + std::sqrt(double(p)) * tol::gamma(16 * n * k) + reference_angle) *
                                   tol::bound_evaluation_factor(8)
                             : std::numeric_limits<double>::infinity();
  return b;
}

namespace {

// sin of the largest principal angle between the row spaces of a and b
// (orthonormal rows): ‖Aᵀ − Bᵀ(B Aᵀ)‖₂, accurate for small angles where acos of
// the cosine is not. Its rounding (entries of size ≤ 1, 2n-term chains) is below
// the √p·γ_{16n²} orthogonality allowance of singular_subspace_sin_bound.
double sin_largest_principal_angle(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  if (a.rows() == 0) return 0;
  const Eigen::MatrixXd residual = a.transpose() - b.transpose() * (b * a.transpose());
  return Eigen::JacobiSVD<Eigen::MatrixXd>(residual).singularValues()(0);
}

// The errors every item carries: ε_M for the fast SVD (tolerance::svd_backward_error,
// or streamed_svd_backward_error at the centre's ρ for the streamed centre),
// and the reference's own error on a singular value (tolerance::span_reference_value_error:
// forming G = MᵀM, then the symmetric eigensolver's backward error, at 2^−bits), plus
// one rounding to double.
struct Errors {
  double fast = 0;       // ε_M
  double reference = 0;  // on each singular value of the reference
  double value() const { return fast + reference; }
};

Errors errors(const SpanReference& ref, long long rows, long long n, const SpanResult& centre, int free) {
  const double fast = centre.centre_method == ConvexBody::CentreMethod::streamed
                          ? tol::streamed_svd_backward_error(rows, n, free, centre.free_basis_residual)
                          : tol::svd_backward_error(rows, n);
  return {fast * ref.frobenius,
          tol::span_reference_value_error(rows, n, ref.bits, ref.frobenius) + kU * ref.singular_values.maxCoeff()};
}

ComparisonPart compare_dimension(const SpanResult& fast, const SpanReference& ref, const Errors& e, int m,
                                 const SpanOptions& o) {
  ComparisonPart part;
  part.name = "dimension";
  part.quantity = "free directions by the gap rule (s_j/s_{j−1} ≥ min_gap)";
  part.compared = 1;
  const double e_threshold = tol::rank_threshold_error(ref.singular_values.size(), e.value(), ref.threshold);
  const std::optional<int> decided =
      decided_gap_dimension(ref.singular_values, ref.threshold, e.value(), e_threshold, m, o.min_gap);
  if (!decided) {
    part.undecided = 1;
    part.detail = "a ratio of the reference's values is within its band of min_gap or of another: undecided";
    return part;
  }
  part.agree = *decided == fast.dimension_fast;
  part.detail = "fast " + std::to_string(fast.dimension_fast) + ", reference " + std::to_string(*decided) +
                " (m − 1 = " + std::to_string(m - 1) + ")";
  return part;
}

// The reference free vectors' own angle error (tolerance::span_reference_angle_error:
// Davis–Kahan on G = MᵀM at 2^−bits; infinite without a gap).
double reference_directions_angle(const SpanReference& ref, int p) {
  const Eigen::VectorXd& s = ref.singular_values;
  return tol::span_reference_angle_error(s.size(), ref.bits, ref.frobenius, s(p), s(p - 1));
}

ComparisonPart compare_directions(const SpanResult& fast, const SpanReference& ref, const Errors& e, int m) {
  ComparisonPart part;
  part.name = "hull directions";
  part.quantity = "sin θ, largest principal angle of the m − 1 free directions";
  const int p = m - 1;
  const long long n = ref.singular_values.size();
  if (p == 0 || p >= n) {
    part.detail = p == 0 ? "m = 1: no hull directions" : "m − 1 ≥ n: every direction free, no hull directions to compare";
    return part;
  }
  const Eigen::VectorXd& s = ref.singular_values;
  const double reference_angle = reference_directions_angle(ref, p);
  const double bound = directions_bound(e.value(), s(p), s(p - 1), p, n, reference_angle);
  const double sine = sin_largest_principal_angle(fast.hull_directions, ref.free_basis);
  if (!sin_bound_decides(bound)) {
    part.compared = 1;
    part.undecided = 1;
    part.detail = format("gap s_m − s_{m−1} = %.3g is not above the SVD's error %.3g: the directions are not "
                         "determined at this accuracy (sin θ = %.3g)", s(p) - s(p - 1), e.value(), sine);
    return part;
  }
  part.record(sine, bound);
  part.detail = format("sin θ = %.3g within %.3g (gap s_m − s_{m−1} = %.3g)", sine, bound, s(p) - s(p - 1));
  return part;
}

ComparisonPart compare_hull_point(const SpanResult& fast, const SpanReference& ref, const Errors& e, int m,
                                  long long rows) {
  ComparisonPart part;
  part.name = "hull point";
  part.quantity = "‖x̂0 − x0‖ (the minimum-norm least-squares point across the hull)";
  const Eigen::VectorXd& s = ref.singular_values;
  const long long n = s.size();
  const double e_threshold = tol::rank_threshold_error(n, e.value(), ref.threshold);
  const std::optional<long long> kept = decided_kept_count(s, m - 1, ref.threshold, e.value(), e_threshold);
  if (!kept) {
    part.compared = 1;
    part.undecided = 1;
    // (the detail names the first value in the band, as the kept-set rule meets it)
    part.detail = format("singular value %.3g within its band of the rank threshold %.3g: the kept set is undecided",
                         *std::find_if(s.data() + m - 1, s.data() + n - 1,
                                       [&](double v) { return std::abs(v - ref.threshold) <= e.value() + e_threshold; }),
                         ref.threshold);
    return part;
  }
  if (*kept == 0) {
    part.detail = "no constrained direction above the rank threshold: x0 = 0 on both paths";
    return part;
  }
  const auto [s_kept, s_drop] = kept_value_gap(s, *kept);
  HullPointInputs in{e.value(), 0, ref.x0.norm(), ref.weighted_residual, ref.c_norm, rows, ref.bits};
  in.sin_kept = kept_subspace_sin(e.value(), s, *kept);
  const double bound = hull_point_bound_terms(s, *kept, in).total();
  const double difference = (fast.hull_point - ref.x0).norm();
  if (!std::isfinite(bound)) {
    part.compared = 1;
    part.undecided = 1;
    part.detail = format("no finite bound (gap of the kept values %.3g, SVD error %.3g); ‖x̂0 − x0‖ = %.3g",
                         s_kept - s_drop, e.value(), difference);
    return part;
  }
  part.record(difference, bound);
  part.detail = format("‖x̂0 − x0‖ = %.3g within %.3g (‖x0‖ = %.3g)", difference, bound, in.x0_norm);
  return part;
}

// ---- The iterative centre (proofs/iterative_centre.md): its own errors from its
// residuals, the reference's values for the gaps.

struct IterativeErrors {
  double residual = 0;   // ‖A V̂ − V̂Λ̂‖ of the free block for the exact A (tolerance::iterative_eigen_residual_bound)
  double value_residual = 0;  // the same over the other computed values
  double point = 0;      // ε of the hull point (tolerance::iterative_point_backward_error)
  double reference_value = 0;  // the reference's own error on a singular value (as Errors::reference)
};

// |ŝ_j − s_j| ≤ |λ̂_j − λ_j|/(ŝ_j + s_j) ≤ min(e/ŝ_j, √e) for |λ̂_j − λ_j| ≤ e.
double value_error(double e, double s_hat) { return s_hat > 0 ? std::min(e / s_hat, std::sqrt(e)) : std::sqrt(e); }

ComparisonPart compare_iterative_directions(const SpanResult& fast, const SpanReference& ref, const IterativeErrors& e,
                                            int m, long long k) {
  ComparisonPart part;
  part.name = "hull directions";
  part.quantity = "sin θ, largest principal angle of the m − 1 free directions";
  const int p = m - 1;
  const long long n = ref.singular_values.size();
  if (p == 0 || p >= n) {
    part.detail = p == 0 ? "m = 1: no hull directions" : "m − 1 ≥ n: every direction free, no hull directions to compare";
    return part;
  }
  const Eigen::VectorXd& s = ref.singular_values;
  const double reference_angle = reference_directions_angle(ref, p);
  const auto [separation, bound] = iterative_directions_bound(s(p), e.reference_value, fast.singular_values(p - 1),
                                                              e.residual, p, n, k, reference_angle);
  const double sine = sin_largest_principal_angle(fast.hull_directions, ref.free_basis);
  if (!sin_bound_decides(bound)) {
    part.compared = 1;
    part.undecided = 1;
    part.detail = format("λ_m − λ̂_{m−1} = %.3g is not above the Ritz residual %.3g: the directions are not "
                         "determined at this accuracy (sin θ = %.3g)", separation, e.residual, sine);
    return part;
  }
  part.record(sine, bound);
  part.detail = format("sin θ = %.3g within %.3g (Ritz residual %.3g over λ_m − λ̂_{m−1} = %.3g)", sine, bound,
                       e.residual, separation);
  return part;
}

ComparisonPart compare_iterative_hull_point(const SpanResult& fast, const SpanReference& ref, const IterativeErrors& e,
                                            double sin_kept, int m, long long rows) {
  ComparisonPart part;
  part.name = "hull point";
  part.quantity = "‖x̂0 − x0‖ (the minimum-norm least-squares point across the hull)";
  const Eigen::VectorXd& s = ref.singular_values;
  const long long n = s.size();
  const int p = m - 1;
  const double difference = (fast.hull_point - ref.x0).norm();
  // The iterative method keeps every constrained direction (it refuses a constrained
  // value at the threshold); the reference must too, decidedly.
  const std::optional<long long> kept = decided_kept_count(
      s, p, ref.threshold, e.reference_value, tol::rank_threshold_error(n, e.reference_value, ref.threshold));
  if (kept != n - p) {
    part.compared = 1;
    part.undecided = 1;
    part.detail = format("the smallest constrained value %.3g is not clearly above the rank threshold %.3g: the kept "
                         "set is undecided", s(p), ref.threshold);
    return part;
  }
  const HullPointInputs in{e.point, sin_kept, ref.x0.norm(), ref.weighted_residual, ref.c_norm, rows, ref.bits};
  const double x0_norm = in.x0_norm;
  const double bound = hull_point_bound_terms(s, n - p, in).total();
  if (!std::isfinite(bound)) {
    part.compared = 1;
    part.undecided = 1;
    part.detail = format("no finite bound (sin θ of the kept subspace %.3g, backward error %.3g); ‖x̂0 − x0‖ = %.3g",
                         sin_kept, e.point, difference);
    return part;
  }
  part.record(difference, bound);
  part.detail = format("‖x̂0 − x0‖ = %.3g within %.3g (‖x0‖ = %.3g)", difference, bound, x0_norm);
  return part;
}

Comparison check_iterative_span(const ConvexBody& body, const SpanResult& fast, int m, const SpanOptions& o) {
  const long long n = body.dim();
  const long long rows = std::max<long long>(static_cast<long long>(body.size()), n);
  const long long k = fast.singular_values.size();
  return escalate([&](unsigned bits) {
    const SpanReference ref = span_reference(body, m - 1, bits);
    const Errors reference_errors = errors(ref, rows, n, fast, m - 1);
    IterativeErrors e;
    e.reference_value = reference_errors.reference;
    e.residual = tol::iterative_eigen_residual_bound(fast.free_basis_residual, rows, body.side(), n, k, ref.frobenius);
    e.value_residual = tol::iterative_eigen_residual_bound(fast.value_residual, rows, body.side(), n, k, ref.frobenius);
    e.point = tol::iterative_point_backward_error(fast.free_basis_residual, rows, body.side(), n, ref.frobenius,
                                                  ref.c_norm, fast.hull_point.norm(), ref.weighted_residual);
    Comparison c;
    c.stage = std::string("5");
    c.quantity = "|ŝ_j − s_j| per computed singular value of the weighted constraint matrix";
    double window_error = 0;
    for (long long j = 0; j < k; ++j) {
      const double ej = value_error(j < m - 1 ? e.residual : e.value_residual, fast.singular_values(j)) + e.reference_value;
      window_error = std::max(window_error, ej);
      c.record(std::abs(fast.singular_values(j) - ref.singular_values(j)), ej + kU * std::abs(fast.singular_values(j)));
    }
    c.detail = format("%.0f slabs × %.0f unknowns; iterative centre, the %lld smallest values; backward error ρ = %.3g, "
                      "Ritz residual bounds %.3g (free), %.3g (other values) (‖M‖_F = %.3g)",
                      double(body.size()), double(n), k, fast.free_basis_residual, e.residual, e.value_residual,
                      ref.frobenius);
    Errors window;
    window.fast = window_error;
    add_part(c, compare_dimension(fast, ref, window, m, o));
    const ComparisonPart directions = compare_iterative_directions(fast, ref, e, m, k);
    add_part(c, directions);
    const double sin_kept = m - 1 == 0 ? 0.0 : (directions.compared > 0 && directions.undecided == 0 ? directions.bound : 1.0);
    add_part(c, compare_iterative_hull_point(fast, ref, e, sin_kept, m, rows));
    for (ComparisonPart& part : c.parts) part.precision = bits;
    return c;
  });
}

}  // namespace

Comparison check_span(const ConvexBody& body, const SpanResult& fast, int m, const SpanOptions& o) {
  if (fast.centre_method == ConvexBody::CentreMethod::iterative) return check_iterative_span(body, fast, m, o);
  const long long n = body.dim();
  const long long rows = std::max<long long>(static_cast<long long>(body.size()), n);
  return escalate([&](unsigned bits) {
    const SpanReference ref = span_reference(body, m - 1, bits);
    const Errors e = errors(ref, rows, n, fast, m - 1);
    Comparison c;
    // A std::string, not the literal: GCC 12 reports assigning a one-character literal here as a
    // memcpy of 2^63 bytes (a false positive of -Wstringop-overflow).
    c.stage = std::string("5");
    c.quantity = "|ŝ_j − s_j| per singular value of the weighted constraint matrix";
    for (long long j = 0; j < n; ++j)
      c.record(std::abs(fast.singular_values(j) - ref.singular_values(j)),
               e.value() + kU * std::abs(fast.singular_values(j)));
    c.detail = format("%.0f slabs × %.0f unknowns; SVD backward error ε_M = %.3g (‖M‖_F = %.3g)", double(body.size()),
                      double(n), e.fast, ref.frobenius);
    add_part(c, compare_dimension(fast, ref, e, m, o));
    add_part(c, compare_directions(fast, ref, e, m));
    add_part(c, compare_hull_point(fast, ref, e, m, rows));
    for (ComparisonPart& part : c.parts) part.precision = bits;
    return c;
  });
}

}  // namespace mha
