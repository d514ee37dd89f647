// A priori bound on the rounding error of a forward pass in floating point
// with unit roundoff u, entrywise over the k×d output. It holds for any
// summation order (so for the fast path's tables and for Eigen's products)
// and assumes exp is accurate to 2u relative. Derivation: proofs/forward_error_bound.md.
#pragma once

#include "model/layer.hpp"
#include "numeric/tolerance.hpp"

namespace mha {

// The forward route F = Σ_i Â_i (X W_i) (the fast forward pass).
MatD forward_error_bound(const Layer& layer, const MatD& x, double unit_roundoff = tolerance::kDoubleUnitRoundoff);

// ε_A,a for one head: the ℓ1 distance of the computed attention row a,
// softmax_rows(fl(fl(XΘ)Xᵀ)), from the exact one (k entries; the bound's own
// evaluation factor is left to the caller). Shared by both routes' bounds.
Eigen::VectorXd attention_row_error_bound(const MatD& theta, const MatD& x, double unit_roundoff = tolerance::kDoubleUnitRoundoff);

// The design fl(Â_i X) against A_i X, entrywise, in the design rows' layout
// (k × m·d, block i = head i): (ε_A,i,a + γ_k(1 + ε_A,i,a)) · max_b |X[b,j]|.
MatD design_error_bound(const Layer& layer, const MatD& x, double unit_roundoff = tolerance::kDoubleUnitRoundoff);

// The design route (polishing, stages/polish/polish.cpp `evaluate`): ŷ =
// fl([fl(Â_1 X) … fl(Â_m X)] · W_stack), entrywise against F(X) at the layer
// (proofs/forward_error_bound.md, "The design route (polishing)").
MatD design_route_error_bound(const Layer& layer, const MatD& x, double unit_roundoff = tolerance::kDoubleUnitRoundoff);

}  // namespace mha
