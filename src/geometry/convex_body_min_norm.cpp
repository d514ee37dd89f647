// The minimum-norm point of the body's slabs, fast path: CLP's barrier and a
// primal-simplex crossover (or the primal simplex for QPs alone), then every
// candidate point verified rigorously with a duality-gap bound on its distance
// to the true point (proofs/convex_body_programs.md). Stage 3's proxy is checked
// against it (the active-set path: min_norm_active_set.cpp).
#include "geometry/convex_body.hpp"

#include "geometry/convex_body_clp.hpp"
#include "geometry/clp_settings.hpp"

#include <ClpCholeskyBase.hpp>
#include <ClpInterior.hpp>
#include <CoinError.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <sstream>

namespace mha {

using namespace convex_body_detail;

namespace {

using QpResult = ConvexBody::QpResult;

QpResult zero_point(int n, const char* message) {
  QpResult out;
  out.status = QpResult::optimal;
  out.x = Eigen::VectorXd::Zero(n);
  out.norm = 0;
  out.inside_ball = true;
  out.certified = true;
  out.message = message;
  return out;
}

// The slabs with a nonzero normal. A zero normal reads |b_r| ≤ η_r whatever θ is
// (exact comparison): such rows are left out of the solver (their duals would be
// free) and of the certificate. False when one of them is violated: the slabs are empty.
bool nonzero_normals(const std::vector<Slab>& slabs, std::vector<Slab>& rows) {
  for (const Slab& sl : slabs) {
    bool zero = true;
    for (double v : sl.a) zero = zero && v == 0.0;
    if (!zero) {
      rows.push_back(sl);
    } else if (std::abs(sl.b) > sl.eta) {
      return false;
    }
  }
  return true;
}

// CLP's form of min ½‖θ‖² over the slabs: free columns, zero linear objective, Q = I.
struct QpData {
  ClpMatrix a;
  std::vector<double> col_lo, col_up, obj, row_lo, row_up;
  std::vector<CoinBigIndex> q_start;
  std::vector<int> q_index;
  std::vector<double> q_value;
};

QpData qp_data(const SlabData& d) {
  const int n = static_cast<int>(d.a.cols()), M = static_cast<int>(d.a.rows());
  QpData q{clp_matrix(d),
           std::vector<double>(n, -COIN_DBL_MAX),
           std::vector<double>(n, COIN_DBL_MAX),
           std::vector<double>(n, 0.0),
           std::vector<double>(M, 0.0),
           std::vector<double>(M, 0.0),
           std::vector<CoinBigIndex>(n + 1),
           std::vector<int>(n),
           std::vector<double>(n, 1.0)};  // CLP minimises cᵀθ + ½θᵀQθ: Q = I
  for (int c = 0; c <= n; ++c) q.q_start[c] = c;
  for (int c = 0; c < n; ++c) q.q_index[c] = c;
  return q;
}

// CLP's QP after its solve, and the barrier point (empty when none) kept as a candidate.
struct QpSolve {
  std::unique_ptr<ClpSimplex> model;
  Eigen::VectorXd barrier_x;
};

// The barrier (only on slabs proved feasible: it aborts on infeasible problems),
// then CLP's primal simplex from the barrier point (crossover) for an exact active set.
QpSolve barrier_then_crossover(QpData& q, const SlabData& d, int simplex_cap) {
  const int n = static_cast<int>(d.a.cols()), M = static_cast<int>(d.a.rows());
  QpSolve s;
  ClpInterior barrier;
  barrier.setLogLevel(0);
  barrier.loadProblem(n, M, q.a.start.data(), q.a.index.data(), q.a.value.data(), q.col_lo.data(), q.col_up.data(),
                      q.obj.data(), q.row_lo.data(), q.row_up.data());
  for (int r = 0; r < M; ++r) barrier.setRowBounds(r, d.b(r) - d.eta(r), d.b(r) + d.eta(r));
  barrier.loadQuadraticObjective(n, q.q_start.data(), q.q_index.data(), q.q_value.data());
  auto* cholesky = new ClpCholeskyBase();  // owned by `barrier` from here on
  cholesky->setKKT(true);
  barrier.setCholesky(cholesky);
  barrier.primalDual();
  s.barrier_x = Eigen::Map<const Eigen::VectorXd>(barrier.primalColumnSolution(), n);
  if (!s.barrier_x.allFinite()) s.barrier_x.resize(0);
  s.model = std::make_unique<ClpSimplex>(barrier);
  s.model->setLogLevel(0);
  s.model->createStatus();  // crossover from a clean (slack) status, as CLP's testBarrier does
  s.model->setDualTolerance(kClpDualTolerance);
  s.model->setPrimalTolerance(clp_primal_tolerance(d));
  s.model->setMaximumIterations(simplex_cap);
  factorise_without_lapack(*s.model);
  s.model->primal(1);  // values pass from the barrier point
  return s;
}

// A feasibility LP, then the primal simplex for QPs (no barrier point).
QpSolve simplex_only(QpData& q, const SlabData& d, const Eigen::VectorXd& tighten, int simplex_cap) {
  const int n = static_cast<int>(d.a.cols()), M = static_cast<int>(d.a.rows());
  QpSolve s;
  s.model = std::make_unique<ClpSimplex>();
  ClpSimplex& model = *s.model;
  model.setLogLevel(0);
  model.loadProblem(n, M, q.a.start.data(), q.a.index.data(), q.a.value.data(), q.col_lo.data(), q.col_up.data(),
                    q.obj.data(), q.row_lo.data(), q.row_up.data());
  set_row_bounds(model, d, tighten);
  model.setPrimalTolerance(clp_primal_tolerance(d));
  factorise_without_lapack(model);
  model.primal();  // feasibility (CLP 1.17's dual simplex misjudges free-column zero-objective LPs)
  if (model.status() == 0) {
    model.loadQuadraticObjective(n, q.q_start.data(), q.q_index.data(), q.q_value.data());
    model.setDualTolerance(kClpDualTolerance);
    model.setMaximumIterations(simplex_cap);
    model.primal();
  }
  return s;
}

// A candidate minimum-norm point, verified: its rigorous residuals and slab
// violations, and `bound` ≥ ‖x − x*‖ (+inf until evaluated).
struct Candidate {
  Eigen::VectorXd x;
  Residuals res;
  Eigen::VectorXd viol;
  double bound = kInf;
  bool feasible = false;
};

// Gap G(y) = ½‖x − Aᵀy‖² + Σ_r (y_r r_r + |y_r| η'_r) ≥ ½‖x‖² − D(y), with
// η' = η + viol (= η when x is certified feasible); see the proof file.
double gap_up(const SlabData& d, const Candidate& c, const Eigen::VectorXd& yy) {
  const int n = static_cast<int>(d.a.cols()), M = static_cast<int>(d.a.rows());
  const Residuals diff = transpose_times(d, -yy, c.x);  // x − Aᵀy, rigorous per entry
  double ssq = 0;
  for (int k = 0; k < n; ++k) {
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
}

// x checked against the slabs, with the smallest gap over CLP's y (either sign)
// and the duals fitted to CLP's active set.
Candidate evaluate(const ClpSimplex& model, const SlabData& d, const Eigen::VectorXd& x, const Eigen::VectorXd& y_clp) {
  const int n = static_cast<int>(d.a.cols()), M = static_cast<int>(d.a.rows());
  std::vector<int> all_cols(n);
  for (int c = 0; c < n; ++c) all_cols[c] = c;
  Candidate c;
  c.x = x;
  c.res = residuals(d, x);
  c.viol = violations(d, c.res);
  c.feasible = c.viol.maxCoeff() <= 0.0;
  double gap = std::min(gap_up(d, c, y_clp), gap_up(d, c, -y_clp));
  for (const Eigen::VectorXd& y_fit : fitted_duals(d, x, rows_at_bound(model, M), all_cols, c.res.value, -1.0))
    gap = std::min(gap, gap_up(d, c, y_fit));
  c.bound = up(std::sqrt(up(2 * gap)));
  return c;
}

// The certified candidate with the smallest bound so far, and CLP's last point.
struct Search {
  Candidate best, last_clp;
  std::string best_name;
  int round = 0;
  void consider(Candidate c, const char* name) {
    if (c.feasible && (!best.feasible || c.bound < best.bound)) {
      best = std::move(c);
      best_name = name;
    }
  }
};

// Candidates: CLP's point, its active-set polish, and the barrier point; each is
// verified rigorously and the smallest bound wins. While none of CLP's verifies,
// tighten the rows and re-solve (warm primal simplex).
Search search_candidates(ClpSimplex& model, const SlabData& d, const Eigen::VectorXd& barrier_x, double radius,
                         Eigen::VectorXd& tighten, std::ostringstream& msg) {
  const int n = static_cast<int>(d.a.cols()), M = static_cast<int>(d.a.rows());
  Search s;
  double tau = 0;
  for (;; ++s.round) {
    const Eigen::VectorXd x = Eigen::Map<const Eigen::VectorXd>(model.primalColumnSolution(), n);
    const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(model.dualRowSolution(), M);
    s.last_clp = evaluate(model, d, x, y);
    s.consider(s.last_clp, "CLP's point");
    s.consider(evaluate(model, d, polish(model, d, x, tighten, s.last_clp.res.value, radius, false), y),
               "active-set polished point");
    if (s.round == 0 && barrier_x.size() == n) s.consider(evaluate(model, d, barrier_x, y), "barrier point");
    // The barrier point (strictly inside, but only ≈ √μ-accurate) is a fallback:
    // keep tightening until one of CLP's vertex-accurate points is certified too.
    const bool simplex_certified = s.best.feasible && s.best_name != "barrier point";
    if (simplex_certified || s.round >= kTighteningRounds) break;
    if (!prepare_resolve(model, d, s.last_clp.viol, s.round, tau, tighten)) break;
    model.primal();
    if (model.status() != 0 && model.status() != 3) {
      msg << "re-solve after tightening gave " << clp_status_text(model.status(), model.secondaryStatus())
          << "; ";
      break;
    }
  }
  return s;
}

// No candidate was certified: CLP's last point with the heuristic bound
// ‖x*' − x*‖² ≤ 2 Σ_r |y*_r| viol_r (nested min-norm points, η' = η + viol),
// with CLP's y in place of the optimal dual y*.
Candidate heuristic_point(const ClpSimplex& model, const Search& s, std::ostringstream& msg) {
  const int M = static_cast<int>(s.last_clp.viol.size());
  Candidate best = s.last_clp;
  const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(model.dualRowSolution(), M);
  double penalty = 0;
  for (int r = 0; r < M; ++r) penalty = up(penalty + up(std::abs(y(r)) * best.viol(r)));
  best.bound = up(best.bound + up(std::sqrt(up(2 * penalty))));
  msg << "x violates " << (best.viol.array() > 0).count() << " slab(s) by up to " << best.viol.maxCoeff()
      << " after " << s.round << " tightening round(s); the bound assumes |y*_r| <= |y_r| on those rows";
  return best;
}

// Solves the QP on the nonzero-normal rows `d` and certifies its point; `msg`
// holds what the feasibility gate had to say.
QpResult solve_and_certify(const SlabData& d, double radius, bool slabs_feasible, std::ostringstream& msg) {
  const int n = static_cast<int>(d.a.cols()), M = static_cast<int>(d.a.rows());
  QpResult out;
  out.norm = std::numeric_limits<double>::quiet_NaN();
  QpData q = qp_data(d);
  Eigen::VectorXd tighten = Eigen::VectorXd::Zero(M);
  // CLP's primal simplex for QPs can cycle on degenerate bodies (and then stop with
  // a suboptimal point it calls optimal): cap its iterations, and never trust it
  // beyond what the certificate proves.
  const int simplex_cap = 20 * (n + M);
  QpSolve solve = slabs_feasible ? barrier_then_crossover(q, d, simplex_cap) : simplex_only(q, d, tighten, simplex_cap);
  ClpSimplex& model = *solve.model;
  if (model.status() != 0 && model.status() != 3) {
    const Infeasibility inf = certify_empty(d, radius);
    out.status = inf.certified || model.status() == 1 ? QpResult::infeasible : QpResult::failed;
    out.certified = inf.certified;
    out.message = msg.str() + "CLP QP: " + clp_status_text(model.status(), model.secondaryStatus()) + "; " +
                  inf.message;
    return out;
  }
  Search s = search_candidates(model, d, solve.barrier_x, radius, tighten, msg);
  if (!s.best.feasible) {
    const Infeasibility inf = certify_empty(d, radius);
    if (inf.certified) {
      out.status = QpResult::infeasible;
      out.certified = true;
      out.message = msg.str() + "CLP reported optimal but no point was certified; " + inf.message;
      return out;
    }
    s.best = heuristic_point(model, s, msg);
  } else {
    msg << "certified (" << s.best_name << ") after " << s.round << " tightening round(s)";
  }
  out.status = QpResult::optimal;
  out.certified = s.best.feasible;
  out.x = s.best.x;
  out.norm = s.best.x.norm();
  out.error_bound = s.best.bound;
  // ‖x‖ computed with relative error ≤ (n/2 + 2)u; inflate before comparing with R.
  out.inside_ball = up(out.norm * (1 + static_cast<double>(n + 4) * tolerance::kDoubleUnitRoundoff)) <= radius;
  out.message = msg.str();
  return out;
}

}  // namespace

ConvexBody::QpResult ConvexBody::min_norm_point() const {
  if (slabs_.empty()) return zero_point(n_, "no slabs: the minimum-norm point is 0");
  std::ostringstream msg;
  // 1. Gate: is P = slabs ∩ box nonempty? CLP's barrier calls abort() when its
  //    iterates diverge, as they do on infeasible problems, so it only runs on slabs
  //    proved feasible (a certified point of P). If P is empty, so is K.
  const LpResult gate = optimise(Eigen::VectorXd::Zero(n_), 1.0);
  QpResult out;
  out.norm = std::numeric_limits<double>::quiet_NaN();
  if (gate.status == LpResult::infeasible) {
    out.status = QpResult::infeasible;
    out.certified = gate.certified;
    out.message = "P = slabs ∩ box is empty, hence K = ∅: " + gate.message;
    return out;
  }
  const bool slabs_feasible = gate.status == LpResult::optimal && gate.certified;
  if (!slabs_feasible) msg << "feasibility of P not certified (" << gate.message << "): barrier skipped; ";
  // 2. Zero normals (exact comparisons), then 3. the QP and 4. its certification.
  std::vector<Slab> rows;
  if (!nonzero_normals(slabs_, rows)) {
    out.status = QpResult::infeasible;
    out.certified = true;
    out.message = "a slab with a zero normal has |b| > eta: the slabs are empty";
    return out;
  }
  if (rows.empty()) return zero_point(n_, "only zero normals, all satisfied: the minimum-norm point is 0");
  try {
    return solve_and_certify(gather(rows, n_), radius_, slabs_feasible, msg);
  } catch (const CoinError& e) {
    out.status = QpResult::failed;
    out.message = "CLP error: " + e.message() + " in " + e.className() + "::" + e.methodName();
  }
  return out;
}

}  // namespace mha
