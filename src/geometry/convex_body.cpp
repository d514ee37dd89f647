// Where a point stands against the body: in double (max_violation, contains) and
// rigorously (the residuals and violations behind every certificate), with the
// dual and Farkas bounds that certify the programs' optima and emptiness
// (proofs/convex_body_programs.md; the arithmetic is described in
// geometry/convex_body_certificates.hpp). The programs themselves: the LP in
// convex_body_lp.cpp, the minimum-norm point in convex_body_min_norm.cpp (both
// over CLP, convex_body_clp.cpp), the least-squares centre in
// convex_body_centre.cpp, the construction in convex_body_slabs.cpp.
#include "geometry/convex_body.hpp"

#include "geometry/convex_body_certificates.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace mha {

namespace convex_body_detail {

SlabData gather(const std::vector<Slab>& slabs, int n) {
  SlabData d;
  const auto N = static_cast<Eigen::Index>(slabs.size());
  d.a.resize(N, n);
  d.b.resize(N);
  d.eta.resize(N);
  for (Eigen::Index r = 0; r < N; ++r) {
    d.a.row(r) = Eigen::Map<const Eigen::RowVectorXd>(slabs[r].a.data(), n);
    d.b(r) = slabs[r].b;
    d.eta(r) = slabs[r].eta;
  }
  return d;
}

Residuals residuals(const SlabData& d, const Eigen::VectorXd& x) {
  const Eigen::Index N = d.a.rows(), n = d.a.cols();
  Residuals res;
  res.value.resize(N);
  res.error.resize(N);
  for (Eigen::Index r = 0; r < N; ++r) {
    Dot2 acc;
    for (Eigen::Index c = 0; c < n; ++c) acc.add(d.a(r, c), x(c));
    acc.add(d.b(r), -1.0);
    res.value(r) = acc.value();
    res.error(r) = acc.error();
  }
  return res;
}

Residuals transpose_times(const SlabData& d, const Eigen::VectorXd& y, const Eigen::VectorXd& v) {
  const Eigen::Index N = d.a.rows(), n = d.a.cols();
  std::vector<Dot2> acc(n);
  for (Eigen::Index r = 0; r < N; ++r) {
    const double yr = y(r);
    if (yr == 0.0) continue;
    for (Eigen::Index c = 0; c < n; ++c) acc[c].add(d.a(r, c), yr);
  }
  if (v.size() == n)
    for (Eigen::Index c = 0; c < n; ++c) acc[c].add(v(c), 1.0);
  Residuals out;
  out.value.resize(n);
  out.error.resize(n);
  for (Eigen::Index c = 0; c < n; ++c) {
    out.value(c) = acc[c].value();
    out.error(c) = acc[c].error();
  }
  return out;
}

Eigen::VectorXd violations(const SlabData& d, const Residuals& res) {
  Eigen::VectorXd v(res.value.size());
  for (Eigen::Index r = 0; r < v.size(); ++r) {
    const double s = up(std::abs(res.value(r)) + res.error(r));
    v(r) = s <= d.eta(r) ? 0.0 : up(s - d.eta(r));
  }
  return v;
}

namespace {
// Upper bound on ‖v − Aᵀy‖₁ (v empty = zero), evaluated rigorously.
double l1_of_reduced_cost_up(const SlabData& d, const Eigen::VectorXd& v, const Eigen::VectorXd& y) {
  const Residuals g = transpose_times(d, -y, v);
  double total = 0;
  for (Eigen::Index c = 0; c < g.value.size(); ++c) total = up(total + up(std::abs(g.value(c)) + g.error(c)));
  return total;
}
}  // namespace

double dual_upper_bound(const SlabData& d, double radius, const Eigen::VectorXd& v, const Eigen::VectorXd& y) {
  Dot2 acc;
  for (Eigen::Index r = 0; r < d.a.rows(); ++r) {
    acc.add(y(r), d.b(r));
    acc.add(std::abs(y(r)), d.eta(r));
  }
  const double s_up = up(acc.value() + acc.error());
  return up(s_up + up(radius * l1_of_reduced_cost_up(d, v, y)));
}

double farkas_lower_bound(const SlabData& d, double radius, const Eigen::VectorXd& y) {
  Dot2 acc;
  for (Eigen::Index r = 0; r < d.a.rows(); ++r) {
    acc.add(y(r), d.b(r));
    acc.add(-std::abs(y(r)), d.eta(r));
  }
  const double s_down = down(acc.value() - acc.error());
  return down(s_down - up(radius * l1_of_reduced_cost_up(d, Eigen::VectorXd(), y)));
}

}  // namespace convex_body_detail

const char* to_string(ConvexBody::LpResult::Status s) {
  switch (s) {
    case ConvexBody::LpResult::optimal: return "optimal";
    case ConvexBody::LpResult::infeasible: return "infeasible";
    case ConvexBody::LpResult::unbounded: return "unbounded";
    case ConvexBody::LpResult::failed: return "failed";
  }
  return "unknown";
}

const char* to_string(ConvexBody::QpResult::Status s) {
  switch (s) {
    case ConvexBody::QpResult::optimal: return "optimal";
    case ConvexBody::QpResult::infeasible: return "infeasible";
    case ConvexBody::QpResult::failed: return "failed";
  }
  return "unknown";
}

void ConvexBody::check_vector(const Eigen::VectorXd& v, const char* what) const {
  if (v.size() != n_)
    throw std::invalid_argument(std::string("ConvexBody: ") + what + " has " + std::to_string(v.size()) +
                                " entries, body dimension is " + std::to_string(n_));
  if (!v.allFinite()) throw std::invalid_argument(std::string("ConvexBody: ") + what + " is not finite");
}

double ConvexBody::max_violation(const Eigen::VectorXd& theta) const {
  check_vector(theta, "point");
  double worst = std::max(0.0, theta.norm() - radius_);
  for (const Slab& s : slabs_) {
    const double r = Eigen::Map<const Eigen::VectorXd>(s.a.data(), n_).dot(theta) - s.b;
    worst = std::max(worst, std::abs(r) - s.eta);
  }
  return worst;
}

bool ConvexBody::contains(const Eigen::VectorXd& theta) const { return max_violation(theta) <= 0.0; }

}  // namespace mha
