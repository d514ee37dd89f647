// Fast path of the convex body's programs: COIN-OR CLP in double precision,
// followed by an a posteriori certificate computed here (proofs/convex_body_programs.md).
//
// Rigorous arithmetic used for the certificates (IEEE double, round to nearest,
// no overflow or underflow — the assumptions of Higham's standard model):
//   up(t)      the next double above t. When t = fl(a ∘ b) for one operation ∘,
//              up(t) ≥ a ∘ b exactly (and t = 0 is exact: without underflow, a sum
//              or product rounds to 0 only when it is 0); every upper bound below is
//              assembled with one up() per operation, lower bounds with down().
//   Dot2       dot products in twice the working precision (Ogita, Rump & Oishi,
//              "Accurate sum and dot product", SIAM J. Sci. Comput. 26 (2005),
//              Algorithm 5.3 with FMA-based TwoProduct), whose result satisfies
//              |res − xᵀy| ≤ u|xᵀy| + γ_k²·Σ|x_i y_i|  (their Theorem 5.3), k terms.
//              Dot2::error() returns 1.01·(u|res| + (k·u)²·S) with S the computed
//              Σ|fl(x_i y_i)|: the factor 1.01 covers 1/(1 − u), γ_k ≤ 1.001·k·u for
//              k·u ≤ 10⁻³, the rounding of S and of the expression itself.
#include "geometry/convex_body.hpp"

#include <ClpCholeskyBase.hpp>
#include <ClpInterior.hpp>
#include <ClpSimplex.hpp>
#include <CoinError.hpp>

#include <Eigen/Dense>
#include <Eigen/SVD>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace mha {

namespace {

constexpr double kUnitRoundoff = 0x1p-53;
constexpr double kInf = std::numeric_limits<double>::infinity();
// Rounds of "tighten the violated rows and re-solve" before giving up on a
// certified primal point (each round is a warm-started re-solve).
constexpr int kTighteningRounds = 6;
// CLP stops when every reduced cost is within its dual tolerance (default 10⁻⁷) of
// the right sign, i.e. possibly at a vertex that is suboptimal by ~tolerance × η.
// The certificate reports that honestly; a smaller tolerance makes it rarer. This is
// a solver setting, not a tolerance of any check here.
constexpr double kClpDualTolerance = 1e-10;
// Floor for CLP's primal tolerance (default 10⁻⁷) when thin slabs force it down.
constexpr double kMinClpPrimalTolerance = 1e-13;

double up(double t) { return t == 0.0 ? 0.0 : std::nextafter(t, kInf); }
double down(double t) { return t == 0.0 ? 0.0 : std::nextafter(t, -kInf); }

// Σ x_i y_i accumulated in twice the working precision, with a rigorous error bound.
class Dot2 {
 public:
  void add(double a, double b) {
    const double h = a * b;
    const double r = std::fma(a, b, -h);  // TwoProduct: a·b = h + r exactly
    const double x = p_ + h;               // TwoSum: p + h = x + q exactly
    const double z = x - p_;
    const double q = (p_ - (x - z)) + (h - z);
    p_ = x;
    s_ += q + r;
    abs_ += std::abs(h);
    ++k_;
  }
  double value() const { return p_ + s_; }
  // ≥ |value() − Σ x_i y_i|.
  double error() const {
    const double ku = static_cast<double>(std::max(k_, 1)) * kUnitRoundoff;
    return up(1.01 * (kUnitRoundoff * std::abs(value()) + ku * ku * abs_));
  }

