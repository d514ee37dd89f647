#include "stages/stage5/span.hpp"

#include "util/clock.hpp"

#include <Eigen/SVD>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace mha {

// A threshold of the report's message only (it changes no result): the hull
// point counts as 0 below kHullPointAtOrigin·R.
constexpr double kHullPointAtOrigin = 1e-6;

int gap_dimension(const Eigen::VectorXd& s, double threshold, int m, double min_gap, double& gap) {
  const Eigen::Index window = std::min<Eigen::Index>(s.size(), 2 * Eigen::Index{m} + 1);
  const double floor = std::max(threshold, std::numeric_limits<double>::min());
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
  if (centre.free_basis.rows() != m - 1 || centre.free_basis.cols() != n || centre.x0.size() != n ||
      centre.singular_values.size() < std::min<Eigen::Index>(n, 2 * Eigen::Index{m} + 1))
    throw std::invalid_argument("find_span: centre must be body.least_squares_centre(m − 1)");

  SpanResult r;
  std::ostringstream msg;

  // Everything is already in the centre; only the span and the gap are read off.
  const auto start = std::chrono::steady_clock::now();
  r.hull_point = centre.x0;
  r.hull_directions = centre.free_basis;
  r.dimension_fast = gap_dimension(centre.singular_values, centre.threshold, m, o.min_gap, r.gap);
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
  r.singular_values = centre.singular_values;
  r.threshold = centre.threshold;
  r.rank = centre.rank;
  r.centre_method = centre.method;
  r.free_basis_residual = centre.free_basis_residual;
  r.value_residual = centre.value_residual;
  r.message = msg.str();
  r.seconds = seconds_since(start);
  return r;
}

}  // namespace mha
