// The iterative least-squares centre (geometry/iterative_centre.hpp): LOBPCG for the
// free basis and the smallest singular values, conjugate gradients for x0, every
// product with the slab matrix by its structure (geometry/slab_products.hpp).
// Every operation outside the products is on n × (k + 2) blocks in double, the same
// on every thread and process count, so the centre's bytes are too.
#include "geometry/centre_streamed.hpp"
#include "geometry/iterative_centre.hpp"
#include "geometry/slab_products.hpp"

#include "numeric/tolerance.hpp"

#include <Eigen/Dense>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>
#include <limits>

namespace mha::centre_detail {

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr int kGuardVectors = 2;          // LOBPCG's first block beyond the wanted k (faster convergence at the k-th)
constexpr int kMaxEigenIterations = 3000;  // an algorithm limit: beyond it the streamed method is used
constexpr int kMaxCgIterations = 5000;
constexpr int kPowerIterations = 60;       // s_max for the rank threshold only
constexpr int kRefreshEvery = 20;          // recompute A·X and the CG residual from scratch this often
constexpr int kStallWindow = 60;           // no halving of the residual within this many iterations: stalled

// A fixed start: entries in [−1, 1) from a 64-bit LCG (as the streamed centre's).
MatrixXd start_block(Index n, Index b) {
  uint64_t x = 0x2545F4914F6CDD1DULL;
  MatrixXd v(n, b);
  for (Index j = 0; j < b; ++j)
    for (Index i = 0; i < n; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      v(i, j) = static_cast<double>(x >> 11) * 0x1p-52 - 1.0;
    }
  return v;
}

// The columns of w made orthonormal and orthogonal to the orthonormal columns of
// `against` (twice: "twice is enough"); Householder's Q keeps them orthonormal even
// when w is nearly dependent (its extra directions are orthogonalised again).
MatrixXd orthonormal_against(MatrixXd w, const MatrixXd& against) {
  for (int pass = 0; pass < 2; ++pass) {
    if (against.cols() > 0) w -= against * (against.transpose() * w);
    const Eigen::HouseholderQR<MatrixXd> qr(w);
    w = qr.householderQ() * MatrixXd::Identity(w.rows(), w.cols());
  }
  if (against.cols() > 0) w -= against * (against.transpose() * w);
  return w;
}

double largest_eigenvalue(const SlabProducts& ops, Index n) {
  VectorXd v = start_block(n, 1).col(0);
  v.normalize();
  double lambda = 0;
  for (int it = 0; it < kPowerIterations; ++it) {
    const VectorXd av = ops.gram_times(v).col(0);
    lambda = v.dot(av);
    const double norm = av.norm();
    if (!(norm > 0)) return 0;
    v = av / norm;
  }
  return lambda;
}

struct Eigenpairs {
  MatrixXd vectors;   // n × b, orthonormal, ascending values
  VectorXd values;    // b
  int iterations = 0;
  bool converged = false;
};

// The Rayleigh–Ritz step on the orthonormal basis s with as = A s: the b smallest pairs.
void rayleigh_ritz(const MatrixXd& s, const MatrixXd& as, Index b, MatrixXd& x, MatrixXd& ax, VectorXd& values,
                   MatrixXd* coefficients) {
  MatrixXd h = s.transpose() * as;
  h = (0.5 * (h + h.transpose())).eval();
  const Eigen::SelfAdjointEigenSolver<MatrixXd> eig(h);
  const MatrixXd c = eig.eigenvectors().leftCols(b);
  values = eig.eigenvalues().head(b);
  x = s * c;
  ax = as * c;
  if (coefficients) *coefficients = c;
}

// LOBPCG for the b smallest eigenpairs of A: the first `free` (the free basis) to the
// residual kIterativeCentreResidual·λ_max, the next k − free (the gap rule's values) to
// kIterativeCentreValueResidual·λ_max (the values near the edge of the bulk lie close
// together and converge slowly; the check takes their own residual).
// `start`: n × b (orthonormalised here). The first k columns are wanted: each to a
// residual of target·max(λ_max, ...): `target_relative`·λ_max, or with `own_value`
// `target_relative`·|λ̂_j| (relative to its own value).
// With `settle`, a pass that stalls (or reaches its iteration limit) is accepted as it
// stands: the first pass's values carry their own residual into the check, and its free
// pairs are refined by the second pass; without, a stalled pass counts only when its
// residuals are at most kIterativeCentreStallLimit·λ_max.
Eigenpairs lobpcg(const SlabProducts& ops, const HeavyRowPreconditioner& pre, const MatrixXd& start, Index k,
                  double target_relative, bool own_value, bool settle, double lambda_max) {
  const Index n = start.rows(), b = start.cols();
  Eigenpairs out;
  MatrixXd x = orthonormal_against(start, MatrixXd(n, 0));
  MatrixXd ax = ops.gram_times(x);
  VectorXd values;
  rayleigh_ritz(x, ax, b, x, ax, values, nullptr);
  MatrixXd p(n, 0);
  double best = std::numeric_limits<double>::infinity();
  int best_at = 0;
  for (int it = 1; it <= kMaxEigenIterations; ++it) {
    if (it % kRefreshEvery == 0) {  // the tracked A·X drifts by rounding: refresh it
      ax = ops.gram_times(x);
      rayleigh_ritz(x, ax, b, x, ax, values, nullptr);
    }
    const MatrixXd r = ax - x * values.asDiagonal();
    // The worst wanted residual over its target (≤ 1: converged), and over λ_max for the stall rule.
    double worst = 0, worst_absolute = 0;
    for (Index j = 0; j < k; ++j) {
      const double scale_j = own_value ? std::abs(values(j)) : lambda_max;
      worst = std::max(worst, r.col(j).norm() / (target_relative * scale_j));
      worst_absolute = std::max(worst_absolute, r.col(j).norm() / lambda_max);
    }
    out.iterations = it;
    if (worst <= 1) {
      out.converged = true;
      break;
    }
    if (worst < 0.5 * best) {
      best = worst;
      best_at = it;
    } else if (it - best_at > kStallWindow) {
      out.converged = settle || worst_absolute <= tolerance::kIterativeCentreStallLimit;
      break;
    }
    if (it == kMaxEigenIterations) out.converged = settle;
    const MatrixXd w = orthonormal_against(pre.apply(r), x);
    MatrixXd xw(n, 2 * b);
    xw.leftCols(b) = x;
    xw.rightCols(b) = w;
    const Index extra = p.cols();
    MatrixXd fresh(n, b + extra);
    fresh.leftCols(b) = w;
    if (extra > 0) fresh.rightCols(extra) = orthonormal_against(p, xw);
    const MatrixXd afresh = ops.gram_times(fresh);
    MatrixXd s(n, b + fresh.cols()), as(n, b + fresh.cols());
    s.leftCols(b) = x;
    s.rightCols(fresh.cols()) = fresh;
    as.leftCols(b) = ax;
    as.rightCols(fresh.cols()) = afresh;
    MatrixXd c;
    rayleigh_ritz(s, as, b, x, ax, values, &c);
    // The new search directions: the part of the new X from W and P.
    p = fresh * c.bottomRows(fresh.cols());
  }
  ax = ops.gram_times(x);
  rayleigh_ritz(x, ax, b, x, ax, values, nullptr);
  out.vectors = x;
  out.values = values;
  return out;
}

// y − F(Fᵀy) for the orthonormal columns of f.
VectorXd across(const MatrixXd& f, const VectorXd& y) { return f.cols() > 0 ? VectorXd(y - f * (f.transpose() * y)) : y; }

struct Solution {
  VectorXd x;
  VectorXd normal_residual;  // P(Mᵀc − A x), recomputed from scratch at the end
  int iterations = 0;
};

// x0: conjugate gradients on P A P x = P Mᵀc (x ⊥ F), preconditioned by P T P.
Solution hull_point(const SlabProducts& ops, const HeavyRowPreconditioner& pre, const MatrixXd& f, double lambda_max) {
  const Index n = ops.n();
  const VectorXd rhs = across(f, ops.transpose_times_target());
  Solution out{VectorXd::Zero(n), rhs, 0};
  VectorXd r = rhs;
  auto precondition = [&](const VectorXd& v) { return across(f, pre.apply(v).col(0)); };
  VectorXd z = precondition(r), dir = z;
  double rz = r.dot(z);
  double best = std::numeric_limits<double>::infinity();
  int best_at = 0;
  for (int it = 1; it <= kMaxCgIterations; ++it) {
    const double stop = tolerance::kIterativeCentreResidual * (lambda_max * out.x.norm() + rhs.norm());
    if (r.norm() <= stop) break;
    if (r.norm() < 0.5 * best) {
      best = r.norm();
      best_at = it;
    } else if (it - best_at > kStallWindow) {
      break;
    }
    const VectorXd ad = across(f, ops.gram_times(dir).col(0));
    const double alpha = rz / dir.dot(ad);
    out.x += alpha * dir;
    out.iterations = it;
    if (it % kRefreshEvery == 0) {
      r = rhs - across(f, ops.gram_times(out.x).col(0));
    } else {
      r -= alpha * ad;
    }
    z = precondition(r);
    const double rz_next = r.dot(z);
    dir = z + (rz_next / rz) * dir;
    rz = rz_next;
  }
  out.x = across(f, out.x);
  out.normal_residual = rhs - across(f, ops.gram_times(out.x).col(0));
  return out;
}

}  // namespace

