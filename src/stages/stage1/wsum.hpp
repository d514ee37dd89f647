// Stage 1 (MATH.md §3.1): crude estimate of W_Σ = Σ_i W_i,
//
//   Ŵ = (1/(kN)) Σ_n X_nᵀ J Y_n,   E[Ŵ] = Σ_i M(Θ_i) W_i,
//
// the correlation of the summed input tokens with the summed output tokens.
// Fast path here; the population value by enumeration is population_stage1().
#pragma once

#include "util/processes.hpp"
#include "data/oracle.hpp"

#include <cstdint>

namespace mha {

struct Stage1Options {
  int64_t samples = 200000;     // clipped to what the source has
  int threads = 1;
  uint64_t first_sample = 0;    // offset into the source's stream
  double max_seconds = 0;       // 0: no time budget; else stop after the batch that exceeds it
  // Processes sharing the loop (util/processes.hpp): each draws and reduces its
  // blocks of every batch; the block partials are gathered and added in block
  // order, so Ŵ is the same bytes for any count.
  Processes processes = {};
};

struct Stage1Result {
  MatD w_hat;            // the estimate Ŵ
  MatD standard_error;   // entrywise sample standard deviation / sqrt(N)
  int64_t samples = 0;
  std::vector<int64_t> samples_by_process;  // of `samples`, what each process drew
  double seconds = 0;
  bool budget_exhausted = false; // stopped by max_seconds or by the source running out
};

// Per-sample statistic (1/k) (Σ_t x_t)ᵀ (Σ_t y_t), accumulated into `sum` and
// `sum_sq` (entrywise squares).
void accumulate_stage1_statistic(const MatD& x, const MatD& y, MatD& sum, MatD& sum_sq);

// Deterministic for any thread count: samples are reduced in fixed blocks of
// kStage1Block, and the blocks are added in order.
constexpr int64_t kStage1Block = 4096;
Stage1Result stage1_estimate_wsum(const SampleSource& source, const Stage1Options& options);

}  // namespace mha
