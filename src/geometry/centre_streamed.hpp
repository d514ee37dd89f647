// The streamed least-squares centre's pieces (ConvexBody::least_squares_centre,
// CentreMethod::streamed), internal to src/geometry/ and its tests. Each piece
// is a standard algorithm; tolerance.hpp (streamed_svd_backward_error) states
// what each contributes to the centre's error.
#pragma once

#include "geometry/convex_body.hpp"

#include <Eigen/Core>

#include <optional>
#include <vector>

namespace mha::centre_detail {

// The weight w_r = 1/max(η_r, φ_r, DBL_MIN) of the header's contract (both methods).
double slab_weight(const Slab& s, int n, double radius);

// s_free / s_{free−1} over the ascending singular values, with the header's
// conventions at the ends (both methods).
double separation_gap(const Eigen::VectorXd& asc, int free, int n);

// Folds the rows `block` (rows × (n+1)) into the upper-triangular `r` ((n+1)×(n+1)):
// afterwards r is the R factor of [r; block] (Householder reflectors, each with its
// one nonzero of the r-part on the diagonal — LAPACK's triangle-on-rectangle QR,
// dtpqrt — applied in panels of 32 columns as compact WY). `block` is overwritten.
// Each panel's update of the columns after it runs in chunks of chunk_columns
// (rounded down to a multiple of 4), `threads` at a time; the bytes are the same
// for every chunk size and thread count.
constexpr Eigen::Index kFoldChunkColumns = 512;
void fold_rows(Eigen::Ref<Eigen::MatrixXd> r, Eigen::Ref<Eigen::MatrixXd> block, int threads = 1,
               Eigen::Index chunk_columns = kFoldChunkColumns);

// The R factor of [M | c] (rows w_r a_rᵀ, w_r b_r), (n+1)×(n+1) upper triangular,
// from the slabs `block_rows` at a time: the top-left n×n block is an R factor of M,
// the column n above the diagonal is Qᵀc's first n entries, and |R(n,n)| is the norm
// of the rest of Qᵀc (the residual of the unconstrained least squares).
Eigen::MatrixXd streamed_r_factor(const std::vector<Slab>& slabs, int n, double radius, Eigen::Index block_rows,
                                  int threads = 1);

// The singular values of an upper-bidiagonal matrix (diagonal d, superdiagonal e),
// ascending: the nonnegative eigenvalues of its Golub–Kahan tridiagonal (zero
// diagonal, off-diagonal d₁, e₁, d₂, …, d_n), by Eigen's symmetric tridiagonal QR.
// Empty on no convergence.
Eigen::VectorXd bidiagonal_singular_values(const Eigen::VectorXd& d, const Eigen::VectorXd& e);

// The right singular vectors (columns, n × values.size()) of the bidiagonal (d, e)
// for the given singular values (ascending, each from bidiagonal_singular_values),
// by inverse iteration on the Golub–Kahan tridiagonal with a pivoted LU, then
// orthonormalised, and the largest of their singular-pair residuals (‖Bᵀu − ŝv‖
// with u = Bv/ŝ, or ŝ = ‖Bv‖ when smaller) over max(|d|, |e|). A vector is
// accepted once its residual is at most tolerance::kInverseIterationResidual, or
// after 16 iterations the one of the smallest residual when that is at most
// tolerance::kInverseIterationStallLimit; nothing when a vector meets neither.
struct RightVectors {
  Eigen::MatrixXd vectors;
  double residual = 0;  // ρ of tolerance::streamed_svd_backward_error
};
std::optional<RightVectors> bidiagonal_right_vectors(const Eigen::VectorXd& d, const Eigen::VectorXd& e,
                                                     const Eigen::VectorXd& values);

// The streamed centre; nothing when its conditions fail (rank < n − free, free >
// kStreamedMaxFree, no convergence): the caller computes the dense one. `threads`
// share the fold (fold_rows), which gives the same bytes on any number.
std::optional<ConvexBody::Centre> streamed_centre(const std::vector<Slab>& slabs, int n, double radius, int free,
                                                  int threads = 1, Eigen::Index block_rows = 1024);

}  // namespace mha::centre_detail