Eigen::MatrixXd population_preconditioner(const Eigen::MatrixXd& r, int d, double scale) {
  MatrixXd out(r.rows(), r.cols());
  const double inverse = scale > 0 ? 1.0 / scale : 1.0;
  for (Index j = 0; j < r.cols(); ++j) {
    const double* in = r.col(j).data();
    double* o = out.col(j).data();
    double diagonal_sum = 0;
    for (int p = 0; p < d; ++p) diagonal_sum += in[p * d + p];
    const double trace_part = diagonal_sum / (1.0 + d);
    for (int p = 0; p < d; ++p) {
      o[p * d + p] = (in[p * d + p] - trace_part) * inverse;
      for (int q = p + 1; q < d; ++q) {
        const double sym = 0.5 * (in[p * d + q] + in[q * d + p]), anti = 0.5 * (in[p * d + q] - in[q * d + p]);
        o[p * d + q] = (sym / 3.0 + anti) * inverse;
        o[q * d + p] = (sym / 3.0 - anti) * inverse;
      }
    }
  }
  return out;
}

Index heavy_rows(long long rows, int d) {
  const double budget = std::cbrt(1200.0 * double(rows) * double(d) * double(d));
  return static_cast<Index>(std::min({double(d) * double(d), double(rows / 2), std::floor(budget)}));
}

