// Derivative of the layer's output with respect to the attention matrices,
// with the W_i held fixed (used by polishing; the gradient of any squared
// loss in Θ follows from it).
//
//   ∂F[a,c]/∂Θ_i[p,q] = x_a[p] · g_{i,a,c}[q],
//   g_{i,a,c} = Σ_l A_i[a,l] (V_i[l,c] − (A_i[a,:] V_i)[c]) x_l,   V_i = X W_i,
//
// from the softmax derivative ∂A[a,j]/∂L[a,l] = A[a,j](δ_jl − A[a,l]) and
// ∂L[a,l]/∂Θ[p,q] = x_a[p] x_l[q]. Claim checked by
// property_tests/attention_jacobian.cpp against central differences in MPFR
// (proofs/attention_jacobian.md derives the tolerance).
#pragma once

#include "model/layer.hpp"

namespace mha {

// Rows (a, c) in row-major order (k·d rows); columns (i, p, q) (m·d² columns).
template <class T>
Mat<T> attention_jacobian(const LayerT<T>& layer, const Mat<T>& x);

}  // namespace mha
