#include "stages/stage6/net_check.hpp"
#include "util/format.hpp"

#include "geometry/convex_body.hpp"
#include "geometry/exact_programs.hpp"
#include "numeric/multiprecision.hpp"
#include "numeric/precision.hpp"
#include "numeric/rng.hpp"
#include "numeric/softmax.hpp"
#include "numeric/tolerance.hpp"

#include <Eigen/Cholesky>
#include <Eigen/SVD>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <utility>

namespace mha {

namespace tol = mha::tolerance;

double net_logit_error(double abs_logit_row_max, long long d) {
  return tol::gamma(2 * d) * abs_logit_row_max * tol::bound_evaluation_factor(2 * d + 2);
}

RowVec<double> net_design_row_error(double logit_error, const RowVec<double>& logits, const RowVec<double>& attention,
                                    const MatD& tokens) {
  const long long k = tokens.rows();
  const double span = (logits.maxCoeff() - logits.minCoeff()) + 2 * logit_error;
  const double eps = tol::design_entry_relative_error(
      tol::double_softmax_relative_error(logit_error, span, static_cast<int>(k)), static_cast<int>(k));
  // A|X| in double from the rounded attention (u each) and |X|: k-term sums, γ_{k+2} more.
  return eps * (attention * tokens.cwiseAbs()) * (1.0 + tol::gamma(k + 3));
}

namespace {

using MatM = Mat<Mpfr>;

// One net point's design on a batch in MPFR, rows (n, a) = A(X_n)[a,:] X_n, with the
// entrywise bound on the fast design's distance from it.
struct ReferenceDesign {
  MatM design;
  MatD error;  // |D̂ − D| ≤ error entrywise
};

ReferenceDesign reference_design(const MatD& theta, const std::vector<MatD>& xs) {
  const Eigen::Index k = xs.front().rows(), d = theta.rows();
  ReferenceDesign r;
  r.design.resize(static_cast<Eigen::Index>(xs.size()) * k, d);
  r.error.resize(static_cast<Eigen::Index>(xs.size()) * k, d);
  const MatM tm = cast_matrix<Mpfr>(theta);
  for (size_t n = 0; n < xs.size(); ++n) {
    const MatM xm = cast_matrix<Mpfr>(xs[n]);
    const MatM logits = xm * tm * xm.transpose();
    const MatM a = softmax_rows<Mpfr>(logits);
    r.design.middleRows(n * k, k) = a * xm;
    // The fast logits fl(fl(XΘ)Xᵀ) are within γ_{2d}|X||Θ||X|ᵀ (Higham (3.13)); the
    // softmax's relative error follows (double_softmax_relative_error), then A X's.
    const MatD abs_logits = xs[n].cwiseAbs() * theta.cwiseAbs() * xs[n].cwiseAbs().transpose();
    const MatD ld = to_double_matrix<Mpfr>(logits);
    const MatD ad = to_double_matrix<Mpfr>(a);
    for (Eigen::Index row = 0; row < k; ++row) {
      const double logit_error = net_logit_error(abs_logits.row(row).maxCoeff(), d);
      r.error.row(n * k + row) = net_design_row_error(logit_error, ld.row(row), ad.row(row), xs[n]);
    }
  }
  return r;
}

struct TupleReference {
  double objective = 0;
  double bound = std::numeric_limits<double>::infinity();
};

TupleReference reference_tuple(const std::vector<const ReferenceDesign*>& train, const std::vector<const ReferenceDesign*>& val,
                               const MatM& y_train, const MatM& y_val, unsigned bits) {
  const Eigen::Index m = static_cast<Eigen::Index>(train.size()), d = y_train.cols();
  const Eigen::Index rows = y_train.rows(), vrows = y_val.rows(), cols = m * d;
  MatM dt(rows, cols), dv(vrows, cols);
  MatD et(rows, cols), ev(vrows, cols);
  for (Eigen::Index i = 0; i < m; ++i) {
    dt.middleCols(i * d, d) = train[i]->design;
    dv.middleCols(i * d, d) = val[i]->design;
    et.middleCols(i * d, d) = train[i]->error;
    ev.middleCols(i * d, d) = val[i]->error;
  }
  // W* by the normal equations at `bits` (LLT of the Gram matrix).
  const Eigen::Matrix<Mpfr, Eigen::Dynamic, Eigen::Dynamic> gram = dt.transpose() * dt;
  const Eigen::Matrix<Mpfr, Eigen::Dynamic, Eigen::Dynamic> rhs = dt.transpose() * y_train;
  const Eigen::Matrix<Mpfr, Eigen::Dynamic, Eigen::Dynamic> w = gram.llt().solve(rhs);
  const MatM r_val = dv * w - y_val;
  const MatM r_train = dt * w - y_train;
  const double rho = Mpfr(r_val.norm()).convert_to<double>();
  const double y2 = Mpfr(y_val.squaredNorm()).convert_to<double>();
  const double w_fro = Mpfr(w.norm()).convert_to<double>();
  const double r_train_fro = Mpfr(r_train.norm()).convert_to<double>();
  const double y_train_fro = Mpfr(y_train.norm()).convert_to<double>();
  TupleReference out;
  out.objective = Mpfr(r_val.squaredNorm() / y_val.squaredNorm()).convert_to<double>();
  // The bound from the doubles it needs (net_tuple_bound).
  const MatD dt_double = to_double_matrix<Mpfr>(dt);
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd{Eigen::MatrixXd(dt_double)};
  NetTupleInputs in;
  in.s_hi = svd.singularValues().maxCoeff(), in.s_lo = svd.singularValues().minCoeff();
  in.design_fro = dt_double.norm();
  in.train_error_fro = et.norm(), in.validation_error_fro = ev.norm();
  in.validation_design_fro = Mpfr(dv.norm()).convert_to<double>();
  in.w_fro = w_fro, in.train_residual_fro = r_train_fro, in.train_labels_fro = y_train_fro;
  in.validation_residual = rho, in.validation_labels2 = y2, in.objective = out.objective;
  in.rows = rows, in.validation_rows = vrows, in.cols = cols, in.m = m, in.d = d, in.bits = bits;
  out.bound = net_tuple_bound(in).bound;
  return out;
}

}  // namespace

NetTupleBound net_tuple_bound(const NetTupleInputs& in) {
  NetTupleBound b;
  const long long rows = in.rows, cols = in.cols;
  // Singular values of the exact training design D from its rounding to double (u‖D‖_F
  // away, Weyl) by Jacobi (jacobi_singular_value_bound).
  const double d_fro = in.design_fro * (1.0 + tol::gamma(rows * cols + 2));
  const double shift = tol::jacobi_singular_value_bound(rows, cols) * in.s_hi + tol::kDoubleUnitRoundoff * d_fro;
  b.sigma_min = in.s_lo - shift;
  const double sigma_max = in.s_hi + shift, norm2_lower = in.s_hi - shift;
  const double e_train = in.train_error_fro * tol::bound_evaluation_factor(rows * cols + 2);  // ‖D̂ − D‖₂ ≤ ‖|ΔD|‖_F
  const double e_val = in.validation_error_fro * tol::bound_evaluation_factor(in.validation_rows * cols + 2);
  b.train_error = e_train, b.validation_error = e_val;
  if (!(b.sigma_min > e_train)) return b;  // no bound: the design is too close to singular
  const double kappa = sigma_max / b.sigma_min;
  // W̃ (exact least squares of the fast design) against W*, then Ŵ (normal equations in double) against W̃.
  b.dw_design = tol::least_squares_perturbation_bound(kappa, e_train / norm2_lower, in.w_fro, in.train_residual_fro,
                                                      norm2_lower);
  b.dw_solve = tol::certification_solution_bound(d_fro + e_train, b.sigma_min - e_train, in.train_labels_fro,
                                                 in.w_fro + b.dw_design, static_cast<int>(cols), static_cast<int>(rows));
  // The reference's own W error (normal equations at `bits`).
  b.dw_reference = tol::normal_equations_relative_bound(kappa, rows, cols, in.bits) * in.w_fro;
  const double dw = (b.dw_design + b.dw_solve + b.dw_reference) * tol::bound_evaluation_factor(3);
  // ‖R̂ − R*‖_F: the fast validation design, the W error, and fl(Σ_i D̂_i Ŵ_i − Y) (md + m + 1 roundings per entry).
  const double y_val_fro = std::sqrt(in.validation_labels2);
  const double dv_fro = in.validation_design_fro;
  b.residual_error = (e_val * (in.w_fro + dw) + dv_fro * dw +
                      tol::gamma(cols + in.m + 1) * ((dv_fro + e_val) * (in.w_fro + dw) + y_val_fro)) *
                     tol::bound_evaluation_factor(10);
  b.bound = tol::objective_from_residual_bound(in.validation_residual, b.residual_error, in.validation_labels2,
                                               in.validation_rows * in.d) +
            tol::reference_relative_error(in.bits, 4 * (rows + cols)) * in.objective;
  return b;
}

size_t reference_winner(size_t fast_winner, const std::vector<double>& reference_objectives) {
  const std::vector<double>& e = reference_objectives;
  size_t best = 0;
  for (size_t t = 0; t < e.size(); ++t) {
    const bool less = e[t] < e[best] || std::isnan(e[best]);
    const bool fast_among_equals = t == fast_winner && e[t] == e[best];
    if (less || fast_among_equals) best = t;
  }
  return best;
}

WinnerCheck check_winner(size_t fast_winner, const std::vector<double>& reference_objectives,
                         const std::vector<double>& bounds) {
  if (fast_winner >= reference_objectives.size()) return WinnerCheck::different;
  const size_t best = reference_winner(fast_winner, reference_objectives);
  // A NaN objective or bound decides nothing: never "same", at most a tie.
  if (std::isnan(reference_objectives[best]) || std::isnan(reference_objectives[fast_winner]) ||
      std::isnan(bounds[fast_winner]) || std::isnan(bounds[best]))
    return WinnerCheck::tie;
  if (fast_winner == best) return WinnerCheck::same;
  const double gap = reference_objectives[fast_winner] - reference_objectives[best];
  return gap <= bounds[fast_winner] + bounds[best] ? WinnerCheck::tie : WinnerCheck::different;
}

ComparisonPart compare_net(const SampleSource& source, const NetCandidates& fast, unsigned bits) {
  ScopedPrecision precision(bits);
  const int k = source.k(), d = source.d();
  const LabelledBatch train = source.draw(fast.first_sample, fast.train_samples, 1);
  const LabelledBatch val = source.draw(fast.first_sample + static_cast<uint64_t>(fast.train_samples),
                                        fast.validation_samples, 1);
  const std::vector<MatD> train_xs = train.x.samples(), val_xs = val.x.samples();
  const MatM y_train = cast_matrix<Mpfr>(Eigen::Map<const MatD>(train.y.data(), train.x.count * k, d));
  const MatM y_val = cast_matrix<Mpfr>(Eigen::Map<const MatD>(val.y.data(), val.x.count * k, d));
  std::vector<ReferenceDesign> train_designs, val_designs;
  for (const MatD& theta : fast.thetas) {
    train_designs.push_back(reference_design(theta, train_xs));
    val_designs.push_back(reference_design(theta, val_xs));
  }
  ComparisonPart part;
  part.name = "net";
  part.quantity = "|E_fast − E_ref| per candidate tuple (relative validation error)";
  std::vector<TupleReference> ref(fast.tuples.size());
  int not_compared = 0;
  for (size_t t = 0; t < fast.tuples.size(); ++t) {
    std::vector<const ReferenceDesign*> tr, va;
    for (int64_t p : fast.tuples[t]) {
      tr.push_back(&train_designs[p]);
      va.push_back(&val_designs[p]);
    }
    ref[t] = reference_tuple(tr, va, y_train, y_val, bits);
    // +∞ is the fast path's "singular design"; with no derived bound either side is
    // near singular: undecided. NaN is no value at all: record() disagrees.
    if (fast.errors[t] == std::numeric_limits<double>::infinity() || !std::isfinite(ref[t].bound)) {
      ++not_compared;
      part.record_undecided();
      continue;
    }
    part.record(std::abs(fast.errors[t] - ref[t].objective), ref[t].bound);
  }
  const size_t f = fast.winner;
  std::vector<double> objectives, bounds;
  for (const TupleReference& r : ref) {
    objectives.push_back(r.objective);
    bounds.push_back(r.bound);
  }
  const size_t best = reference_winner(f, objectives);
  const WinnerCheck check = check_winner(f, objectives, bounds);
  std::string winner;
  if (check == WinnerCheck::same) {
    winner = "the fast winner is the reference winner";
  } else if (check == WinnerCheck::tie) {
    ++part.undecided;  // a tie within the derived bounds: the ranking is not decided by the arithmetic
    winner = format("tie: the fast winner's reference error %.6e is within the bounds of the reference winner's %.6e",
                    f < ref.size() ? ref[f].objective : 0.0, ref[best].objective);
  } else {
    part.agree = false;
    winner = format("the fast winner (reference error %.6e) is not the reference winner (%.6e) beyond their bounds",
                    f < ref.size() ? ref[f].objective : 0.0, ref[best].objective);
  }
  part.detail = std::to_string(fast.tuples.size()) + " tuples of " + std::to_string(fast.thetas.size()) +
                " net points, " + std::to_string(fast.train_samples) + " + " + std::to_string(fast.validation_samples) +
                " samples; " + winner + format("; winner's E = %.6e", ref[best].objective) +
                (not_compared > 0 ? "; " + std::to_string(not_compared) + " tuples without a bound (undecided)" : "");
  return part;
}

}  // namespace mha
