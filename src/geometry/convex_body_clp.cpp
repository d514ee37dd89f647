// CLP plumbing shared by the convex body's LP and minimum-norm point
// (geometry/convex_body_clp.hpp): solver settings, row bounds and their
// tightening, fitted duals, the active-set polish and the phase-1 Farkas
// certificate of emptiness. The certificates' arithmetic: convex_body.cpp.
#include "geometry/convex_body_clp.hpp"
#include "geometry/clp_settings.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace mha::convex_body_detail {

double clp_primal_tolerance(const SlabData& d) {
  double tol = 1e-7;
  for (Eigen::Index r = 0; r < d.a.rows(); ++r) {
    const double amax = d.a.row(r).cwiseAbs().maxCoeff();
    if (d.eta(r) > 0 && amax > 0) tol = std::min(tol, 0.01 * d.eta(r) / amax);
  }
  return std::max(tol, kMinClpPrimalTolerance);
}

ClpMatrix clp_matrix(const SlabData& d) {
  ClpMatrix m;
  const Eigen::Index N = d.a.rows(), n = d.a.cols();
  m.start.reserve(n + 1);
  for (Eigen::Index c = 0; c < n; ++c) {
    m.start.push_back(static_cast<CoinBigIndex>(m.index.size()));
    for (Eigen::Index r = 0; r < N; ++r)
      if (d.a(r, c) != 0.0) {
        m.index.push_back(static_cast<int>(r));
        m.value.push_back(d.a(r, c));
      }
  }
  m.start.push_back(static_cast<CoinBigIndex>(m.index.size()));
  return m;
}

std::string clp_status_text(int status, int secondary) {
  std::ostringstream os;
  os << "CLP status " << status;
  switch (status) {
    case 0: os << " (optimal)"; break;
    case 1: os << " (primal infeasible)"; break;
    case 2: os << " (dual infeasible)"; break;
    case 3: os << " (stopped on iterations or time)"; break;
    case 4: os << " (stopped due to errors)"; break;
    default: break;
  }
  if (secondary != 0) os << ", secondary status " << secondary;
  return os.str();
}

void set_row_bounds(ClpSimplex& model, const SlabData& d, const Eigen::VectorXd& tighten) {
  for (Eigen::Index r = 0; r < d.b.size(); ++r)
    model.setRowBounds(static_cast<int>(r), d.b(r) - d.eta(r) + tighten(r), d.b(r) + d.eta(r) - tighten(r));
}

namespace {

// Tightens every slab after x violated some of them. CLP's point is the exact
// optimum of the LP it solved plus an error δ, so slab r sees an error ⟨a_r, δ⟩ of
// size up to ‖a_r‖₂‖δ‖₂ on every active row (only the sign varies from solve to
// solve). `tau` accumulates max_r viol_r/‖a_r‖₂ over the rounds (a lower estimate of
// ‖δ‖₂), and every row gets the margin t_r = 2^{round+1}·tau·‖a_r‖₂, capped at η_r/2:
// the margins at least double each round. Rows inactive at the optimum have y_r = 0,
// so their margin costs nothing in the bounds. Returns false when no violated row's
// margin could grow (η_r = 0, a zero row, or already at η_r/2).
bool tighten_rows(const SlabData& d, const Eigen::VectorXd& viol, int round, double& tau,
                  Eigen::VectorXd& tighten) {
  const Eigen::VectorXd norms = d.a.rowwise().norm();
  for (Eigen::Index r = 0; r < viol.size(); ++r)
    if (viol(r) > 0 && norms(r) > 0) tau = std::max(tau, viol(r) / norms(r));
  const double factor = std::ldexp(1.0, round + 1);
  bool violated_row_grew = false;
  for (Eigen::Index r = 0; r < viol.size(); ++r) {
    const double next = std::min(0.5 * d.eta(r), std::max(tighten(r), factor * tau * norms(r)));
    if (viol(r) > 0 && next > tighten(r)) violated_row_grew = true;
    tighten(r) = next;
  }
  return violated_row_grew;
}

// True when some row with η_r > 0 is violated by more than its margin can ever
// absorb (t_r ≤ η_r/2): a solver-tolerance problem, not a rounding one.
bool beyond_margins(const SlabData& d, const Eigen::VectorXd& viol, const Eigen::VectorXd& tighten) {
  for (Eigen::Index r = 0; r < viol.size(); ++r)
    if (viol(r) > 0 && d.eta(r) > 0 && viol(r) + tighten(r) >= 0.5 * d.eta(r)) return true;
  return false;
}

}  // namespace

