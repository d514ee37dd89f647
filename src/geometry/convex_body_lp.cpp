// The body's linear programs, fast path: max / min ⟨u, θ⟩ over P and the width
// along u, solved by CLP's dual simplex and certified a posteriori
// (proofs/convex_body_programs.md): x is checked to lie in P with rounding
// accounted, and the optimum is bracketed by ⟨u, x⟩ and a dual upper bound.
#include "geometry/convex_body.hpp"

#include "geometry/convex_body_clp.hpp"
#include "geometry/clp_settings.hpp"

#include <CoinError.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace mha {

using namespace convex_body_detail;

namespace {

using LpResult = ConvexBody::LpResult;

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

// CLP's LP max ⟨v, θ⟩ over the box |θ_c| ≤ R, with the rows' bounds left to set_row_bounds.
void load_lp(ClpSimplex& model, const SlabData& d, const Eigen::VectorXd& v, double radius) {
  const int n = static_cast<int>(d.a.cols()), N = static_cast<int>(d.a.rows());
  const ClpMatrix a = clp_matrix(d);
  std::vector<double> col_lo(n, -radius), col_up(n, radius);
  std::vector<double> obj(v.data(), v.data() + n);
  std::vector<double> row_lo(N), row_up(N);
  model.setLogLevel(0);
  model.loadProblem(n, N, a.start.data(), a.index.data(), a.value.data(), col_lo.data(), col_up.data(),
                    obj.data(), row_lo.data(), row_up.data());
  model.setOptimizationDirection(-1.0);  // maximise
  model.setDualTolerance(kClpDualTolerance);
  model.setPrimalTolerance(clp_primal_tolerance(d));
}

// Whether the first solve already decides the LP: infeasible (certified by Farkas,
// or confirmed by the primal simplex) or failed. `out` then holds the answer.
bool first_solve_decides(ClpSimplex& model, const SlabData& d, double radius, LpResult& out,
                         std::ostringstream& msg) {
  if (model.status() == 1) {
    const Infeasibility inf = certify_empty(d, radius);
    if (!inf.certified) {
      // Not confirmed by a certificate: ask the primal simplex before believing it.
      msg << "dual simplex reported infeasible (" << inf.message << "), primal simplex retried; ";
      factorise_without_lapack(model);
      model.primal();
      out.iterations += model.numberIterations();
    }
    if (inf.certified || model.status() == 1) {
      out.status = LpResult::infeasible;
      out.certified = inf.certified;
      out.value = std::numeric_limits<double>::quiet_NaN();
      out.message = "CLP: primal infeasible; " + inf.message;
      return true;
    }
  }
  if (model.status() != 0) {
    out.status = LpResult::failed;
    out.value = std::numeric_limits<double>::quiet_NaN();
    out.message = clp_status_text(model.status(), model.secondaryStatus()) +
                  (model.status() == 2 ? " — impossible for a box-bounded LP" : "");
    return true;
  }
  return false;
}

// CLP's last point (clipped to the box), its duals and its rigorous check.
struct LpPoint {
  Eigen::VectorXd x, y, viol;
  Residuals res;
  int round = 0;
  bool polished = false;
  bool feasible() const { return viol.size() == 0 || viol.maxCoeff() <= 0.0; }
};

// The verification loop: clip to the box (exact), check every slab rigorously,
// tighten the violated rows and re-solve warm until x is certified in P.
LpPoint verify_lp_point(ClpSimplex& model, const SlabData& d, double radius, Eigen::VectorXd& tighten,
                        LpResult& out, std::ostringstream& msg) {
  const int n = static_cast<int>(d.a.cols()), N = static_cast<int>(d.a.rows());
  LpPoint p;
  double tau = 0;
  for (;; ++p.round) {
    p.x = Eigen::Map<const Eigen::VectorXd>(model.primalColumnSolution(), n).cwiseMax(-radius).cwiseMin(radius);
    p.y = Eigen::Map<const Eigen::VectorXd>(model.dualRowSolution(), N);
    p.res = residuals(d, p.x);
    p.viol = violations(d, p.res);
    if (N == 0 || p.viol.maxCoeff() <= 0.0) break;
    if (accept_polished(polish(model, d, p.x, tighten, p.res.value, radius, true), d, p.x, p.res, p.viol)) {
      p.polished = true;
      break;
    }
    if (p.round >= kTighteningRounds) break;
    if (!prepare_resolve(model, d, p.viol, p.round, tau, tighten)) break;
    factorise_without_lapack(model);
    model.dual();
    out.iterations += model.numberIterations();
    if (model.status() != 0) {
      // The tightened LP was not solved: go back to the last point we had.
      msg << "re-solve after tightening gave " << clp_status_text(model.status(), model.secondaryStatus())
          << "; ";
      break;
    }
  }
  return p;
}

// The smallest upper bound U(y) on the optimum among the dual certificates at
// hand: CLP's y (either sign: the bound does not rely on CLP's sign convention)
// and the duals refitted to CLP's active set. `dual` receives the y behind it.
double best_dual_bound(const ClpSimplex& model, const SlabData& d, double radius, const Eigen::VectorXd& v,
                       const LpPoint& p, Eigen::VectorXd& dual) {
  const int n = static_cast<int>(d.a.cols()), N = static_cast<int>(d.a.rows());
  double upper = dual_upper_bound(d, radius, v, p.y);
  dual = p.y;
  auto try_dual = [&](const Eigen::VectorXd& candidate) {
    const double bound = dual_upper_bound(d, radius, v, candidate);
    if (bound < upper) {
      upper = bound;
      dual = candidate;
    }
  };
  if (N > 0) {
    try_dual(-p.y);
    std::vector<int> free_cols;
    for (int c = 0; c < n; ++c)
      if (std::abs(p.x(c)) < radius) free_cols.push_back(c);
    for (const Eigen::VectorXd& y_fit : fitted_duals(d, v, rows_at_bound(model, N), free_cols, p.res.value, 1.0))
      try_dual(y_fit);
  }
  return upper;
}

// The lower side of the bracket: ⟨v, x⟩ rounded down when x is certified in P;
// otherwise OPT ≥ ⟨v,x⟩ − Σ_r |y*_r| viol_r, with CLP's y in place of y* (heuristic).
double lower_side(const LpPoint& p, double value, double value_err, std::ostringstream& msg) {
  double lower = down(value - value_err);
  if (!p.feasible()) {
    double penalty = 0;
    for (Eigen::Index r = 0; r < p.y.size(); ++r) penalty = up(penalty + up(std::abs(p.y(r)) * p.viol(r)));
    lower = down(lower - penalty);
    msg << "x violates " << (p.viol.array() > 0).count() << " slab(s) by up to " << p.viol.maxCoeff()
        << " after " << p.round << " tightening round(s); the lower side assumes |y*_r| <= |y_r| on those rows";
  } else {
    msg << "certified after " << p.round << " tightening round(s)" << (p.polished ? ", active-set polished point" : "");
  }
  return lower;
}

// The optimum of max ⟨v, θ⟩ at x, bracketed, converted back to the caller's sense.
void set_optimum(const ClpSimplex& model, const SlabData& d, double radius, const Eigen::VectorXd& v, double sense,
                 const LpPoint& p, LpResult& out, std::ostringstream& msg) {
  // Value and its rounding.
  Dot2 vx;
  for (Eigen::Index c = 0; c < v.size(); ++c) vx.add(v(c), p.x(c));
  const double value = vx.value();
  const double value_err = vx.error();
  const double upper = best_dual_bound(model, d, radius, v, p, out.dual);
  const double lower = lower_side(p, value, value_err, msg);
  out.status = LpResult::optimal;
  out.certified = p.feasible();
  out.x = p.x;
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
}

}  // namespace

