// Import standard multi-head attention weights (PyTorch nn.MultiheadAttention,
// one layer, no biases) into the (Θ_h, W_h) form of MATH.md §1:
//
//   F(X) = Σ_h softmax_rows(X Θ_h Xᵀ) X W_h.
//
// The derivation is in import_attention.cpp.
#pragma once

#include "model/layer.hpp"

#include <string>

namespace mha {

struct ImportResult {
  bool ok = false;
  std::string error;  // one line, when !ok
  Layer layer;        // `heads` heads, each Θ_h and W_h of size d×d
};

// wq, wk, wv: the d×d input projections (PyTorch's in_proj_weight split into
// three row blocks, or q_proj/k_proj/v_proj weights); wo: the d×d output
// projection (out_proj.weight). Head h uses rows h*d_h .. (h+1)*d_h-1 of wq,
// wk, wv and columns h*d_h .. (h+1)*d_h-1 of wo, with d_h = d / heads.
// Errors: heads < 1, empty/non-square/mismatched shapes, d not divisible by
// heads, NaN/Inf in the input, or a product that overflows to Inf.
ImportResult import_attention(const MatD& wq, const MatD& wk, const MatD& wv, const MatD& wo, int heads);

}  // namespace mha
