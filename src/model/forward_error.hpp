// A priori bound on the rounding error of a forward pass in floating point
// with unit roundoff u, entrywise over the k×d output. It holds for any
// summation order (so for the fast path's tables and for Eigen's products)
// and assumes exp is accurate to 2u relative. Derivation: proofs/forward_error_bound.md.
#pragma once

#include "model/layer.hpp"

namespace mha {

MatD forward_error_bound(const Layer& layer, const MatD& x, double unit_roundoff = 0x1p-53);

}  // namespace mha