ConvexBody::LpResult ConvexBody::maximise(const Eigen::VectorXd& u) const { return optimise(u, 1.0); }
ConvexBody::LpResult ConvexBody::minimise(const Eigen::VectorXd& u) const { return optimise(u, -1.0); }

// Solves max ⟨v, θ⟩ over P with v = sense·u and converts back: min ⟨u,θ⟩ = −max ⟨−u,θ⟩.
ConvexBody::LpResult ConvexBody::optimise(const Eigen::VectorXd& u, double sense) const {
  check_vector(u, "direction");
  const Eigen::VectorXd v = sense * u;
  const SlabData d = gather(slabs_, n_);
  LpResult out;
  std::ostringstream msg;
  try {
    ClpSimplex model;
    load_lp(model, d, v, radius_);
    Eigen::VectorXd tighten = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(slabs_.size()));
    set_row_bounds(model, d, tighten);
    factorise_without_lapack(model);
    model.dual();
    out.iterations = model.numberIterations();
    if (first_solve_decides(model, d, radius_, out, msg)) return out;
    const LpPoint p = verify_lp_point(model, d, radius_, tighten, out, msg);
    if (!p.feasible()) {
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
    set_optimum(model, d, radius_, v, sense, p, out, msg);
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
    w.error_bound = up(up(w.max.error_bound + w.min.error_bound) + up(std::abs(w.width) * 2 * tolerance::kDoubleUnitRoundoff));
  } else {
    w.width = std::numeric_limits<double>::quiet_NaN();
    w.error_bound = std::numeric_limits<double>::quiet_NaN();
  }
  return w;
}

}  // namespace mha
