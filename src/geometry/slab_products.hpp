// The weighted slab matrix M of the least-squares centre (convex_body.hpp) applied
// by its structure, never formed. A stage-2 slab's normal is an outer product of
// tokens, a_r = vec(x_aᵀ(x_j − x_a)) (Θ row-major), so with u_r ⊗ v_r = a_r
//   (M θ)_r = w_r u_rᵀ Θ v_r             (a batch of U Θ, then a row-wise dot with V),
//   Mᵀ y    = Uᵀ diag(w ∘ y) V            (one d × d matrix),
// each 2N·d² flops instead of N·d⁴ for a dense row block (U, V: N × d).
//
// Determinism: rows are taken in fixed blocks of block_rows() (a function of N
// alone); a block's Mᵀ-part is one GEMM, and the blocks' parts are added in block
// order. Threads take blocks in parallel and processes (MPI ranks) contiguous
// ranges of blocks, gathered in rank order (util/processes.hpp), so every product
// has the same bytes for any thread or process count.
#pragma once

#include "util/processes.hpp"

#include <Eigen/Core>

#include <cstdint>
#include <vector>

namespace mha {

class SlabProducts {
 public:
  // u, v: N × d (row r holds u_r, v_r); w: the weights; c = w ∘ b.
  SlabProducts(Eigen::MatrixXd u, Eigen::MatrixXd v, Eigen::VectorXd w, Eigen::VectorXd c, int threads,
               const Processes& processes);

  int64_t rows() const { return u_.rows(); }
  int d() const { return static_cast<int>(u_.cols()); }
  int64_t n() const { return int64_t{d()} * d(); }
  int64_t blocks() const { return blocks_; }
  int64_t block_rows() const { return block_rows_; }

  // A·X = Mᵀ(M X) for the columns of x (n × b each, Θ row-major in a column): one
  // all-gather of the blocks' partial sums.
  Eigen::MatrixXd gram_times(const Eigen::MatrixXd& x) const;
  // Mᵀ c (n).
  Eigen::VectorXd transpose_times_target() const;
  // Σ_r ((M x)_r − c_r)², blocks summed in order (one all-gather).
  double residual_squared(const Eigen::VectorXd& x) const;
  // ‖M‖_F² = Σ_r w_r² ‖u_r‖² ‖v_r‖² and ‖c‖², in block order.
  double frobenius_squared() const { return frobenius2_; }
  double target_squared() const { return c2_; }
  // Σ_r w_r² (the population preconditioner's scale, iterative_centre.hpp).
  double weight_squared_sum() const { return w2_; }
  // Products with M (or Mᵀ) made so far (each column counts one).
  int64_t products() const { return products_; }

 private:
  // The rows of block `k`: [first, first + count).
  std::pair<int64_t, int64_t> block(int64_t k) const;
  // This process's range of blocks.
  std::pair<int64_t, int64_t> my_blocks() const { return processes_.share(blocks_); }
  // Sums, in block order, `per_block` doubles per block (this process filled its own), after one all-gather.
  void sum_blocks(std::vector<double>& parts, int64_t per_block, double* out) const;

  Eigen::MatrixXd u_, v_;
  Eigen::VectorXd w_, c_;
  int threads_;
  Processes processes_;
  int64_t block_rows_ = 0, blocks_ = 0;
  double frobenius2_ = 0, c2_ = 0, w2_ = 0;
  mutable int64_t products_ = 0;
};

// Rows per block of SlabProducts for N rows: at least 256, and at most 64 blocks
// (their partial sums are held together: 64·b·n doubles).
int64_t slab_block_rows(int64_t rows);

}  // namespace mha
