// Fast forward pass: double precision, bit-packed Boolean tokens, batched,
// multi-threaded, and bit-identical for any thread count (each sample is
// computed alone, in a fixed order).
//
// Boolean tokens make x Θ a sum of signed rows of Θ. The rows of
// G = [Θ_1 … Θ_m | W_1 … W_m] are grouped in chunks of `chunk_bits`; for every
// chunk a table holds Σ_r s_r G[r,:] for all 2^chunk_bits sign patterns, so
// x G costs d/chunk_bits vector additions instead of d.
#pragma once

#include "model/inputs.hpp"
#include "model/layer.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace mha {

// The fast path's explicit outcome: it answers a sample only when every logit
// and every output is finite in double. Large inputs can overflow the logits to
// ±inf and softmax would then compute inf − inf = NaN; such a sample is
// reported, never returned as a value (the reference path answers it).
struct FastForwardStatus {
  int64_t first_unanswered = -1;  // the lowest such sample index, -1 if none
  bool ok() const { return first_unanswered < 0; }
  // One line: which sample and why, e.g. for a CLI error.
  std::string message() const;
};

struct FastForwardResult {
  std::vector<double> y;  // meaningful only where status.ok()
  FastForwardStatus status;
};

class FastForward {
 public:
  explicit FastForward(const Layer& layer);

  int d() const { return d_; }
  int m() const { return m_; }
  int chunk_bits() const { return chunk_bits_; }

  // Y for every sample of the batch: count * k * d doubles (sample, token,
  // coordinate). When the status is not ok, y holds no usable answer.
  [[nodiscard]] FastForwardStatus run(const InputBatch& batch, double* y, int threads) const;
  // Samples first .. end−1 of the batch only, written to y from its start ((end − first)·k·d
  // doubles); the status names a sample by its index in the batch.
  [[nodiscard]] FastForwardStatus run(const InputBatch& batch, int64_t first, int64_t end, double* y,
                                      int threads) const;
  [[nodiscard]] FastForwardResult run(const InputBatch& batch, int threads) const;

  // One sample, written to y (k*d doubles). `scratch` is resized as needed.
  // False when a logit or an output is not finite (y is then no answer).
  [[nodiscard]] bool forward_boolean(const uint64_t* bits, int k, double* y, std::vector<double>& scratch) const;
  [[nodiscard]] bool forward_dense(const double* x, int k, double* y, std::vector<double>& scratch) const;

  // A priori guarantee: true when every input with entries of magnitude at
  // most `max_abs_input` gets an answer. It bounds every partial sum of the
  // logits by a² Σ|Θ_i| and of the outputs by m·a·max_c Σ_r |W_i[r,c]|, and
  // asks for a 2^-16 margin below the largest double, ample for the relative
  // rounding growth (at most 2^-53 per addition, about 2^-40 over d ≤ 1024 terms).
  bool answers_all_inputs(double max_abs_input) const;

 private:
  template <int D>
  bool finish(int k, const double* x, const double* u, double* y, double* row) const;
  bool finish_any(int k, const double* x, const double* u, double* y, double* row) const;

  int d_, m_, width_, chunk_bits_, chunks_;
  std::vector<double> g_;       // d × width, row-major: [Θ_1 … Θ_m | W_1 … W_m]
  std::vector<double> table_;   // chunks × 2^chunk_bits × width
};

}  // namespace mha
