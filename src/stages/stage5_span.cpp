#include "stages/stage5_span.hpp"

#include <Eigen/Dense>
#include <Eigen/SVD>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace mha {

// Thresholds of the report's messages only (they change no result): the hull
// point counts as 0 below kHullPointAtOrigin·R, and the reference's optimiser
// differences as nearly dependent below σ_min/σ_max = kDependentDifferences.
constexpr double kHullPointAtOrigin = 1e-6;
constexpr double kDependentDifferences = 1e-3;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The number of free directions read off the ascending singular values: the
// j ≥ 1 maximising s_j / s_{j−1} among the smallest min(n, 2m+1) of them, accepted
// when that ratio is ≥ min_gap (a clear gap), else 0 (nothing is clearly free).
// Why 2m+1: the expected gap sits at j = m−1, and a window of about twice that
// lets a wrongly unconstrained extra direction or two show up as a gap further
// right without reaching into the bulk, whose ratios are close to 1. Values
// at or below the rank threshold count as the threshold, so a numerically zero
// free value followed by a nonzero one gives a large ratio instead of +inf/NaN.
int free_dimension(const ConvexBody::Centre& centre, int m, double min_gap, double& gap) {
  const Eigen::VectorXd& s = centre.singular_values;
  const Eigen::Index window = std::min<Eigen::Index>(s.size(), 2 * Eigen::Index{m} + 1);
  const double floor = std::max(centre.threshold, std::numeric_limits<double>::min());
  int best = 0;
  gap = 0;
  for (Eigen::Index j = 1; j < window; ++j) {
    const double ratio = std::max(s(j), floor) / std::max(s(j - 1), floor);
    if (ratio > gap) {
      gap = ratio;
      best = static_cast<int>(j);
    }
  }
  return gap >= min_gap ? best : 0;
}

// Orthonormal rows spanning the columns of `columns` (via the thin SVD, so nearly
// dependent columns are visible in `condition` = σ_min/σ_max rather than silently
// amplified as in Gram–Schmidt).
Eigen::MatrixXd orthonormal_rows(const Eigen::MatrixXd& columns, double& condition) {
  condition = 1;
  if (columns.cols() == 0) return Eigen::MatrixXd(0, columns.rows());
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(columns, Eigen::ComputeThinU);
  const Eigen::VectorXd& sv = svd.singularValues();
  condition = sv(0) > 0 ? sv(sv.size() - 1) / sv(0) : 0;
  return svd.matrixU().leftCols(columns.cols()).transpose();
}

}  // namespace

double largest_principal_angle(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  if (a.rows() == 0 || b.rows() == 0) return 0;
  // The cosines of the principal angles are the singular values of A Bᵀ.
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(a * b.transpose());
  const double cos_min = std::clamp(svd.singularValues().minCoeff(), 0.0, 1.0);
  return std::acos(cos_min);
}

