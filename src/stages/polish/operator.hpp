// The Jacobian of F with respect to Θ (W held fixed) over N samples as an
// operator, never formed: polishing's matrix-free linear solver
// (stages/polish/polish.cpp) needs only J·v, Jᵀ·R and the diagonal of JᵀJ.
//
// With A_i = softmax(X Θ_i Xᵀ) and V_i = X W_i, the row (a, c) of J applied to a
// direction v = (v_1..v_m) (one d×d matrix per head, the layout of
// attention_jacobian's columns (i, p, q)) is the directional derivative of F:
//
//   (J v)[a,c] = Σ_i Σ_l dA_i[a,l] V_i[l,c],
//   dA_i[a,l]  = A_i[a,l] (δL_i[a,l] − Σ_j A_i[a,j] δL_i[a,j]),   δL_i = X v_i Xᵀ,
//
// and its adjoint, for residuals R (k × d per sample), is
//
//   (Jᵀ R)_i = Σ_n Xᵀ S_i X,   S_i[a,l] = A_i[a,l] (ρ_i[a,l] − Σ_j A_i[a,j] ρ_i[a,j]),   ρ_i = R V_iᵀ.
//
// Both follow from ∂F[a,c]/∂Θ_i[p,q] = x_a[p] g_{i,a,c}[q] with
// g_{i,a,c} = Σ_l A_i[a,l](V_i[l,c] − ȳ_{i,a}[c]) x_l (stages/polish/attention_jacobian.hpp)
// by summing over (p, q) resp. (a, c) first; each costs O(N·m·(k d² + k² d))
// instead of the dense Jacobian's N·k·d × m·d² entries.
// Checked against the MPFR Jacobian by property_tests/polish_operator.cpp
// (bound: tolerance::polish_operator_relative, proofs/attention_jacobian.md,
// "Matrix-free products").
//
// Determinism: sums over samples are taken in fixed chunks of kSampleChunk
// samples, each chunk summed in sample order and the chunks in chunk order, so
// the results are the same bytes for every thread count; processes (MPI ranks)
// take contiguous blocks of the samples or chunks, gathered in rank order
// (gather_blocks), which keeps the bytes for every number of them.
#pragma once

#include "model/layer.hpp"
#include "util/processes.hpp"

#include <vector>

namespace mha {

class AttentionLinearization {
 public:
  // Caches A_i(X_n) and V_i(X_n) = X_n W_i for every sample and head. `processes`
  // share the per-sample work of apply, apply_transpose and gram_diagonal (each its
  // block of samples, resp. of chunks, gathered: the same bytes for any number).
  AttentionLinearization(const Layer& layer, const std::vector<MatD>& xs, int threads,
                         const Processes& processes = {});

  // J v: (N·k) × d, rows (n, a); v has m·d² entries (Θ_i row-major, head by head).
  MatD apply(const Eigen::VectorXd& v) const;
  // The same into `out`, whose storage is reused when it has the shape already
  // (conjugate gradients call it every iteration: see partial_).
  void apply(const Eigen::VectorXd& v, MatD& out) const;
  // Jᵀ R: m·d² entries; R is (N·k) × d, rows (n, a).
  Eigen::VectorXd apply_transpose(const MatD& r) const;
  // diag(JᵀJ)[i,p,q] = Σ_{n,a} x_a[p]² Σ_c g_{i,a,c}[q]² (m·d² entries).
  Eigen::VectorXd gram_diagonal() const;
  // Head i's diagonal block of JᵀJ (d² × d²), formed without J:
  //   Σ_{n,a} Σ_{l,l'} K[l,l'] (x_a ⊗ x_l)(x_a ⊗ x_l')ᵀ,   K = C Cᵀ,  C[l,c] = A_i[a,l](V_i[l,c] − ȳ_{i,a}[c]),
  // i.e. Σ_{n,a} (x_a x_aᵀ) ⊗ (XᵀKX): formed over the pairs p ≤ p', q ≤ q' of the two
  // symmetric factors as one product of (terms × d(d+1)/2) matrices, about N k d⁴/2
  // flops instead of Zᵀ(KZ)'s 2 N k² d⁴ (Z's N·k·k rows x_a ⊗ x_l), summed over chunks
  // of kGramSampleChunk samples in order; column chunks of fixed width run in parallel.
  Eigen::MatrixXd head_gram_block(int head) const;

  int64_t parameters() const { return int64_t{m_} * d_ * d_; }

 private:
  const std::vector<MatD>& xs_;
  int k_, d_, m_, threads_;
  Processes processes_;
  std::vector<MatD> attention_, values_;  // [n·m + i]: A_i(X_n) (k × k), X_n W_i (k × d)
  // ordered_sum's per-chunk sums (m·d² × chunks: 67 MB at d = 128, N = 16384),
  // kept between calls: allocated afresh, blocks this large are mapped and unmapped
  // by malloc at every call, and on one machine their page faults more than doubled
  // the time of polishing's first iteration at d = 128 (docs/bench/memory/NOTES.md).
  // So calls must not overlap.
  mutable Eigen::MatrixXd partial_;

  // Σ over samples of per_sample(n, out) (out: m·d², accumulated), in fixed chunks.
  template <class PerSample>
  Eigen::VectorXd ordered_sum(const PerSample& per_sample) const;
};

// Samples per chunk of the fixed-order sums (independent of the thread count).
constexpr int64_t kSampleChunk = 64;
// Samples per chunk of head_gram_block's sum: its two factors take 2·256·k·d(d+1)/2
// doubles (17 MB at k = 2, d = 64), the pairs' product (d(d+1)/2)² (68 MB there).
constexpr int64_t kGramSampleChunk = 256;

}  // namespace mha
