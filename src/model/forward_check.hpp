// The forward pass on two paths (proofs/forward_error_bound.md): the fast
// (double) pass against the MPFR reference on the same inputs, entrywise within
// forward_error_bound, plus half an ulp of the reference (its rounding to
// double) and the reference's own error at p bits (2^{40−p}·Σ_i max|X W_i|, the
// same analysis at 2^{−p}), escalated 128 → 256 bits before a disagreement is
// declared. `mhalearn verify forward`, `demo`'s cross-check, the learner's
// reference step and the forward property all call check_forward.
#pragma once

#include "model/inputs.hpp"
#include "model/layer.hpp"
#include "numeric/comparison.hpp"

#include <functional>
#include <vector>

namespace mha {

// The fast pass over a batch: count·k·d outputs (sample, token, coordinate), as the
// oracle labels samples (bit-packed tables for Boolean inputs, the dense path for
// Gaussian ones); NaN for a sample the fast path cannot answer (an overflow).
using ForwardFast = std::function<std::vector<double>(const Layer&, const InputBatch&)>;
std::vector<double> forward_fast_batch(const Layer& layer, const InputBatch& inputs);

Comparison check_forward(const Layer& layer, const InputBatch& inputs, const ForwardFast& fast = forward_fast_batch);

}  // namespace mha
