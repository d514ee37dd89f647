#include "stages/stage5/widths.hpp"

#include "stages/stage5/span.hpp"

#include <Eigen/SVD>

#include <chrono>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace mha {

// A threshold of the report's message only (it changes no result): the
// optimiser differences count as nearly dependent below σ_min/σ_max = this.
constexpr double kDependentDifferences = 1e-3;

namespace {

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

// The candidates: the m−1 free directions, then `extra` of the smallest constrained ones.
Eigen::MatrixXd candidate_directions(const ConvexBody& body, const ConvexBody::Centre& centre, int m, int extra) {
  Eigen::MatrixXd candidates(m - 1 + extra, body.dim());
  candidates.topRows(m - 1) = centre.free_basis;
  if (extra > 0) candidates.bottomRows(extra) = body.least_squares_centre(m - 1 + extra).free_basis.bottomRows(extra);
  return candidates;
}

}  // namespace

BodyWidths body_widths(const ConvexBody& body, const ConvexBody::Centre& centre, int m, const WidthsOptions& o) {
  const int n = body.dim();
  if (m < 1) throw std::invalid_argument("body_widths: m must be ≥ 1, got " + std::to_string(m));
  if (o.candidates < 0) throw std::invalid_argument("body_widths: candidates must be ≥ 0");
  if (centre.free_basis.rows() != m - 1 || centre.free_basis.cols() != n)
    throw std::invalid_argument("body_widths: centre must be body.least_squares_centre(m − 1)");
  const auto start = std::chrono::steady_clock::now();
  BodyWidths r;
  std::ostringstream msg;
  const int extra = std::min(o.candidates > 0 ? o.candidates : m, n - (m - 1));
  const Eigen::MatrixXd candidates = candidate_directions(body, centre, m, extra);

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
      ++r.dimension;
      differences.push_back(w.max.x - w.min.x);
    }
  }
  Eigen::MatrixXd difference_columns(n, static_cast<Eigen::Index>(differences.size()));
  for (size_t i = 0; i < differences.size(); ++i) difference_columns.col(static_cast<Eigen::Index>(i)) = differences[i];
  double condition = 1;
  r.directions = orthonormal_rows(difference_columns, condition);
  if (condition < kDependentDifferences)
    msg << "the optimiser differences are nearly dependent (σ_min/σ_max = " << condition << "); ";
  r.angle = largest_principal_angle(centre.free_basis, r.directions);
  if (r.dimension != m - 1)
    msg << r.dimension << " of " << candidates.rows() << " candidates are wide (≥ " << wide << "), expected " << m - 1
        << "; ";
  if (r.angle > o.max_angle)
    msg << "angle between the SVD's and the widths' hull directions " << r.angle << " > " << o.max_angle << "; ";
  r.thin = all_measured && r.dimension == m - 1 && r.angle <= o.max_angle;
  r.message = msg.str();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace mha
