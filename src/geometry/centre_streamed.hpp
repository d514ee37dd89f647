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

// Eigen 3.4's blocked upper bidiagonalisation (internal::upperbidiagonalization_
// inplace_blocked: a = U B Vᵀ, B into `bidiagonal`, the reflectors into `a`) and
// blocked Householder QR (HouseholderQR's, blocks of 48: R and the reflectors into
// `a`, their coefficients into `coefficients`), with the products that cost O(n²)
// per step — the bidiagonalisation's two matrix–vector products per column and
// its trailing updates, the QR's trailing updates — in chunks of output rows or
// columns (chunk rounded down to a multiple of 4), `threads` at a time
// (threaded_factorisations.cpp). The bytes are Eigen's for every chunk size and
// thread count, for the same reason as fold_rows': Eigen's matrix–vector kernels
// take output rows in packets of 4 from the start and treat only the last few
// apart, its matrix products group columns by 4 from a block's start and block
// the inner dimension by its length alone. Test: "the threaded bidiagonalisation
// and QR give Eigen's bytes".
constexpr Eigen::Index kFactorisationChunk = 512;
using UpperBidiagonal = Eigen::internal::BandMatrix<double, Eigen::Dynamic, Eigen::Dynamic, 1, 0, Eigen::RowMajor>;
void bidiagonalise_in_place(Eigen::Ref<Eigen::MatrixXd> a, UpperBidiagonal& bidiagonal, int threads = 1,
                            Eigen::Index chunk = kFactorisationChunk);
void householder_qr_in_place(Eigen::Ref<Eigen::MatrixXd> a, Eigen::VectorXd& coefficients, int threads = 1,
                             Eigen::Index chunk = kFactorisationChunk);

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
// share the fold, the bidiagonalisation and the QR of step 4, which give the same
// bytes on any number.
std::optional<ConvexBody::Centre> streamed_centre(const std::vector<Slab>& slabs, int n, double radius, int free,
                                                  int threads = 1, Eigen::Index block_rows = 1024);

}  // namespace mha::centre_detail
