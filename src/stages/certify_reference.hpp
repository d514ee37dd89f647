// Reference path of stage-2 certification (MPFR), and the quantities of the
// certification lemma computed with the true heads. Used by the cross-check
// and the lemma's property tests; see proofs/certification.md.
#pragma once

#include "model/layer.hpp"

namespace mha {

struct ReferenceRow {
  RowVec<double> v;            // v̂ = argmin ‖y_a − vᵀB‖ by Householder QR in MPFR, rounded
  double residual = 0;         // ρ
  double relative_residual = 0;
};

// y = F(X) is recomputed in MPFR from the layer, so the row is exact up to 2^-bits.
ReferenceRow certify_row_reference(const Layer& layer, const MatD& x, const MatD& w_hat, int row, unsigned bits);

struct LemmaQuantities {
  double deviation = 0;        // max_i ‖A_i[a,:] − v̂‖
  double c_norm = 0;           // ‖c‖, c = (A_i[a,j] − v̂_j)_{i,j}
  double sigma_min_c = 0;      // σ_min(C), C = rows x_j W_i (km×d)
  double c_matrix_norm = 0;    // ‖C‖_F
  double w_term = 0;           // ‖v̂ᵀX(W_Σ − Ŵ)‖
  double residual = 0;         // ρ
  double bound = 0;            // (ρ + w_term + MPFR allowance) / σ_min(C); the allowance is 2^{20−bits} of the terms' sizes
  RowVec<double> v;
  std::vector<RowVec<double>> head_rows;  // A_i[a,:]
  std::vector<std::vector<double>> head_logit_differences;  // ⟨x_aᵀ(x_j − x_a), Θ_i⟩ for j = 0..k−1
};

LemmaQuantities certification_lemma(const Layer& layer, const MatD& x, const MatD& w_hat, int row, unsigned bits);

// A posteriori bound on a fast solution: since (B Bᵀ) v* = B y_aᵀ,
// ‖v − v*‖ ≤ ‖B (Bᵀ v − y_aᵀ)‖ / σ_min(B)², evaluated in MPFR with B = XŴ, y = F(X).
double fast_solution_error_bound(const Layer& layer, const MatD& x, const MatD& w_hat, int row,
                                 const RowVec<double>& v_fast, unsigned bits);

}  // namespace mha