MatrixXd heavy_row_capacitance(const MatrixXd& u, const MatrixXd& v, const VectorXd& w, double rest) {
  const Index h = u.rows(), d = u.cols();
  const MatrixXd z = u.cwiseProduct(v);
  const VectorXd t = u.cwiseProduct(v).rowwise().sum();
  MatrixXd cap(h, h);
  // Column blocks: the four Gram matrices are never held whole.
  constexpr Index kBlock = 256;
  for (Index first = 0; first < h; first += kBlock) {
    const Index cols = std::min(kBlock, h - first);
    const MatrixXd uu = u * u.middleRows(first, cols).transpose();
    const MatrixXd vv = v * v.middleRows(first, cols).transpose();
    const MatrixXd uv = u * v.middleRows(first, cols).transpose();  // (u_i·v_j)
    const MatrixXd vu = v * u.middleRows(first, cols).transpose();  // (v_i·u_j)
    const MatrixXd zz = z * z.middleRows(first, cols).transpose();
    for (Index j = 0; j < cols; ++j)
      for (Index i = 0; i < h; ++i) {
        const double k = (2.0 / 3.0) * uu(i, j) * vv(i, j) - (1.0 / 3.0) * uv(i, j) * vu(i, j) +
                         (2.0 / 3.0) * zz(i, j) - t(i) * t(first + j) / double(d + 1);
        cap(i, first + j) = w(i) * w(first + j) * k / rest;
      }
  }
  cap.diagonal().array() += 1.0;
  return cap;
}

