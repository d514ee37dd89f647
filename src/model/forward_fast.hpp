// Fast forward pass: double precision, bit-packed Boolean tokens, batched,
// multi-threaded, and bit-identical for any thread count (each sample is
// computed alone, in a fixed order).
//
// Boolean tokens make x Θ a sum of signed rows of Θ. The rows of
// G = [Θ_1 … Θ_m | W_1 … W_m] are grouped in chunks of `chunk_bits`; for every
// chunk a table holds Σ_r s_r G[r,:] for all 2^chunk_bits sign patterns, so
// x G costs d/chunk_bits vector additions instead of d.
#pragma once

#include "data/inputs.hpp"
#include "model/layer.hpp"

#include <vector>

namespace mha {

class FastForward {
 public:
  explicit FastForward(const Layer& layer);

  int d() const { return d_; }
  int m() const { return m_; }
  int chunk_bits() const { return chunk_bits_; }

  // Y for every sample of the batch: count * k * d doubles (sample, token, coordinate).
  void run(const InputBatch& batch, double* y, int threads) const;
  std::vector<double> run(const InputBatch& batch, int threads) const;

  // One sample, written to y (k*d doubles). `scratch` is resized as needed.
  void forward_boolean(const uint64_t* bits, int k, double* y, std::vector<double>& scratch) const;
  void forward_dense(const double* x, int k, double* y, std::vector<double>& scratch) const;

 private:
  template <int D>
  void finish(int k, const double* x, const double* u, double* y, double* row) const;
  void finish_any(int k, const double* x, const double* u, double* y, double* row) const;

  int d_, m_, width_, chunk_bits_, chunks_;
  std::vector<double> g_;       // d × width, row-major: [Θ_1 … Θ_m | W_1 … W_m]
  std::vector<double> table_;   // chunks × 2^chunk_bits × width
};

}  // namespace mha