bool prepare_resolve(ClpSimplex& model, const SlabData& d, const Eigen::VectorXd& viol, int round, double& tau,
                     Eigen::VectorXd& tighten) {
  if (beyond_margins(d, viol, tighten) && model.primalTolerance() > kMinClpPrimalTolerance) {
    // Slabs thinner than CLP's primal tolerance (which lets rows sit outside
    // their band): ask CLP for a tighter tolerance and start the margins afresh.
    model.setPrimalTolerance(std::max(kMinClpPrimalTolerance, model.primalTolerance() * 1e-3));
    tighten.setZero();
    tau = 0;
  } else if (!tighten_rows(d, viol, round, tau, tighten)) {
    return false;
  }
  set_row_bounds(model, d, tighten);
  return true;
}

std::vector<Eigen::VectorXd> fitted_duals(const SlabData& d, const Eigen::VectorXd& target, std::vector<int> rows,
                                          const std::vector<int>& cols, const Eigen::VectorXd& residual,
                                          double sign) {
  std::vector<Eigen::VectorXd> out;
  for (int pass = 0; pass < 2 && !rows.empty() && !cols.empty(); ++pass) {
    Eigen::MatrixXd m(cols.size(), rows.size());
    Eigen::VectorXd t(cols.size());
    for (std::size_t i = 0; i < cols.size(); ++i) {
      t(i) = target(cols[i]);
      for (std::size_t j = 0; j < rows.size(); ++j) m(i, j) = d.a(rows[j], cols[i]);
    }
    const Eigen::VectorXd ys = Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd>(m).solve(t);
    Eigen::VectorXd y = Eigen::VectorXd::Zero(d.a.rows());
    std::vector<int> keep;
    for (std::size_t j = 0; j < rows.size(); ++j) {
      y(rows[j]) = ys(j);
      const double side = residual(rows[j]) >= 0 ? 1.0 : -1.0;
      if (sign * side * ys(j) >= 0) keep.push_back(rows[j]);
    }
    if (y.allFinite()) out.push_back(std::move(y));
    if (keep.size() == rows.size()) break;
    rows = std::move(keep);
  }
  return out;
}

std::vector<int> rows_at_bound(const ClpSimplex& model, int N) {
  std::vector<int> rows;
  for (int r = 0; r < N; ++r) {
    const auto st = model.getRowStatus(r);
    if (st == ClpSimplex::atUpperBound || st == ClpSimplex::atLowerBound || st == ClpSimplex::isFixed)
      rows.push_back(r);
  }
  return rows;
}

namespace {

// The columns polish solves for; with the box, columns CLP has at ±R are put
// there in `out` instead.
std::vector<int> polish_free_columns(const ClpSimplex& model, int n, double radius, bool box, Eigen::VectorXd& out) {
  std::vector<int> free_cols;
  for (int c = 0; c < n; ++c) {
    if (box) {
      const auto st = model.getColumnStatus(c);
      if (st == ClpSimplex::atUpperBound) {
        out(c) = radius;
        continue;
      }
      if (st == ClpSimplex::atLowerBound) {
        out(c) = -radius;
        continue;
      }
    }
    free_cols.push_back(c);
  }
  return free_cols;
}

}  // namespace

