// The body's construction and its slabs: no solver, no decomposition. Kept
// apart from the programs (convex_body_lp.cpp, convex_body_min_norm.cpp: CLP)
// so that what only stores and reads bodies — the learner's checkpoints and
// their fuzz harness (fuzz/) — compiles and links without the LP/QP code.
#include "geometry/convex_body.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace mha {

namespace {

// u, v with a = vec(u vᵀ) exactly in double (row-major d × d), if there are any:
// u from the column of a's first nonzero entry (p0, q0), v from its row divided by
// a(p0, q0), every entry then checked. Token normals x_aᵀ(x_j − x_a) factor as
// u = x_a·(x_j − x_a)_{q0} ∈ {±2}^d, v = (x_j − x_a)/(x_j − x_a)_{q0} ∈ {0, ±1}^d:
// small integers, so the check is exact.
bool outer_factors(const std::vector<double>& a, int d, double* u, double* v) {
  size_t first = 0;
  while (first < a.size() && a[first] == 0.0) ++first;
  if (first == a.size()) return false;
  const int p0 = static_cast<int>(first) / d, q0 = static_cast<int>(first) % d;
  const double pivot = a[first];
  for (int p = 0; p < d; ++p) u[p] = a[static_cast<size_t>(p) * d + q0];
  for (int q = 0; q < d; ++q) v[q] = a[static_cast<size_t>(p0) * d + q] / pivot;
  for (int p = 0; p < d; ++p)
    for (int q = 0; q < d; ++q)
      if (u[p] * v[q] != a[static_cast<size_t>(p) * d + q]) return false;
  return true;
}

}  // namespace

ConvexBody::ConvexBody(int n, double radius) : n_(n), radius_(radius) {
  if (n < 1) throw std::invalid_argument("ConvexBody: dimension must be >= 1, got " + std::to_string(n));
  if (!std::isfinite(radius) || radius <= 0)
    throw std::invalid_argument("ConvexBody: radius must be finite and > 0");
  const int d = static_cast<int>(std::lround(std::sqrt(static_cast<double>(n))));
  if (d * d == n) {
    side_ = d;
    rank_one_ = true;
  }
}

Eigen::MatrixXd ConvexBody::normal_factor_u() const {
  return Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
      u_.data(), rank_one_ ? static_cast<Eigen::Index>(slabs_.size()) : 0, side_);
}

Eigen::MatrixXd ConvexBody::normal_factor_v() const {
  return Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
      v_.data(), rank_one_ ? static_cast<Eigen::Index>(slabs_.size()) : 0, side_);
}

void ConvexBody::add(Slab s) {
  if (static_cast<int>(s.a.size()) != n_)
    throw std::invalid_argument("ConvexBody::add: slab normal has " + std::to_string(s.a.size()) +
                                " entries, body dimension is " + std::to_string(n_));
  for (double v : s.a)
    if (!std::isfinite(v)) throw std::invalid_argument("ConvexBody::add: slab normal is not finite");
  if (!std::isfinite(s.b)) throw std::invalid_argument("ConvexBody::add: slab offset b is not finite");
  if (!std::isfinite(s.eta) || s.eta < 0)
    throw std::invalid_argument("ConvexBody::add: slab half-width eta must be finite and >= 0");
  if (rank_one_) {
    const size_t at = u_.size();
    u_.resize(at + side_);
    v_.resize(at + side_);
    if (!outer_factors(s.a, side_, u_.data() + at, v_.data() + at)) {
      rank_one_ = false;
      std::vector<double>().swap(u_);
      std::vector<double>().swap(v_);
    }
  }
  slabs_.push_back(std::move(s));
}

}  // namespace mha