HeavyRowPreconditioner::HeavyRowPreconditioner(const MatrixXd& u, const MatrixXd& v, const VectorXd& w, Index heavy,
                                               int threads)
    : d_(static_cast<int>(u.cols())), threads_(std::max(threads, 1)) {
  const Index rows = u.rows();
  std::vector<Index> order(static_cast<size_t>(rows));
  for (Index r = 0; r < rows; ++r) order[static_cast<size_t>(r)] = r;
  heavy = std::clamp<Index>(heavy, 0, rows);
  // The heavy rows: the largest weights, the earlier row first among equals; kept in row order.
  std::partial_sort(order.begin(), order.begin() + heavy, order.end(),
                    [&](Index a, Index b) { return w(a) > w(b) || (w(a) == w(b) && a < b); });
  std::vector<char> is_heavy(static_cast<size_t>(rows), 0);
  for (Index i = 0; i < heavy; ++i) is_heavy[static_cast<size_t>(order[static_cast<size_t>(i)])] = 1;
  u_.resize(heavy, d_);
  v_.resize(heavy, d_);
  w_.resize(heavy);
  Index next = 0;
  for (Index r = 0; r < rows; ++r) {
    if (is_heavy[static_cast<size_t>(r)]) {
      u_.row(next) = u.row(r);
      v_.row(next) = v.row(r);
      w_(next++) = w(r);
    } else {
      rest_ += w(r) * w(r);
    }
  }
  // With every row heavy (N ≤ 1) the population term keeps P invertible at a small scale.
  if (!(rest_ > 0)) rest_ = std::max(w_.squaredNorm(), 1.0) * std::numeric_limits<double>::epsilon();
  if (heavy > 0) capacitance_.compute(heavy_row_capacitance(u_, v_, w_, rest_));
}

MatrixXd HeavyRowPreconditioner::apply(const MatrixXd& r) const {
  const MatrixXd y = population_preconditioner(r, d_, rest_);
  const Index h = u_.rows();
  if (h == 0) return y;
  const Index b = r.cols(), n = r.rows();
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  MatrixXd back(n, b);
  // Each column alone, in the same arithmetic on any thread.
#pragma omp parallel for schedule(static, 1) num_threads(threads_)
  for (Index j = 0; j < b; ++j) {
    const MatrixXd theta = Eigen::Map<const RowMajor>(y.col(j).data(), d_, d_);
    const MatrixXd t = u_ * theta;  // h × d: u_iᵀ Θ
    VectorXd z(h);
    for (Index i = 0; i < h; ++i) z(i) = w_(i) * t.row(i).dot(v_.row(i));
    const VectorXd x = capacitance_.solve(z);
    MatrixXd scaled(h, d_);
    for (Index i = 0; i < h; ++i) scaled.row(i) = (w_(i) * x(i)) * v_.row(i);
    const RowMajor g = u_.transpose() * scaled;  // Σ_i w_i x_i u_i v_iᵀ, row-major as θ
    back.col(j) = Eigen::Map<const VectorXd>(g.data(), n);
  }
  return y - population_preconditioner(back, d_, rest_);
}