SpanResult find_span(const ConvexBody& body, const ConvexBody::Centre& centre, int m, const SpanOptions& o) {
  const int n = body.dim();
  if (m < 1) throw std::invalid_argument("find_span: m must be ≥ 1, got " + std::to_string(m));
  if (o.candidates < 0) throw std::invalid_argument("find_span: candidates must be ≥ 0");
  if (centre.free_basis.rows() != m - 1 || centre.free_basis.cols() != n || centre.x0.size() != n ||
      centre.singular_values.size() != n)
    throw std::invalid_argument("find_span: centre must be body.least_squares_centre(m − 1)");

  SpanResult r;
  std::ostringstream msg;

  // Fast path: everything is already in the centre; only the span and the gap are read off.
  auto start = std::chrono::steady_clock::now();
  r.hull_point = centre.x0;
  r.hull_directions = centre.free_basis;
  r.dimension_fast = free_dimension(centre, m, o.min_gap, r.gap);
  // x0 is orthogonal to the free basis by construction; project anyway so the
  // rows are orthonormal to working precision whatever centre was passed.
  const Eigen::VectorXd x0_across = centre.x0 - centre.free_basis.transpose() * (centre.free_basis * centre.x0);
  const double x0_norm = x0_across.norm();
  r.span_basis.resize(m - 1 + (x0_norm > 0 ? 1 : 0), n);
  if (x0_norm > 0) r.span_basis.row(0) = (x0_across / x0_norm).transpose();
  r.span_basis.bottomRows(m - 1) = centre.free_basis;
  if (!(x0_norm > kHullPointAtOrigin * body.radius()))
    msg << "the hull point is " << (x0_norm > 0 ? "nearly " : "") << "0 (‖x0‖ = " << x0_norm
        << "): 0 ∈ H, its direction does not add to the span; ";
  if (r.dimension_fast != m - 1)
    msg << "fast path: " << r.dimension_fast << " free directions (largest ratio gap " << r.gap << ", need ≥ "
        << o.min_gap << "), expected " << m - 1 << "; ";
  r.seconds_fast = seconds_since(start);

  if (!o.reference) {
    r.agree = false;
    msg << "reference not run";
    r.message = msg.str();
    return r;
  }

  // Reference path: widths along the free directions and the next smallest constrained ones.
  start = std::chrono::steady_clock::now();
  r.reference_run = true;
  const int extra = std::min(o.candidates > 0 ? o.candidates : m, n - (m - 1));
  Eigen::MatrixXd candidates(m - 1 + extra, n);
  candidates.topRows(m - 1) = centre.free_basis;
  if (extra > 0) candidates.bottomRows(extra) = body.least_squares_centre(m - 1 + extra).free_basis.bottomRows(extra);

  // Wide means width ≥ R/10 by default. Along a hull direction u the width is at
  // least that of conv{Θ_i} ⊆ K (K does not contain all of H ∩ ball: the slabs
  // cut H a few head separations out); across H it is at most 2√N/s_j along the
  // j-th singular direction, ≪ R/10 on realistic bodies (proofs/span_by_widths.md).
  const double wide = o.wide_width > 0 ? o.wide_width : body.radius() / 10;
  r.wide_width = wide;
  bool all_measured = true;
  std::vector<Eigen::VectorXd> differences;
  for (Eigen::Index c = 0; c < candidates.rows(); ++c) {
    const ConvexBody::Width w = body.width(candidates.row(c).transpose());
    r.candidate_widths.push_back(w.width);
    r.width_error_bounds.push_back(w.error_bound);
    r.width_certified.push_back(w.max.certified && w.min.certified);
    const bool measured = w.max.status == ConvexBody::LpResult::optimal && w.min.status == ConvexBody::LpResult::optimal;
    if (!measured) {
      all_measured = false;
      msg << "candidate " << c << ": LPs " << to_string(w.max.status) << "/" << to_string(w.min.status);
      if (w.max.status == ConvexBody::LpResult::infeasible || w.min.status == ConvexBody::LpResult::infeasible)
        msg << " (P, hence K, reported empty; " << (w.max.certified || w.min.certified ? "" : "not ") << "certified)";
      msg << " (" << w.max.message << " | " << w.min.message << "); ";
      continue;
    }
    if (!r.width_certified.back())
      msg << "candidate " << c << ": width not certified (" << w.max.message << " | " << w.min.message << "); ";
    if (std::abs(w.width - wide) <= w.error_bound)
      msg << "candidate " << c << ": width " << w.width << " within its error bound of the wide threshold; ";
    if (w.width >= wide) {
      ++r.dimension_reference;
      differences.push_back(w.max.x - w.min.x);
    }
  }
  Eigen::MatrixXd difference_columns(n, static_cast<Eigen::Index>(differences.size()));
  for (size_t i = 0; i < differences.size(); ++i) difference_columns.col(static_cast<Eigen::Index>(i)) = differences[i];
  double condition = 1;
  r.reference_directions = orthonormal_rows(difference_columns, condition);
  if (condition < kDependentDifferences)
    msg << "the optimiser differences are nearly dependent (σ_min/σ_max = " << condition << "); ";
  r.subspace_angle = largest_principal_angle(r.hull_directions, r.reference_directions);

  if (r.dimension_reference != m - 1)
    msg << "reference: " << r.dimension_reference << " of " << candidates.rows() << " candidates are wide (≥ "
        << wide << "), expected " << m - 1 << "; ";
  if (r.subspace_angle > o.max_angle)
    msg << "angle between fast and reference hull directions " << r.subspace_angle << " > " << o.max_angle << "; ";
  r.agree = all_measured && r.dimension_fast == m - 1 && r.dimension_reference == m - 1 && r.subspace_angle <= o.max_angle;
  r.seconds_reference = seconds_since(start);
  r.message = msg.str();
  return r;
}

}  // namespace mha