 private:
  double p_ = 0, s_ = 0, abs_ = 0;
  int k_ = 0;
};

using RowMajorMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The slab data as dense arrays.
struct SlabData {
  RowMajorMatrix a;  // N×n
  Eigen::VectorXd b, eta;
};

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

// Rigorous residuals r_r = ⟨a_r, x⟩ − b_r: computed value and a bound on its error.
struct Residuals {
  Eigen::VectorXd value, error;
};

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

// w = Aᵀy (+ v when v is not empty), each entry with a rigorous error bound.
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

// v_r ≥ (|r_r| − η_r)_+ rigorously (0 means: x provably satisfies slab r).
Eigen::VectorXd violations(const SlabData& d, const Residuals& res) {
  Eigen::VectorXd v(res.value.size());
  for (Eigen::Index r = 0; r < v.size(); ++r) {
    const double s = up(std::abs(res.value(r)) + res.error(r));
    v(r) = s <= d.eta(r) ? 0.0 : up(s - d.eta(r));
  }
  return v;
}

// Upper bound on ‖v − Aᵀy‖₁ (v empty = zero), evaluated rigorously.
double l1_of_reduced_cost_up(const SlabData& d, const Eigen::VectorXd& v, const Eigen::VectorXd& y) {
  const Residuals g = transpose_times(d, -y, v);
  double total = 0;
  for (Eigen::Index c = 0; c < g.value.size(); ++c) total = up(total + up(std::abs(g.value(c)) + g.error(c)));
  return total;
}

// U(y) = Σ_r (y_r b_r + |y_r| η_r) + R‖v − Aᵀy‖₁ ≥ max{⟨v,θ⟩ : θ ∈ P}, rounded up.
double dual_upper_bound(const SlabData& d, double radius, const Eigen::VectorXd& v, const Eigen::VectorXd& y) {
  Dot2 acc;
  for (Eigen::Index r = 0; r < d.a.rows(); ++r) {
    acc.add(y(r), d.b(r));
    acc.add(std::abs(y(r)), d.eta(r));
  }
  const double s_up = up(acc.value() + acc.error());
  return up(s_up + up(radius * l1_of_reduced_cost_up(d, v, y)));
}

// V(y) = Σ_r (y_r b_r − |y_r| η_r) − R‖Aᵀy‖₁, rounded down. V(y) > 0 proves P = ∅.
double farkas_lower_bound(const SlabData& d, double radius, const Eigen::VectorXd& y) {
  Dot2 acc;
  for (Eigen::Index r = 0; r < d.a.rows(); ++r) {
    acc.add(y(r), d.b(r));
    acc.add(-std::abs(y(r)), d.eta(r));
  }
  const double s_down = down(acc.value() - acc.error());
  return down(s_down - up(radius * l1_of_reduced_cost_up(d, Eigen::VectorXd(), y)));
}

// CLP's primal tolerance (default 10⁻⁷) is an absolute slack on row activities
// after CLP's row scaling (which brings each row's largest entry near 1), so a slab
// of half-width η_r measures about η_r/‖a_r‖_∞ in CLP's units. Slabs thinner than the
// tolerance are invisible to CLP; start with 1% of the thinnest, within [10⁻¹³, 10⁻⁷].
// A solver setting, not a tolerance of any check here.
double clp_primal_tolerance(const SlabData& d) {
  double tol = 1e-7;
  for (Eigen::Index r = 0; r < d.a.rows(); ++r) {
    const double amax = d.a.row(r).cwiseAbs().maxCoeff();
    if (d.eta(r) > 0 && amax > 0) tol = std::min(tol, 0.01 * d.eta(r) / amax);
  }
  return std::max(tol, kMinClpPrimalTolerance);
}

// Column-major sparse copy of A for CLP (exact zeros skipped).
struct ClpMatrix {
  std::vector<CoinBigIndex> start;
  std::vector<int> index;
  std::vector<double> value;
};

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

// Row bounds b_r − η_r + t_r and b_r + η_r − t_r (the rounding of these bounds
// does not matter: only the certificates, evaluated against the exact data, do).
void set_row_bounds(ClpSimplex& model, const SlabData& d, const Eigen::VectorXd& tighten) {
  for (Eigen::Index r = 0; r < d.b.size(); ++r)
    model.setRowBounds(static_cast<int>(r), d.b(r) - d.eta(r) + tighten(r), d.b(r) + d.eta(r) - tighten(r));
}

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

// Dual vectors fitted to the active set CLP reports. CLP's own row duals carry
// noise up to its dual tolerance (10⁻⁷), including tiny duals of the wrong sign,
// which cost 2η_r|y_r| in the bounds. A fitted y is supported on the rows CLP has
// at a bound and solves min ‖t_F − (A_Sᵀ y_S)_F‖₂ over the columns F (complete
// orthogonal decomposition: the minimum-norm solution when degenerate). Returns
// that fit and, when some fitted duals have the wrong sign for the side their row
// is on (`sign` = +1 when y_r > 0 belongs to the upper side), a second fit without
// those rows. Any y gives a valid certificate; the caller keeps the best one.
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

// Recomputes CLP's point from its active set with a dense solve: rows CLP has at a
// bound are put on the nearer (tightened) bound, columns at a box bound on ±R (LP
// only), and the remaining coordinates solve those equations in the minimum-norm
// sense (complete orthogonal decomposition plus one step of iterative refinement).
// For the LP this is the vertex of CLP's final basis; for the QP it is the
// minimum-norm point of the active equalities, which is the QP's solution when the
// active set is right. CLP's own point can be off by up to its primal tolerance
// (10⁻⁷), which matters for slabs thinner than that; the polished point is only a
// candidate and is verified like any other.
Eigen::VectorXd polish(const ClpSimplex& model, const SlabData& d, const Eigen::VectorXd& x,
                       const Eigen::VectorXd& tighten, const Eigen::VectorXd& residual, double radius, bool box) {
  const int N = static_cast<int>(d.a.rows()), n = static_cast<int>(d.a.cols());
  Eigen::VectorXd out = x;
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

// True when some row with η_r > 0 is violated by more than its margin can ever
// absorb (t_r ≤ η_r/2): a solver-tolerance problem, not a rounding one.
bool beyond_margins(const SlabData& d, const Eigen::VectorXd& viol, const Eigen::VectorXd& tighten) {
  for (Eigen::Index r = 0; r < viol.size(); ++r)
    if (viol(r) > 0 && d.eta(r) > 0 && viol(r) + tighten(r) >= 0.5 * d.eta(r)) return true;
  return false;
}

// Replaces (x, res, viol) by the polished candidate when it is certified feasible.
bool accept_polished(const Eigen::VectorXd& candidate, const SlabData& d, Eigen::VectorXd& x, Residuals& res,
                     Eigen::VectorXd& viol) {
  Residuals cres = residuals(d, candidate);
  Eigen::VectorXd cviol = violations(d, cres);
  if (cviol.size() > 0 && cviol.maxCoeff() > 0.0) return false;
  x = candidate;
  res = std::move(cres);
  viol = std::move(cviol);
  return true;
}

struct Infeasibility {
  bool certified = false;
  double margin = 0;  // V(y) (rounded down) of the best certificate found
  double phase1 = 0;  // CLP's minimal uniform violation s*
  std::string message;
};

// Phase-1 LP  min s  s.t.  b_r − η_r − s ≤ ⟨a_r,θ⟩ ≤ b_r + η_r + s, |θ_c| ≤ R, s ≥ 0,
// solved by CLP; its row duals give a candidate Farkas vector y, checked by
// farkas_lower_bound (both signs tried: the certificate does not depend on CLP's
// sign conventions).
Infeasibility certify_empty(const SlabData& d, double radius) {
  Infeasibility out;
  const int N = static_cast<int>(d.a.rows()), n = static_cast<int>(d.a.cols());
  // Columns θ_0..θ_{n−1}, s; rows 2r (lower side) and 2r+1 (upper side).
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
  ClpSimplex model;
  model.setLogLevel(0);
  model.loadProblem(n + 1, 2 * N, start.data(), index.data(), value.data(), col_lo.data(), col_up.data(),
                    obj.data(), row_lo.data(), row_up.data());
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

}  // namespace

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

ConvexBody::Centre ConvexBody::least_squares_centre(int free) const {
  if (free < 0 || free > n_)
    throw std::invalid_argument("least_squares_centre: free must be in [0, n], got " + std::to_string(free));
  const Eigen::Index N = static_cast<Eigen::Index>(slabs_.size());
  const Eigen::Index rows = std::max<Eigen::Index>(N, n_);
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(rows, n_);
  Eigen::VectorXd c = Eigen::VectorXd::Zero(rows);
  const double phi_scale = static_cast<double>(n_) * kUnitRoundoff;
  for (Eigen::Index r = 0; r < N; ++r) {
    const auto a = Eigen::Map<const Eigen::RowVectorXd>(slabs_[r].a.data(), n_);
    const double phi = phi_scale * (std::abs(slabs_[r].b) + a.norm() * radius_);
    const double w = 1.0 / std::max({slabs_[r].eta, phi, std::numeric_limits<double>::min()});
    m.row(r) = w * a;
    c(r) = w * slabs_[r].b;
  }
  // When N > n, a Householder QR first (M = QR, SVD of the n×n factor R) halves the
  // cost; the singular values and right singular vectors are those of M, and
  // Uᵀc = U_Rᵀ (Qᵀc)_{1..n}.
  Eigen::VectorXd s_desc, utc;
  Eigen::MatrixXd v;
  if (rows > n_) {
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(m);
    const Eigen::MatrixXd r_factor = qr.matrixQR().topRows(n_).triangularView<Eigen::Upper>();
    const Eigen::VectorXd qtc = (qr.householderQ().transpose() * c).head(n_);
    Eigen::BDCSVD<Eigen::MatrixXd> svd(r_factor, Eigen::ComputeThinU | Eigen::ComputeThinV);
    s_desc = svd.singularValues();
    v = svd.matrixV();
    utc = svd.matrixU().transpose() * qtc;
  } else {
    Eigen::BDCSVD<Eigen::MatrixXd> svd(m, Eigen::ComputeThinU | Eigen::ComputeThinV);
    s_desc = svd.singularValues();
    v = svd.matrixV();
    utc = svd.matrixU().transpose() * c;
  }
  Centre out;
  out.singular_values = s_desc.reverse();
  const double s_max = s_desc.size() > 0 ? s_desc(0) : 0.0;
  out.threshold = s_max * static_cast<double>(n_) * Eigen::NumTraits<double>::epsilon();
  out.rank = static_cast<int>((s_desc.array() > out.threshold).count());
  out.free_basis.resize(free, n_);
  for (int i = 0; i < free; ++i) out.free_basis.row(i) = v.col(n_ - 1 - i).transpose();
  out.x0 = Eigen::VectorXd::Zero(n_);
  for (int j = 0; j < n_ - free; ++j)
    if (s_desc(j) > out.threshold) out.x0 += (utc(j) / s_desc(j)) * v.col(j);
  const Eigen::VectorXd& asc = out.singular_values;
  if (free == 0) {
    out.gap = kInf;
  } else if (free == n_) {
    out.gap = 1.0;  // nothing is constrained: no separation to speak of
  } else if (asc(free - 1) == 0.0) {
    out.gap = asc(free) > 0.0 ? kInf : 1.0;
  } else {
    out.gap = asc(free) / asc(free - 1);
  }
  out.weighted_residual = (m * out.x0 - c).norm();
  return out;
}

ConvexBody::LpResult ConvexBody::maximise(const Eigen::VectorXd& u) const { return optimise(u, 1.0); }
ConvexBody::LpResult ConvexBody::minimise(const Eigen::VectorXd& u) const { return optimise(u, -1.0); }

// Solves max ⟨v, θ⟩ over P with v = sense·u and converts back: min ⟨u,θ⟩ = −max ⟨−u,θ⟩.
ConvexBody::LpResult ConvexBody::optimise(const Eigen::VectorXd& u, double sense) const {
  check_vector(u, "direction");
  const Eigen::VectorXd v = sense * u;
  const SlabData d = gather(slabs_, n_);
  const int N = static_cast<int>(slabs_.size());
  LpResult out;
  std::ostringstream msg;
  try {
    const ClpMatrix a = clp_matrix(d);
    std::vector<double> col_lo(n_, -radius_), col_up(n_, radius_);
    std::vector<double> obj(v.data(), v.data() + n_);
    std::vector<double> row_lo(N), row_up(N);
    ClpSimplex model;
    model.setLogLevel(0);
    model.loadProblem(n_, N, a.start.data(), a.index.data(), a.value.data(), col_lo.data(), col_up.data(),
                      obj.data(), row_lo.data(), row_up.data());
    model.setOptimizationDirection(-1.0);  // maximise
    model.setDualTolerance(kClpDualTolerance);
    model.setPrimalTolerance(clp_primal_tolerance(d));
    Eigen::VectorXd tighten = Eigen::VectorXd::Zero(N);
    set_row_bounds(model, d, tighten);
    model.dual();
    out.iterations = model.numberIterations();
    if (model.status() == 1) {
      const Infeasibility inf = certify_empty(d, radius_);
      if (!inf.certified) {
        // Not confirmed by a certificate: ask the primal simplex before believing it.
        msg << "dual simplex reported infeasible (" << inf.message << "), primal simplex retried; ";
        model.primal();
        out.iterations += model.numberIterations();
      }
      if (inf.certified || model.status() == 1) {
        out.status = LpResult::infeasible;
        out.certified = inf.certified;
        out.value = std::numeric_limits<double>::quiet_NaN();
        out.message = "CLP: primal infeasible; " + inf.message;
        return out;
      }
    }
    if (model.status() != 0) {
      out.status = LpResult::failed;
      out.value = std::numeric_limits<double>::quiet_NaN();
      out.message = clp_status_text(model.status(), model.secondaryStatus()) +
                    (model.status() == 2 ? " — impossible for a box-bounded LP" : "");
      return out;
    }
    // Verification loop: clip to the box (exact), check every slab rigorously,
    // tighten the violated rows and re-solve warm until x is certified in P.
    Eigen::VectorXd x, y(N), viol;
    Residuals res;
    int round = 0;
    double tau = 0;
    bool polished = false;
    for (;; ++round) {
      x = Eigen::Map<const Eigen::VectorXd>(model.primalColumnSolution(), n_).cwiseMax(-radius_).cwiseMin(radius_);
      y = Eigen::Map<const Eigen::VectorXd>(model.dualRowSolution(), N);
      res = residuals(d, x);
      viol = violations(d, res);
      if (N == 0 || viol.maxCoeff() <= 0.0) break;
      if (accept_polished(polish(model, d, x, tighten, res.value, radius_, true), d, x, res, viol)) {
        polished = true;
        break;
      }
      if (round >= kTighteningRounds) break;
      if (beyond_margins(d, viol, tighten) && model.primalTolerance() > kMinClpPrimalTolerance) {
        // Slabs thinner than CLP's primal tolerance (which lets rows sit outside
        // their band): ask CLP for a tighter tolerance and start the margins afresh.
        model.setPrimalTolerance(std::max(kMinClpPrimalTolerance, model.primalTolerance() * 1e-3));
        tighten.setZero();
        tau = 0;
      } else if (!tighten_rows(d, viol, round, tau, tighten)) {
        break;
      }
      set_row_bounds(model, d, tighten);
      model.dual();
      out.iterations += model.numberIterations();
      if (model.status() != 0) {
        // The tightened LP was not solved: go back to the last point we had.
        msg << "re-solve after tightening gave " << clp_status_text(model.status(), model.secondaryStatus())
            << "; ";
        break;
      }
    }
    const bool feasible = N == 0 || viol.maxCoeff() <= 0.0;
    if (!feasible) {
      // CLP's "optimal" point could not be certified: P may be empty but within
      // CLP's primal tolerance of nonempty. Settle that first.
      const Infeasibility inf = certify_empty(d, radius_);
      if (inf.certified) {
        out.status = LpResult::infeasible;
        out.certified = true;
        out.value = std::numeric_limits<double>::quiet_NaN();
        out.message = "CLP reported optimal but its point was not certified; " + inf.message;
        return out;
      }
    }
    // Value and its rounding.
    Dot2 vx;
    for (int c = 0; c < n_; ++c) vx.add(v(c), x(c));
    const double value = vx.value();
    const double value_err = vx.error();
    // Upper bound on the optimum from dual certificates: CLP's y (either sign: the
    // bound does not rely on CLP's sign convention) and the refitted y.
    double upper = dual_upper_bound(d, radius_, v, y);
    out.dual = y;
    auto try_dual = [&](const Eigen::VectorXd& candidate) {
      const double bound = dual_upper_bound(d, radius_, v, candidate);
      if (bound < upper) {
        upper = bound;
        out.dual = candidate;
      }
    };
    if (N > 0) {
      try_dual(-y);
      std::vector<int> free_cols;
      for (int c = 0; c < n_; ++c)
        if (std::abs(x(c)) < radius_) free_cols.push_back(c);
      for (const Eigen::VectorXd& y_fit : fitted_duals(d, v, rows_at_bound(model, N), free_cols, res.value, 1.0))
        try_dual(y_fit);
    }
    double lower = down(value - value_err);
    if (!feasible) {
      // Heuristic side: OPT ≥ ⟨v,x⟩ − Σ_r |y*_r| viol_r, with CLP's y in place of y*.
      double penalty = 0;
      for (int r = 0; r < N; ++r) penalty = up(penalty + up(std::abs(y(r)) * viol(r)));
      lower = down(lower - penalty);
      msg << "x violates " << (viol.array() > 0).count() << " slab(s) by up to " << viol.maxCoeff()
          << " after " << round << " tightening round(s); the lower side assumes |y*_r| <= |y_r| on those rows";
    } else {
      msg << "certified after " << round << " tightening round(s)" << (polished ? ", active-set polished point" : "");
    }
    out.status = LpResult::optimal;
    out.certified = feasible;
    out.x = x;
    out.value = sense * value;
    const double err = std::max({up(upper - value), up(value - lower), 0.0});
    out.error_bound = err;
    if (sense > 0) {
      out.lower = lower;
      out.upper = upper;
    } else {
      out.lower = -upper;
      out.upper = -lower;
    }
    out.message = msg.str();
  } catch (const CoinError& e) {
    out.status = LpResult::failed;
    out.value = std::numeric_limits<double>::quiet_NaN();
    out.message = "CLP error: " + e.message() + " in " + e.className() + "::" + e.methodName();
  }
  return out;
}

ConvexBody::Width ConvexBody::width(const Eigen::VectorXd& u) const {
  Width w;
  w.max = maximise(u);
  w.min = minimise(u);
  if (w.max.status == LpResult::optimal && w.min.status == LpResult::optimal) {
    w.width = w.max.value - w.min.value;
    // |fl(a − b) − (a − b)| ≤ u·|fl(a − b)| for one subtraction, bounded by one ulp.
    w.error_bound = up(up(w.max.error_bound + w.min.error_bound) + up(std::abs(w.width) * 2 * kUnitRoundoff));
  } else {
    w.width = std::numeric_limits<double>::quiet_NaN();
    w.error_bound = std::numeric_limits<double>::quiet_NaN();
  }
  return w;
}

ConvexBody::QpResult ConvexBody::min_norm_point() const {
  QpResult out;
  out.norm = std::numeric_limits<double>::quiet_NaN();
  const int N = static_cast<int>(slabs_.size());
  if (N == 0) {
    out.status = QpResult::optimal;
    out.x = Eigen::VectorXd::Zero(n_);
    out.norm = 0;
    out.inside_ball = true;
    out.certified = true;
    out.message = "no slabs: the minimum-norm point is 0";
    return out;
  }
  std::ostringstream msg;
  // 1. Gate: is P = slabs ∩ box nonempty? CLP's barrier calls abort() when its
  //    iterates diverge, as they do on infeasible problems, so it only runs on slabs
  //    proved feasible (a certified point of P). If P is empty, so is K.
  const LpResult gate = optimise(Eigen::VectorXd::Zero(n_), 1.0);
  if (gate.status == LpResult::infeasible) {
    out.status = QpResult::infeasible;
    out.certified = gate.certified;
    out.message = "P = slabs ∩ box is empty, hence K = ∅: " + gate.message;
    return out;
  }
  const bool slabs_feasible = gate.status == LpResult::optimal && gate.certified;
  if (!slabs_feasible) msg << "feasibility of P not certified (" << gate.message << "): barrier skipped; ";

  // 2. Zero normals: the row reads |b_r| ≤ η_r whatever θ is (exact comparison). They
  //    are left out of the solver (their duals would be free) and of the certificate.
  std::vector<Slab> rows;
  for (const Slab& sl : slabs_) {
    bool zero = true;
    for (double v : sl.a) zero = zero && v == 0.0;
    if (!zero) {
      rows.push_back(sl);
    } else if (std::abs(sl.b) > sl.eta) {
      out.status = QpResult::infeasible;
      out.certified = true;
      out.message = "a slab with a zero normal has |b| > eta: the slabs are empty";
      return out;
    }
  }
  if (rows.empty()) {
    out.status = QpResult::optimal;
    out.x = Eigen::VectorXd::Zero(n_);
    out.norm = 0;
    out.inside_ball = true;
    out.certified = true;
    out.message = "only zero normals, all satisfied: the minimum-norm point is 0";
    return out;
  }
  const int M = static_cast<int>(rows.size());
  const SlabData d = gather(rows, n_);

  try {
    const ClpMatrix a = clp_matrix(d);
    std::vector<double> col_lo(n_, -COIN_DBL_MAX), col_up(n_, COIN_DBL_MAX), obj(n_, 0.0);
    std::vector<double> row_lo(M, 0.0), row_up(M, 0.0);
    std::vector<CoinBigIndex> q_start(n_ + 1);
    std::vector<int> q_index(n_);
    std::vector<double> q_value(n_, 1.0);  // CLP minimises cᵀθ + ½θᵀQθ: Q = I
    for (int c = 0; c <= n_; ++c) q_start[c] = c;
    for (int c = 0; c < n_; ++c) q_index[c] = c;
    Eigen::VectorXd tighten = Eigen::VectorXd::Zero(M);
    // CLP's primal simplex for QPs can cycle on degenerate bodies (and then stop with
    // a suboptimal point it calls optimal): cap its iterations, and never trust it
    // beyond what the certificate proves.
    const int simplex_cap = 20 * (n_ + M);

    // 3. Barrier (when safe), then CLP's primal simplex from the barrier point
    //    (crossover) for an exact active set; otherwise a feasibility LP and the
    //    primal simplex for QPs.
    std::unique_ptr<ClpSimplex> model;
    Eigen::VectorXd barrier_x;
    if (slabs_feasible) {
      ClpInterior barrier;
      barrier.setLogLevel(0);
      barrier.loadProblem(n_, M, a.start.data(), a.index.data(), a.value.data(), col_lo.data(), col_up.data(),
                          obj.data(), row_lo.data(), row_up.data());
      for (int r = 0; r < M; ++r) barrier.setRowBounds(r, d.b(r) - d.eta(r), d.b(r) + d.eta(r));
      barrier.loadQuadraticObjective(n_, q_start.data(), q_index.data(), q_value.data());
      auto* cholesky = new ClpCholeskyBase();  // owned by `barrier` from here on
      cholesky->setKKT(true);
      barrier.setCholesky(cholesky);
      barrier.primalDual();
      barrier_x = Eigen::Map<const Eigen::VectorXd>(barrier.primalColumnSolution(), n_);
      if (!barrier_x.allFinite()) barrier_x.resize(0);
      model = std::make_unique<ClpSimplex>(barrier);
      model->setLogLevel(0);
      model->createStatus();  // crossover from a clean (slack) status, as CLP's testBarrier does
      model->setDualTolerance(kClpDualTolerance);
      model->setPrimalTolerance(clp_primal_tolerance(d));
      model->setMaximumIterations(simplex_cap);
      model->primal(1);  // values pass from the barrier point
    } else {
      model = std::make_unique<ClpSimplex>();
      model->setLogLevel(0);
      model->loadProblem(n_, M, a.start.data(), a.index.data(), a.value.data(), col_lo.data(), col_up.data(),
                         obj.data(), row_lo.data(), row_up.data());
      set_row_bounds(*model, d, tighten);
      model->setPrimalTolerance(clp_primal_tolerance(d));
      model->primal();  // feasibility (CLP 1.17's dual simplex misjudges free-column zero-objective LPs)
      if (model->status() == 0) {
        model->loadQuadraticObjective(n_, q_start.data(), q_index.data(), q_value.data());
        model->setDualTolerance(kClpDualTolerance);
        model->setMaximumIterations(simplex_cap);
        model->primal();
      }
    }
    if (model->status() != 0 && model->status() != 3) {
      const Infeasibility inf = certify_empty(d, radius_);
      out.status = inf.certified || model->status() == 1 ? QpResult::infeasible : QpResult::failed;
      out.certified = inf.certified;
      out.message = msg.str() + "CLP QP: " + clp_status_text(model->status(), model->secondaryStatus()) + "; " +
                    inf.message;
      return out;
    }

    // 4. Certification. Candidates: CLP's point, its active-set polish, and the
    //    barrier point; each is verified rigorously and the smallest bound wins.
    //    While none verifies, tighten the rows and re-solve (warm primal simplex).
    std::vector<int> all_cols(n_);
    for (int c = 0; c < n_; ++c) all_cols[c] = c;
    struct Candidate {
      Eigen::VectorXd x;
      Residuals res;
      Eigen::VectorXd viol;
      double bound = kInf;
      bool feasible = false;
    };
    // Gap G(y) = ½‖x − Aᵀy‖² + Σ_r (y_r r_r + |y_r| η'_r) ≥ ½‖x‖² − D(y), with
    // η' = η + viol (= η when x is certified feasible); see the proof file.
    auto gap_up = [&](const Candidate& c, const Eigen::VectorXd& yy) {
      const Residuals diff = transpose_times(d, -yy, c.x);  // x − Aᵀy, rigorous per entry
      double ssq = 0;
      for (int k = 0; k < n_; ++k) {
        const double e = up(std::abs(diff.value(k)) + diff.error(k));
        ssq = up(ssq + up(e * e));
      }
      Dot2 acc;  // Σ_r y_r r_r + |y_r| η'_r ≤ Σ_r y_r r̂_r + |y_r| (η'_r + e_r)
      for (int r = 0; r < M; ++r) {
        acc.add(yy(r), c.res.value(r));
        acc.add(std::abs(yy(r)), up(up(d.eta(r) + c.viol(r)) + c.res.error(r)));
      }
      const double t2 = up(acc.value() + acc.error());
      return up(up(0.5 * ssq) + std::max(t2, 0.0));
    };
    auto evaluate = [&](const Eigen::VectorXd& x, const Eigen::VectorXd& y_clp) {
      Candidate c;
      c.x = x;
      c.res = residuals(d, x);
      c.viol = violations(d, c.res);
      c.feasible = c.viol.maxCoeff() <= 0.0;
      double gap = std::min(gap_up(c, y_clp), gap_up(c, -y_clp));
      for (const Eigen::VectorXd& y_fit : fitted_duals(d, x, rows_at_bound(*model, M), all_cols, c.res.value, -1.0))
        gap = std::min(gap, gap_up(c, y_fit));
      c.bound = up(std::sqrt(up(2 * gap)));
      return c;
    };
    Candidate best, last_clp;
    std::string best_name;
    auto consider = [&](Candidate c, const char* name) {
      if (c.feasible && (!best.feasible || c.bound < best.bound)) {
        best = std::move(c);
        best_name = name;
      }
    };
    int round = 0;
    double tau = 0;
    for (;; ++round) {
      const Eigen::VectorXd x = Eigen::Map<const Eigen::VectorXd>(model->primalColumnSolution(), n_);
      const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(model->dualRowSolution(), M);
      last_clp = evaluate(x, y);
      consider(last_clp, "CLP's point");
      consider(evaluate(polish(*model, d, x, tighten, last_clp.res.value, radius_, false), y), "active-set polished point");
      if (round == 0 && barrier_x.size() == n_) consider(evaluate(barrier_x, y), "barrier point");
      // The barrier point (strictly inside, but only ≈ √μ-accurate) is a fallback:
      // keep tightening until one of CLP's vertex-accurate points is certified too.
      const bool simplex_certified = best.feasible && best_name != "barrier point";
      if (simplex_certified || round >= kTighteningRounds) break;
      if (beyond_margins(d, last_clp.viol, tighten) && model->primalTolerance() > kMinClpPrimalTolerance) {
        // Slabs thinner than CLP's primal tolerance (which lets rows sit outside
        // their band): ask CLP for a tighter tolerance and start the margins afresh.
        model->setPrimalTolerance(std::max(kMinClpPrimalTolerance, model->primalTolerance() * 1e-3));
        tighten.setZero();
        tau = 0;
      } else if (!tighten_rows(d, last_clp.viol, round, tau, tighten)) {
        break;
      }
      set_row_bounds(*model, d, tighten);
      model->primal();
      if (model->status() != 0 && model->status() != 3) {
        msg << "re-solve after tightening gave " << clp_status_text(model->status(), model->secondaryStatus())
            << "; ";
        break;
      }
    }
    if (!best.feasible) {
      const Infeasibility inf = certify_empty(d, radius_);
      if (inf.certified) {
        out.status = QpResult::infeasible;
        out.certified = true;
        out.message = msg.str() + "CLP reported optimal but no point was certified; " + inf.message;
        return out;
      }
      // Heuristic: ‖x*' − x*‖² ≤ 2 Σ_r |y*_r| viol_r (nested min-norm points, η' = η + viol),
      // with CLP's y in place of the optimal dual y*.
      best = last_clp;
      const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(model->dualRowSolution(), M);
      double penalty = 0;
      for (int r = 0; r < M; ++r) penalty = up(penalty + up(std::abs(y(r)) * best.viol(r)));
      best.bound = up(best.bound + up(std::sqrt(up(2 * penalty))));
      msg << "x violates " << (best.viol.array() > 0).count() << " slab(s) by up to " << best.viol.maxCoeff()
          << " after " << round << " tightening round(s); the bound assumes |y*_r| <= |y_r| on those rows";
    } else {
      msg << "certified (" << best_name << ") after " << round << " tightening round(s)";
    }
    out.status = QpResult::optimal;
    out.certified = best.feasible;
    out.x = best.x;
    out.norm = best.x.norm();
    out.error_bound = best.bound;
    // ‖x‖ computed with relative error ≤ (n/2 + 2)u; inflate before comparing with R.
    out.inside_ball = up(out.norm * (1 + static_cast<double>(n_ + 4) * kUnitRoundoff)) <= radius_;
    out.message = msg.str();
  } catch (const CoinError& e) {
    out.status = QpResult::failed;
    out.message = "CLP error: " + e.message() + " in " + e.className() + "::" + e.methodName();
  }
  return out;
}

}  // namespace mha