Eigen::VectorXd polish(const ClpSimplex& model, const SlabData& d, const Eigen::VectorXd& x,
                       const Eigen::VectorXd& tighten, const Eigen::VectorXd& residual, double radius, bool box) {
  const int N = static_cast<int>(d.a.rows()), n = static_cast<int>(d.a.cols());
  Eigen::VectorXd out = x;
  const std::vector<int> free_cols = polish_free_columns(model, n, radius, box, out);
  const std::vector<int> rows = rows_at_bound(model, N);
  if (rows.empty() || free_cols.empty()) return out;
  Eigen::MatrixXd m(rows.size(), free_cols.size());
  Eigen::VectorXd rhs(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const int r = rows[i];
    const double side = residual(r) >= 0 ? 1.0 : -1.0;
    rhs(i) = d.b(r) + side * (d.eta(r) - tighten(r));
    for (std::size_t j = 0; j < free_cols.size(); ++j) m(i, j) = d.a(r, free_cols[j]);
  }
  if (free_cols.size() < static_cast<std::size_t>(n)) {
    std::vector<char> is_free(n, 0);
    for (int c : free_cols) is_free[c] = 1;
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (int c = 0; c < n; ++c)
        if (!is_free[c]) rhs(i) -= d.a(rows[i], c) * out(c);
  }
  const Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(m);
  Eigen::VectorXd xf = cod.solve(rhs);
  xf += cod.solve(rhs - m * xf);
  if (!xf.allFinite()) return x;
  for (std::size_t j = 0; j < free_cols.size(); ++j) out(free_cols[j]) = xf(j);
  if (box) out = out.cwiseMax(-radius).cwiseMin(radius);
  return out;
}

namespace {

// The phase-1 LP of certify_empty, loaded into `model`: columns θ_0..θ_{n−1}, s;
// rows 2r (lower side) and 2r+1 (upper side).
void load_phase1(ClpSimplex& model, const SlabData& d, double radius) {
  const int N = static_cast<int>(d.a.rows()), n = static_cast<int>(d.a.cols());
  std::vector<CoinBigIndex> start;
  std::vector<int> index;
  std::vector<double> value;
  for (int c = 0; c < n; ++c) {
    start.push_back(static_cast<CoinBigIndex>(index.size()));
    for (int r = 0; r < N; ++r)
      if (d.a(r, c) != 0.0) {
        index.push_back(2 * r);
        value.push_back(d.a(r, c));
        index.push_back(2 * r + 1);
        value.push_back(d.a(r, c));
      }
  }
  start.push_back(static_cast<CoinBigIndex>(index.size()));
  for (int r = 0; r < N; ++r) {
    index.push_back(2 * r);
    value.push_back(1.0);
    index.push_back(2 * r + 1);
    value.push_back(-1.0);
  }
  start.push_back(static_cast<CoinBigIndex>(index.size()));
  std::vector<double> col_lo(n + 1, -radius), col_up(n + 1, radius), obj(n + 1, 0.0);
  col_lo[n] = 0.0;
  col_up[n] = COIN_DBL_MAX;
  obj[n] = 1.0;
  std::vector<double> row_lo(2 * N), row_up(2 * N);
  for (int r = 0; r < N; ++r) {
    row_lo[2 * r] = d.b(r) - d.eta(r);
    row_up[2 * r] = COIN_DBL_MAX;
    row_lo[2 * r + 1] = -COIN_DBL_MAX;
    row_up[2 * r + 1] = d.b(r) + d.eta(r);
  }
  model.setLogLevel(0);
  model.loadProblem(n + 1, 2 * N, start.data(), index.data(), value.data(), col_lo.data(), col_up.data(),
                    obj.data(), row_lo.data(), row_up.data());
}

}  // namespace

Infeasibility certify_empty(const SlabData& d, double radius) {
  Infeasibility out;
  const int N = static_cast<int>(d.a.rows()), n = static_cast<int>(d.a.cols());
  ClpSimplex model;
  load_phase1(model, d, radius);
  factorise_without_lapack(model);
  model.dual();
  if (model.status() != 0) {
    out.message = "phase-1 LP not solved: " + clp_status_text(model.status(), model.secondaryStatus());
    return out;
  }
  out.phase1 = model.primalColumnSolution()[n];
  const double* dual = model.dualRowSolution();
  Eigen::VectorXd y(N);
  for (int r = 0; r < N; ++r) y(r) = dual[2 * r] + dual[2 * r + 1];
  out.margin = std::max(farkas_lower_bound(d, radius, y), farkas_lower_bound(d, radius, -y));
  out.certified = out.margin > 0;
  std::ostringstream os;
  os << "phase-1 minimal uniform slab violation " << out.phase1 << "; Farkas certificate V(y) = " << out.margin
     << (out.certified ? " > 0: no point of the slabs lies in the box |θ_c| ≤ R (certified)"
                       : " ≤ 0: infeasibility NOT certified");
  out.message = os.str();
  return out;
}

}  // namespace mha::convex_body_detail
