// The streamed least-squares centre (ConvexBody::CentreMethod::streamed): the
// same quantities as the dense method in about 2n² doubles instead of
// max(N,n)·n + 12n² (convex_body.hpp; docs/bench/memory.md), by
//   1. [M | c] folded into its triangular factor one block of rows at a time;
//   2. R bidiagonalised (its one copy), all n singular values from the Golub–Kahan
//      tridiagonal of the bidiagonal;
//   3. the `free` smallest right singular vectors by inverse iteration on that
//      tridiagonal, mapped back through the bidiagonalisation's right reflectors;
//   4. x0 = argmin{‖M x − c‖ : x ⊥ free basis} by a QR of R H (H: reflectors whose
//      first `free` columns span the free basis), in R's storage.
// tolerance.hpp (streamed_svd_backward_error) bounds what each step adds.
#include "geometry/centre_streamed.hpp"
#include "geometry/chunks.hpp"

#include "numeric/correctly_rounded.hpp"
#include "numeric/tolerance.hpp"

#include <Eigen/Dense>
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace mha::centre_detail {

namespace {

using Eigen::Index;

constexpr Index kPanel = 32;       // columns per compact-WY panel of fold_rows
constexpr int kMaxInverseIterations = 16;

struct ScaledSingularVector {
  Eigen::VectorXd v;
  double residual = 0;  // singular_pair_residual of v on the scaled bidiagonal
};

// The Householder reflector I − τ[1; v][1; v]ᵀ taking [alpha; v] to [β; 0], Eigen's
// makeHouseholder convention (β = −sign(alpha)·norm, τ = 0 when the tail is zero):
// alpha becomes β, v the reflector's essential part; returns τ.
double reflect(double& alpha, Eigen::Ref<Eigen::VectorXd> v) {
  const double tail = v.squaredNorm();
  if (tail <= std::numeric_limits<double>::min()) {
    v.setZero();
    return 0.0;
  }
  double beta = std::sqrt(alpha * alpha + tail);
  if (alpha >= 0) beta = -beta;
  v /= alpha - beta;
  const double tau = (beta - alpha) / beta;
  alpha = beta;
  return tau;
}

// T of the compact WY form H_0 ⋯ H_{k−1} = I − V T Vᵀ (LAPACK dlarft, forward,
// columnwise), for reflectors whose r-parts are distinct unit vectors: Vᵀv_i is
// then the block parts' Gram matrix column.
Eigen::MatrixXd compact_wy_factor(const Eigen::Ref<const Eigen::MatrixXd>& v, const Eigen::VectorXd& tau) {
  const Index k = v.cols();
  const Eigen::MatrixXd g = v.transpose() * v;
  Eigen::MatrixXd t = Eigen::MatrixXd::Zero(k, k);
  for (Index i = 0; i < k; ++i) {
    t(i, i) = tau(i);
    if (i == 0) continue;
    const Eigen::VectorXd tg = t.topLeftCorner(i, i).triangularView<Eigen::Upper>() * g.col(i).head(i);
    t.col(i).head(i) = -tau(i) * tg;
  }
  return t;
}

// The upper-bidiagonal factor B of a square matrix and its right reflectors,
// R = U B Vᵀ: Eigen's blocked bidiagonalisation (bidiagonalise_in_place, shared
// over threads) in the storage it is given (no copy; Eigen's
// UpperBidiagonalization class copies its argument), with V as
// UpperBidiagonalization::householderV() forms it.
class BidiagonalisedInPlace {
 public:
  BidiagonalisedInPlace(Eigen::MatrixXd&& a, int threads)
      : householder_(std::move(a)), bidiagonal_(householder_.cols(), householder_.cols()) {
    bidiagonalise_in_place(householder_, bidiagonal_, threads);
  }
  Eigen::VectorXd diagonal() { return bidiagonal_.diagonal<0>(); }
  Eigen::VectorXd superdiagonal() { return bidiagonal_.diagonal<1>(); }
  // x ← V x.
  void apply_v(Eigen::MatrixXd& x) const {
    // Eigen forms blocks of x by pointer offset, undefined on an empty x's null data.
    if (x.size() == 0) return;
    using Sequence = Eigen::HouseholderSequence<const Eigen::MatrixXd, Eigen::Diagonal<const Eigen::MatrixXd, 1>,
                                                Eigen::OnTheRight>;
    Sequence v(householder_, householder_.diagonal<1>());
    v.setLength(householder_.cols() - 1).setShift(1);
    v.applyThisOnTheLeft(x);
  }

 private:
  Eigen::MatrixXd householder_;
  UpperBidiagonal bidiagonal_;
};

// The Golub–Kahan tridiagonal of the bidiagonal (d, e), scaled: zero diagonal,
// off-diagonal d₁, e₁, d₂, …, d_n (the order v₁, u₁, v₂, u₂, … of its eigenvectors
// (v, ±u)/√2 for the singular value s with Bv = su, Bᵀu = sv).
Eigen::VectorXd golub_kahan_offdiagonal(const Eigen::VectorXd& d, const Eigen::VectorXd& e, double scale) {
  const Index n = d.size();
  Eigen::VectorXd off(2 * n - 1);
  for (Index i = 0; i < n; ++i) {
    off(2 * i) = d(i) / scale;
    if (i + 1 < n) off(2 * i + 1) = e(i) / scale;
  }
  return off;
}

double largest_entry(const Eigen::VectorXd& d, const Eigen::VectorXd& e) {
  return std::max(d.size() > 0 ? d.cwiseAbs().maxCoeff() : 0.0, e.size() > 0 ? e.cwiseAbs().maxCoeff() : 0.0);
}

// T − λI for a tridiagonal with zero diagonal and symmetric off-diagonal `off`,
// factored with partial pivoting (LAPACK dgttrf) — an exactly zero pivot is
// replaced by `tiny` (as dlagtf perturbs), so that the solve amplifies the
// eigenvector's direction instead of dividing by zero.
class TridiagonalLu {
 public:
  TridiagonalLu(const Eigen::VectorXd& off, double lambda, double tiny)
      : dl_(off), d_(Eigen::VectorXd::Constant(off.size() + 1, -lambda)), du_(off),
        du2_(Eigen::VectorXd::Zero(off.size() + 1)), swapped_(static_cast<size_t>(off.size()), 0) {
    const Index n = d_.size();
    for (Index i = 0; i + 1 < n; ++i) {
      if (std::abs(d_(i)) >= std::abs(dl_(i))) {
        if (d_(i) == 0) d_(i) = tiny;  // then dl(i) = 0 too
        const double f = dl_(i) / d_(i);
        dl_(i) = f;
        d_(i + 1) -= f * du_(i);
      } else {
        const double f = d_(i) / dl_(i);
        d_(i) = dl_(i);
        dl_(i) = f;
        const double t = du_(i);
        du_(i) = d_(i + 1);
        d_(i + 1) = t - f * d_(i + 1);
        if (i + 2 < n) {
          du2_(i) = du_(i + 1);
          du_(i + 1) = -f * du_(i + 1);
        }
        swapped_[static_cast<size_t>(i)] = 1;
      }
    }
    if (d_(n - 1) == 0) d_(n - 1) = tiny;
  }

  // b ← (T − λI)⁻¹ b (LAPACK dgtts2).
  void solve(Eigen::VectorXd& b) const {
    const Index n = d_.size();
    for (Index i = 0; i + 1 < n; ++i) {
      if (!swapped_[static_cast<size_t>(i)]) {
        b(i + 1) -= dl_(i) * b(i);
      } else {
        const double t = b(i);
        b(i) = b(i + 1);
        b(i + 1) = t - dl_(i) * b(i);
      }
    }
    b(n - 1) /= d_(n - 1);
    if (n > 1) b(n - 2) = (b(n - 2) - du_(n - 2) * b(n - 1)) / d_(n - 2);
    for (Index i = n - 3; i >= 0; --i) b(i) = (b(i) - du_(i) * b(i + 1) - du2_(i) * b(i + 2)) / d_(i);
  }

 private:
  Eigen::VectorXd dl_, d_, du_, du2_;
  std::vector<char> swapped_;
};

// B v and Bᵀ u for the bidiagonal (d, e).
Eigen::VectorXd bidiagonal_times(const Eigen::VectorXd& d, const Eigen::VectorXd& e, const Eigen::VectorXd& v) {
  Eigen::VectorXd w = d.cwiseProduct(v);
  w.head(e.size()) += e.cwiseProduct(v.tail(e.size()));
  return w;
}

Eigen::VectorXd bidiagonal_transpose_times(const Eigen::VectorXd& d, const Eigen::VectorXd& e, const Eigen::VectorXd& u) {
  Eigen::VectorXd w = d.cwiseProduct(u);
  w.tail(e.size()) += e.cwiseProduct(u.head(e.size()));
  return w;
}

// How far the unit vector v is from a right singular vector of B: with w = Bv,
// ŝ = ‖w‖ and u = w/ŝ, (v, u) is an exact singular pair of B + E with
// ‖E‖₂ = ‖Bᵀu − ŝv‖ (E = −u(Bᵀu − ŝv)ᵀ: (B+E)v = Bv since (Bᵀu − ŝv) ⊥ v), or of
// B − wvᵀ (a null vector) with ‖E‖ = ŝ; the smaller is returned.
double singular_pair_residual(const Eigen::VectorXd& d, const Eigen::VectorXd& e, const Eigen::VectorXd& v) {
  const Eigen::VectorXd w = bidiagonal_times(d, e, v);
  const double s = w.norm();
  if (s == 0) return 0;
  return std::min(s, (bidiagonal_transpose_times(d, e, w / s) - s * v).norm());
}

// A fixed start for inverse iteration: entries in [−1, 1) from a 64-bit LCG.
Eigen::VectorXd start_vector(Index n, Index which) {
  uint64_t x = 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(which + 1);
  Eigen::VectorXd v(n);
  for (Index i = 0; i < n; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    v(i) = static_cast<double>(x >> 11) * 0x1p-52 - 1.0;
  }
  return v;
}

// Gram–Schmidt against the first `count` columns of `basis`, twice ("twice is enough").
void orthogonalise(Eigen::VectorXd& v, const Eigen::MatrixXd& basis, Index count) {
  for (int pass = 0; pass < 2; ++pass)
    for (Index j = 0; j < count; ++j) v -= basis.col(j).dot(v) * basis.col(j);
}

// One right singular vector of the scaled bidiagonal for the scaled value s, and its
// singular-pair residual: x ← (T + sI)⁻¹(T − sI)⁻¹x = (T² − s²I)⁻¹x keeps the
// right-vector positions of the tridiagonal apart from the left ones (T² is
// BᵀB ⊕ BBᵀ in that order), so the iteration runs on v alone, shifted by s²,
// without forming BᵀB; it is orthogonalised against the vectors already found (a
// cluster of equal values). Accepted at once when the residual is at most
// kInverseIterationResidual; otherwise, after all its iterations, the vector of the
// smallest residual when that is at most kInverseIterationStallLimit (rounding's
// floor lies above 2⁻⁴⁰ on square systems: docs/bench/memory.md), else nothing.
std::optional<ScaledSingularVector> inverse_iteration(const Eigen::VectorXd& d, const Eigen::VectorXd& e,
                                                      const Eigen::VectorXd& off, double s, const Eigen::MatrixXd& found,
                                                      Index count) {
  const Index n = d.size();
  const double tiny = std::numeric_limits<double>::epsilon();
  const TridiagonalLu minus(off, s, tiny), plus(off, -s, tiny);
  Eigen::VectorXd v = start_vector(n, count);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(2 * n);
  std::optional<ScaledSingularVector> best;
  for (int it = 0; it <= kMaxInverseIterations; ++it) {
    orthogonalise(v, found, count);
    const double norm = v.norm();
    if (!(norm > 0) || !std::isfinite(norm)) return std::nullopt;
    v /= norm;
    if (it > 0) {
      const double residual = singular_pair_residual(d, e, v);
      if (residual <= tolerance::kInverseIterationResidual) return ScaledSingularVector{v, residual};
      if (!best || residual < best->residual) best = ScaledSingularVector{v, residual};
    }
    if (it == kMaxInverseIterations) break;
    x.setZero();
    for (Index i = 0; i < n; ++i) x(2 * i) = v(i);
    minus.solve(x);
    x /= x.cwiseAbs().maxCoeff();
    plus.solve(x);
    for (Index i = 0; i < n; ++i) v(i) = x(2 * i);
    v /= v.cwiseAbs().maxCoeff();
  }
  if (best && best->residual <= tolerance::kInverseIterationStallLimit) return best;
  return std::nullopt;
}

// x0 = argmin{‖R x − q‖ : x ⊥ span(f)} (f: n × free, orthonormal columns) in the
// storage of R (overwritten): with f = Q_f[R_f; 0] (Householder), x = Q_f y and
// y's first `free` entries zero, the problem is the least squares of the last n −
// free columns of R Q_f (Eigen's Householder QR, householder_qr_in_place, shared
// over threads). Also returns the residual ‖R x0 − q‖.
std::pair<Eigen::VectorXd, double> least_squares_across(Eigen::Block<Eigen::MatrixXd> r, const Eigen::VectorXd& q,
                                                       const Eigen::MatrixXd& f, int threads) {
  const Index n = r.cols(), free = f.cols();
  if (free == 0) {
    const Eigen::VectorXd x = r.triangularView<Eigen::Upper>().solve(q);
    return {x, (r.triangularView<Eigen::Upper>() * x - q).norm()};
  }
  const Eigen::HouseholderQR<Eigen::MatrixXd> fq(f);
  fq.householderQ().applyThisOnTheRight(r);
  Eigen::Ref<Eigen::MatrixXd> across = r.rightCols(n - free);
  Eigen::VectorXd coefficients;
  householder_qr_in_place(across, coefficients, threads);
  const Eigen::HouseholderSequence<Eigen::Ref<Eigen::MatrixXd>, Eigen::VectorXd> qr_q(across, coefficients);
  const Eigen::VectorXd qtq = qr_q.transpose() * q;
  Eigen::VectorXd y = Eigen::VectorXd::Zero(n);
  y.tail(n - free) = across.topRows(n - free).triangularView<Eigen::Upper>().solve(qtq.head(n - free));
  return {fq.householderQ() * y, qtq.tail(free).norm()};
}

// The upper triangle of a square matrix, column by column (n(n+1)/2 doubles):
// R kept while its square storage is used for the bidiagonalisation.
class PackedUpper {
 public:
  explicit PackedUpper(const Eigen::Ref<const Eigen::MatrixXd>& r) : n_(r.cols()) {
    packed_.reserve(static_cast<size_t>(n_ * (n_ + 1) / 2));
    for (Index j = 0; j < n_; ++j) packed_.insert(packed_.end(), r.col(j).data(), r.col(j).data() + j + 1);
  }
  Eigen::MatrixXd unpacked() const {
    Eigen::MatrixXd r = Eigen::MatrixXd::Zero(n_, n_);
    const double* p = packed_.data();
    for (Index j = 0; j < n_; p += j + 1, ++j) std::copy(p, p + j + 1, r.col(j).data());
    return r;
  }

 private:
  Index n_;
  std::vector<double> packed_;
};

}  // namespace

void fold_rows(Eigen::Ref<Eigen::MatrixXd> r, Eigen::Ref<Eigen::MatrixXd> block, int threads, Index chunk_columns) {
  const Index n1 = r.cols();
  Eigen::VectorXd tau(kPanel);
  for (Index j0 = 0; j0 < n1; j0 += kPanel) {
    const Index jb = std::min(kPanel, n1 - j0);
    // The panel, column by column: reflect [r(j,j); block(:,j)], apply to the panel's other columns.
    for (Index j = j0; j < j0 + jb; ++j) {
      const double t = tau(j - j0) = reflect(r(j, j), block.col(j));
      const Index rest = j0 + jb - j - 1;
      if (rest == 0 || t == 0) continue;
      Eigen::RowVectorXd wr = r.row(j).segment(j + 1, rest);
      wr.noalias() += block.col(j).transpose() * block.middleCols(j + 1, rest);
      r.row(j).segment(j + 1, rest) -= t * wr;
      block.middleCols(j + 1, rest).noalias() -= (t * block.col(j)) * wr;
    }
    const Index trail = n1 - j0 - jb;
    if (trail == 0) break;
    // The trailing columns: C ← (I − V Tᵀ Vᵀ) C with V = [rows j0.. of the identity; block(:, panel)],
    // in chunks of columns, a chunk per thread at a time. Every column's arithmetic is the same
    // whatever the chunks, so the bytes do not depend on them or on the threads: Eigen's
    // products block the inner dimension by its length alone and group columns by 4 from a
    // block's start (chunks start at multiples of 4), and a chunk has one column — a
    // matrix-vector product — only when the whole trail has (the last chunk takes the rest).
    // Test: "fold_rows gives the same bytes in chunks of columns on 1 and 2 threads".
    const auto v = block.middleCols(j0, jb);
    const Eigen::MatrixXd t = compact_wy_factor(v, tau.head(jb));
    in_chunks(trail, chunk_columns, threads, [&](Index offset, Index width) {
      const Index first = j0 + jb + offset;
      Eigen::MatrixXd w = r.block(j0, first, jb, width);
      w.noalias() += v.transpose() * block.middleCols(first, width);
      w = t.triangularView<Eigen::Upper>().transpose() * w;
      r.block(j0, first, jb, width) -= w;
      block.middleCols(first, width).noalias() -= v * w;
    });
  }
}

Eigen::MatrixXd streamed_r_factor(const std::vector<Slab>& slabs, int n, double radius, Index block_rows, int threads) {
  const Index n1 = Index{n} + 1, count = static_cast<Index>(slabs.size());
  Eigen::MatrixXd r = Eigen::MatrixXd::Zero(n1, n1);
  Eigen::MatrixXd block(std::max<Index>(1, std::min(block_rows, count)), n1);
  for (Index first = 0; first < count; first += block.rows()) {
    const Index rows = std::min(block.rows(), count - first);
    for (Index i = 0; i < rows; ++i) {
      const Slab& s = slabs[static_cast<size_t>(first + i)];
      const double w = slab_weight(s, n, radius);
      block.row(i).head(n) = w * Eigen::Map<const Eigen::RowVectorXd>(s.a.data(), n);
      block(i, n) = w * s.b;
    }
    fold_rows(r, block.topRows(rows), threads);
  }
  return r;
}

Eigen::VectorXd bidiagonal_singular_values(const Eigen::VectorXd& d, const Eigen::VectorXd& e) {
  const Index n = d.size();
  const double scale = largest_entry(d, e);
  if (!(scale > 0)) return Eigen::VectorXd::Zero(n);
  Eigen::VectorXd diag = Eigen::VectorXd::Zero(2 * n);
  Eigen::VectorXd off = golub_kahan_offdiagonal(d, e, scale);
  Eigen::MatrixXd none;
  if (Eigen::internal::computeFromTridiagonal_impl(diag, off, 30, false, none) != Eigen::Success) return {};
  // Eigenvalues ±s_i, ascending: the upper half are the singular values (a zero
  // singular value is a pair ±0 and may come out as either sign).
  Eigen::VectorXd s = diag.tail(n).cwiseAbs() * scale;
  std::sort(s.data(), s.data() + n);
  return s;
}

std::optional<RightVectors> bidiagonal_right_vectors(const Eigen::VectorXd& d, const Eigen::VectorXd& e,
                                                     const Eigen::VectorXd& values) {
  const Index n = d.size(), p = values.size();
  const double scale = largest_entry(d, e);
  if (!(scale > 0)) return RightVectors{Eigen::MatrixXd::Identity(n, p), 0.0};  // B = 0: every vector is singular
  const Eigen::VectorXd ds = d / scale, es = e / scale, off = golub_kahan_offdiagonal(d, e, scale);
  RightVectors out{Eigen::MatrixXd(n, p), 0.0};
  for (Index i = 0; i < p; ++i) {
    auto vi = inverse_iteration(ds, es, off, values(i) / scale, out.vectors, i);
    if (!vi) return std::nullopt;
    out.vectors.col(i) = vi->v;
    out.residual = std::max(out.residual, vi->residual);
  }
  return out;
}

std::optional<ConvexBody::Centre> streamed_centre(const std::vector<Slab>& slabs, int n, double radius, int free,
                                                  int threads, Index block_rows) {
  if (free > ConvexBody::kStreamedMaxFree) return std::nullopt;
  // R packed while its square copy is bidiagonalised: the peak is n² + n²/2
  // doubles beside the slabs, not 2n² (docs/bench/memory.md).
  std::optional<PackedUpper> packed;
  Eigen::VectorXd q;
  double rest = 0;
  {
    const Eigen::MatrixXd r = streamed_r_factor(slabs, n, radius, block_rows, threads);
    packed.emplace(r.topLeftCorner(n, n));
    q = r.col(n).head(n);
    rest = std::abs(r(n, n));
  }
  ConvexBody::Centre out;
  out.method = ConvexBody::CentreMethod::streamed;
  Eigen::MatrixXd f;
  {
    BidiagonalisedInPlace bid(packed->unpacked(), threads);
    const Eigen::VectorXd d = bid.diagonal(), e = bid.superdiagonal();
    out.singular_values = bidiagonal_singular_values(d, e);
    if (out.singular_values.size() != n) return std::nullopt;
    out.largest_singular_value = out.singular_values(n - 1);
    out.threshold = out.singular_values(n - 1) * static_cast<double>(n) * Eigen::NumTraits<double>::epsilon();
    out.rank = static_cast<int>((out.singular_values.array() > out.threshold).count());
    if (out.rank < n - free) return std::nullopt;  // a constrained direction at the threshold: the dense method truncates it
    auto vectors = bidiagonal_right_vectors(d, e, out.singular_values.head(free));
    if (!vectors) return std::nullopt;
    f = std::move(vectors->vectors);
    out.free_basis_residual = vectors->residual;
    bid.apply_v(f);
  }
  out.free_basis = f.transpose();
  out.gap = separation_gap(out.singular_values, free, n);
  Eigen::MatrixXd r = packed->unpacked();
  packed.reset();
  auto [x0, residual] = least_squares_across(r.topLeftCorner(n, n), q, f, threads);
  out.x0 = std::move(x0);
  out.weighted_residual = correctly_rounded_hypot(residual, rest);
  return out;
}

}  // namespace mha::centre_detail
