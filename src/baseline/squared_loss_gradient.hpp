// The squared loss of one labelled sample and its gradient in every parameter,
// for gradient training of a student layer (baseline/adam.hpp).
//
//   loss = ½ ‖F(X) − Y‖_F²,  R = F(X) − Y,  A_i = softmax_rows(X Θ_i Xᵀ),  V_i = X W_i
//   ∂loss/∂W_i = (A_i X)ᵀ R
//   ∂loss/∂Θ_i = Xᵀ S_i X,  S_i[a,l] = A_i[a,l] (G_i[a,l] − Σ_j A_i[a,j] G_i[a,j]),  G_i = R V_iᵀ
//
// from F = Σ_i A_i V_i, the softmax derivative ∂A[a,j]/∂L[a,l] = A[a,j](δ_jl − A[a,l])
// and L_i = X Θ_i Xᵀ. Claim checked by property_tests/squared_loss_gradient.cpp
// against central differences of the loss in MPFR (proofs/squared_loss_gradient.md).
#pragma once

#include "model/layer.hpp"

namespace mha {

template <class T>
struct LossGradient {
  T loss;
  LayerT<T> gradient;  // head i: {∂loss/∂Θ_i, ∂loss/∂W_i}
};

// x: k×d tokens, y: k×d target outputs.
template <class T>
LossGradient<T> squared_loss_gradient(const LayerT<T>& layer, const Mat<T>& x, const Mat<T>& y);

// The loss alone (no gradient), for finite differences and validation.
template <class T>
T squared_loss(const LayerT<T>& layer, const Mat<T>& x, const Mat<T>& y);

}  // namespace mha