std::optional<ConvexBody::Centre> iterative_centre(const ConvexBody& body, int free, int threads,
                                                   const Processes& processes, IterativeStatistics* statistics) {
  const int n = body.dim();
  if (!body.rank_one_normals() || free > ConvexBody::kStreamedMaxFree) return std::nullopt;
  const Index k = std::min<Index>(n, 2 * Index{free} + 3), b = k + kGuardVectors;
  if (n < 8 * b) return std::nullopt;
  const std::vector<Slab>& slabs = body.slabs();
  const Index rows = static_cast<Index>(slabs.size());
  VectorXd w(rows), c(rows);
  for (Index r = 0; r < rows; ++r) {
    w(r) = slab_weight(slabs[static_cast<size_t>(r)], n, body.radius());
    c(r) = w(r) * slabs[static_cast<size_t>(r)].b;
  }
  Eigen::MatrixXd u = body.normal_factor_u(), v = body.normal_factor_v();
  const HeavyRowPreconditioner pre(u, v, w, heavy_rows(rows, body.side()), threads);
  const SlabProducts ops(std::move(u), std::move(v), w, c, threads, processes);

  ConvexBody::Centre out;
  out.method = ConvexBody::CentreMethod::iterative;
  const double lambda_max = largest_eigenvalue(ops, n);
  if (!(lambda_max > 0)) return std::nullopt;
  // Two passes: every wanted pair to a residual of kIterativeCentreValueResidual of its
  // own value with k + 2 vectors (the gap rule's values, to that relative accuracy), then the
  // free ones (and one more) alone to the free basis's residual, from where they stand:
  // the second pass costs 2(free + 1) products an iteration instead of 2(k + 2).
  const Eigenpairs all = lobpcg(ops, pre, start_block(n, b), k, tolerance::kIterativeCentreValueResidual, true, true,
                                lambda_max);
  if (!all.converged) return std::nullopt;
  Eigenpairs pairs = all;
  if (free > 0) {
    const Eigenpairs refined = lobpcg(ops, pre, all.vectors.leftCols(free + 1), free, tolerance::kIterativeCentreResidual,
                                      false, false, lambda_max);
    if (!refined.converged) return std::nullopt;
    // The free pairs from the second pass, the rest from the first, the free block made
    // orthogonal to nothing else: the other values only feed the gap rule.
    pairs.vectors.leftCols(free) = refined.vectors.leftCols(free);
    pairs.values.head(free) = refined.values.head(free);
    pairs.iterations += refined.iterations;
  }
  out.largest_singular_value = std::sqrt(lambda_max);
  out.threshold = out.largest_singular_value * static_cast<double>(n) * Eigen::NumTraits<double>::epsilon();
  out.singular_values.resize(k);
  for (Index j = 0; j < k; ++j) out.singular_values(j) = std::sqrt(std::max(pairs.values(j), 0.0));
  // The dense method keeps only constrained values above the threshold; here all n − free
  // are kept, which is the same set when the smallest constrained one is above it.
  if (free < k && !(out.singular_values(free) > out.threshold)) return std::nullopt;
  int zero = 0;
  for (Index j = 0; j < k; ++j) zero += !(out.singular_values(j) > out.threshold);
  out.rank = n - zero;
  out.gap = separation_gap(out.singular_values, free, n);
  const MatrixXd f = pairs.vectors.leftCols(free);
  out.free_basis = f.transpose();
  const Solution x0 = hull_point(ops, pre, f, lambda_max);
  out.x0 = x0.x;
  const double residual2 = ops.residual_squared(out.x0);
  out.weighted_residual = std::sqrt(residual2);
  // ρ: the free block's Ritz residual over ‖M‖_F², the hull point's normal residual over
  // ‖r‖‖M‖_F; the other wanted values' residual over ‖M‖_F² apart (value_residual).
  const MatrixXd vk = pairs.vectors.leftCols(k);
  const MatrixXd ritz = ops.gram_times(vk) - vk * pairs.values.head(k).asDiagonal();
  const double frobenius2 = ops.frobenius_squared(), frobenius = std::sqrt(frobenius2);
  const double rho_pairs = ritz.leftCols(free).norm() / frobenius2;
  // The values beyond the free ones, as the first pass left them (their vectors are
  // orthogonal to its free vectors, not exactly to the refined ones: Kahan's theorem
  // is applied to each block apart, and the check pairs values by index).
  out.value_residual = ritz.rightCols(k - free).norm() / frobenius2;
  const double rho_point =
      out.weighted_residual > 0 ? x0.normal_residual.norm() / (out.weighted_residual * frobenius)
                                : (x0.normal_residual.norm() > 0 ? std::numeric_limits<double>::infinity() : 0.0);
  out.free_basis_residual = std::max(rho_pairs, rho_point);
  if (statistics) {
    statistics->eigen_iterations = pairs.iterations;
    statistics->first_pass_iterations = all.iterations;
    statistics->cg_iterations = x0.iterations;
    statistics->products = ops.products();
    statistics->heavy_rows = pre.heavy();
  }
  return out;
}

}  // namespace mha::centre_detail
