// Eigen 3.4's blocked upper bidiagonalisation and blocked Householder QR, with
// their O(n²)-per-step products shared over threads (centre_streamed.hpp). The
// algorithms are Eigen's, step for step (Eigen/src/SVD/UpperBidiagonalization.h:
// upperbidiagonalization_blocked_helper and upperbidiagonalization_inplace_blocked;
// Eigen/src/QR/HouseholderQR.h: householder_qr_inplace_blocked), so this file
// keeps Eigen's licence, the Mozilla Public License 2.0
// (https://mozilla.org/MPL/2.0/). Only the marked products differ: each is split
// into chunks of output rows or columns (in_chunks), which Eigen's kernels compute
// with the same arithmetic as the whole product. Tests: "the threaded
// bidiagonalisation and QR give Eigen's bytes" (tests/geometry/test_centre_streamed.cpp).
#include "geometry/centre_streamed.hpp"
#include "geometry/chunks.hpp"

#include <Eigen/Householder>
#include <Eigen/QR>
#include <Eigen/SVD>

#include <algorithm>

namespace mha::centre_detail {

namespace {

using Eigen::Index;

constexpr Index kBidiagonalBlock = 32;  // Eigen's maxBlockSize for upperbidiagonalization_inplace_blocked
constexpr Index kQrBlock = 48;          // HouseholderQR::computeInPlace's block size
constexpr Index kUnblockedBelow = 48;   // Eigen finishes the bidiagonalisation unblocked below 48 columns

using SubColumn = Eigen::Ref<Eigen::VectorXd>;
using SubRow = Eigen::Ref<Eigen::RowVectorXd, 0, Eigen::InnerStride<>>;
using SubMatrix = Eigen::Ref<Eigen::MatrixXd>;

struct Workspace {
  SubMatrix x, y;  // Eigen's X (rows × bs) and Y (cols × bs)
  int threads;
  Index chunk;
};

// Step 3 of Eigen's helper for column k: y_k = τ_v (Aᵀv_k − Y V_{k−1}ᵀv_k − U X_{k−1}ᵀv_k);
// the product with A's trailing block (the bottleneck) in chunks of y_k's entries.
void right_update(SubMatrix a, Index k, double tau_v, Workspace& w) {
  const Index remaining_rows = a.rows() - k, remaining_cols = a.cols() - k - 1;
  SubColumn v_k = a.col(k).tail(remaining_rows);
  SubColumn y_k(w.y.col(k).tail(remaining_cols));
  SubColumn tmp(w.y.col(k).head(k));
  in_chunks(remaining_cols, w.chunk, w.threads, [&](Index first, Index width) {  // threaded
    y_k.segment(first, width).noalias() = a.block(k, k + 1 + first, remaining_rows, width).adjoint() * v_k;
  });
  tmp.noalias() = a.block(k, 0, remaining_rows, k).adjoint() * v_k;
  y_k.noalias() -= w.y.block(k + 1, 0, remaining_cols, k + 1).leftCols(k) * tmp;
  tmp.noalias() = w.x.block(k, 0, remaining_rows, k).adjoint() * v_k;
  y_k.noalias() -= a.block(0, k + 1, k, remaining_cols).adjoint() * tmp;
  y_k *= tau_v;
}

// Step 6 for column k: x_k = τ_u (A u_k − X U_{k−1}ᵀu_k − V Y_kᵀu_k); the product
// with A's trailing block in chunks of x_k's entries.
void left_update(SubMatrix a, Index k, double tau_u, Workspace& w) {
  const Index remaining_rows = a.rows() - k, remaining_cols = a.cols() - k - 1;
  SubRow u_k(a.row(k).tail(remaining_cols));
  SubColumn x_k(w.x.col(k).tail(remaining_rows - 1));
  SubColumn tmp0(w.x.col(k).head(k)), tmp1(w.x.col(k).head(k + 1));
  in_chunks(remaining_rows - 1, w.chunk, w.threads, [&](Index first, Index width) {  // threaded
    x_k.segment(first, width).noalias() = a.block(k + 1 + first, k + 1, width, remaining_cols) * u_k.transpose();
  });
  tmp0.noalias() = a.block(0, k + 1, k, remaining_cols) * u_k.transpose();
  x_k.noalias() -= w.x.block(k, 0, remaining_rows, k).bottomRows(remaining_rows - 1) * tmp0;
  tmp1.noalias() = w.y.block(k + 1, 0, remaining_cols, k + 1).adjoint() * u_k.transpose();
  x_k.noalias() -= a.block(k + 1, 0, remaining_rows - 1, k + 1) * tmp1;
  x_k *= tau_u;
}

// Eigen's upperbidiagonalization_blocked_helper (real scalars) on the block `a`:
// its first bs columns and rows bidiagonalised, the rest updated.
void bidiagonalise_panel(SubMatrix a, double* diagonal, double* upper_diagonal, Index bs, Workspace& w) {
  const Index rows = a.rows(), cols = a.cols();
  double tau_u = 0, tau_u_prev = 0, tau_v = 0;
  for (Index k = 0; k < bs; ++k) {
    const Index remaining_rows = rows - k, remaining_cols = cols - k - 1;
    SubColumn v_k = a.col(k).tail(remaining_rows);
    v_k -= a.block(k, 0, remaining_rows, k) * w.y.row(k).head(k).adjoint();
    if (k) v_k -= w.x.block(k, 0, remaining_rows, k) * a.col(k).head(k);
    v_k.makeHouseholderInPlace(tau_v, diagonal[k]);
    if (k + 1 < cols) {
      a(k, k) = 1.0;
      right_update(a, k, tau_v, w);
      SubRow u_k(a.row(k).tail(remaining_cols));
      u_k -= w.y.block(k + 1, 0, remaining_cols, k + 1) * a.row(k).head(k + 1).adjoint();
      if (k) u_k -= a.block(0, k + 1, k, remaining_cols).adjoint() * w.x.row(k).head(k).adjoint();
      u_k.makeHouseholderInPlace(tau_u, upper_diagonal[k]);
      a(k, k + 1) = 1.0;
      left_update(a, k, tau_u, w);
      if (k > 0) a(k - 1, k) = tau_u_prev;
      tau_u_prev = tau_u;
    } else {
      a(k - 1, k) = tau_u_prev;
    }
    a(k, k) = tau_v;
  }
  if (bs < cols) a(bs - 1, bs) = tau_u_prev;
  if (cols <= bs || rows <= bs) return;
  // A22 −= A21 Yᵀ + X A12, in chunks of A22's columns (threaded).
  SubMatrix a22(a.bottomRightCorner(rows - bs, cols - bs));
  SubMatrix a21(a.block(bs, 0, rows - bs, bs));
  SubMatrix a12(a.block(0, bs, bs, cols - bs));
  const double kept = a12(bs - 1, 0);
  a12(bs - 1, 0) = 1.0;
  const auto y = w.y.topLeftCorner(cols, bs).bottomRows(cols - bs);
  const auto x = w.x.topLeftCorner(rows, bs).bottomRows(rows - bs);
  in_chunks(cols - bs, w.chunk, w.threads, [&](Index first, Index width) {
    a22.middleCols(first, width).noalias() -= a21 * y.middleRows(first, width).adjoint();
    a22.middleCols(first, width).noalias() -= x * a12.middleCols(first, width);
  });
  a12(bs - 1, 0) = kept;
}

}  // namespace

void bidiagonalise_in_place(Eigen::Ref<Eigen::MatrixXd> a, UpperBidiagonal& bidiagonal, int threads, Index chunk) {
  const Index rows = a.rows(), cols = a.cols(), size = std::min(rows, cols);
  Eigen::MatrixXd x(rows, kBidiagonalBlock), y(cols, kBidiagonalBlock);
  const Index block = std::min(kBidiagonalBlock, size);
  for (Index k = 0; k < size; k += block) {
    const Index bs = std::min(size - k, block), brows = rows - k, bcols = cols - k;
    double* diagonal = &bidiagonal.diagonal<0>().coeffRef(k);
    double* upper = &bidiagonal.diagonal<1>().coeffRef(k);
    auto b = a.block(k, k, brows, bcols);
    if (k + bs == cols || bcols < kUnblockedBelow) {
      Eigen::internal::upperbidiagonalization_inplace_unblocked(b, diagonal, upper, x.data());
      break;
    }
    Workspace w{x.topLeftCorner(brows, bs), y.topLeftCorner(bcols, bs), threads, chunk};
    bidiagonalise_panel(b, diagonal, upper, bs, w);
  }
}

void householder_qr_in_place(Eigen::Ref<Eigen::MatrixXd> a, Eigen::VectorXd& coefficients, int threads, Index chunk) {
  const Index rows = a.rows(), cols = a.cols(), size = std::min(rows, cols);
  coefficients.resize(size);
  Eigen::VectorXd temp(cols);
  const Index block = std::min(kQrBlock, size);
  for (Index k = 0; k < size; k += block) {
    const Index bs = std::min(size - k, block), trailing = cols - k - bs, brows = rows - k;
    auto panel = a.block(k, k, brows, bs);
    auto tau = coefficients.segment(k, bs);
    Eigen::internal::householder_qr_inplace_unblocked(panel, tau, temp.data());
    if (trailing == 0) continue;
    // Each chunk calls Eigen's routine whole, so the panel's T factor is formed once per
    // chunk (O(bs²·rows) each, a few per cent of the update): kept, because a T formed
    // once and applied by hand would be another computation with its own bytes.
    in_chunks(trailing, chunk, threads, [&](Index first, Index width) {  // threaded
      auto columns = a.block(k, k + bs + first, brows, width);
      Eigen::internal::apply_block_householder_on_the_left(columns, panel, tau, false);
    });
  }
}

}  // namespace mha::centre_detail
