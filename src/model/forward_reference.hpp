// The reference path's forward pass for callers that work in double:
// inputs and outputs are doubles, the computation is MPFR at `bits` of
// precision (templates: model/reference.hpp).
#pragma once

#include "model/inputs.hpp"
#include "model/layer.hpp"

#include <vector>

namespace mha {

// F(X) in MPFR, rounded to double at the end.
MatD forward_mpfr(const Layer& layer, const MatD& x, unsigned bits);

// Every sample of a batch: count * k * d doubles; shows progress on a terminal.
std::vector<double> forward_mpfr_batch(const Layer& layer, const InputBatch& batch, unsigned bits);

}  // namespace mha
