// Reference path of stage-2 certification (MPFR), and the quantities of the
// certification lemma computed with the true heads. Used by the cross-check
// and the lemma's property tests; see proofs/certification.md.
#pragma once

#include "model/layer.hpp"
#include "stages/stage2/certify.hpp"

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
  double bound = 0;            // (ρ + w_term + ‖e_a‖ + MPFR allowance) / σ_min(C); the allowance is 2^{20−bits} of the terms' sizes
  double noise_norm = 0;       // ‖e_a‖, the label noise of row a (0 without noise)
  double bound_without_noise = 0;  // (ρ + w_term + allowance) / σ_min(C): what δ is when the noise is ignored
  RowVec<double> v;
  std::vector<RowVec<double>> head_rows;  // A_i[a,:]
  std::vector<std::vector<double>> head_logit_differences;  // ⟨x_aᵀ(x_j − x_a), Θ_i⟩ for j = 0..k−1
};

// With `label_noise` (k×d), the labels are F(X) + e: the identity gains e_a and
// the lemma's bound ‖e_a‖ (proofs/certification.md, "Label noise").
LemmaQuantities certification_lemma(const Layer& layer, const MatD& x, const MatD& w_hat, int row, unsigned bits,
                                    const MatD* label_noise = nullptr);

// Fast against reference on the same inputs (proofs/certification.md, "Fast
// against reference"): the row's least squares v* = argmin ‖y_a − vᵀB‖ for the
// same double B and y, solved by Householder QR in MPFR at `bits`, then the
// fast path's decision chain (rank, residual ≤ τ‖y‖, v ≥ v_min, v > δ, |Σv − 1| ≤ √k δ)
// taken with the reference values. Each threshold comparison has a derived band
// (tolerance::certification_solution_bound, certification_residual_bound): a
// reference value within its band of a threshold makes the row *undecided*
// (reported, never counted as agreement).
// A slab of a row the reference certifies, built from the reference's v*, ρ* and
// δ* in MPFR (proofs/certification.md, "The body on two paths"): its normal a* (the
// exact x_aᵀ(x_j − x_a) rounded), centre b* = ln(v*_j/v*_a) and half-width η*, each
// rounded once to double, with the derived bounds on the fast slab's distance from it.
struct ReferenceSlab {
  SlabConstraint slab;
  double centre_bound = 0;   // |b̂ − b*| ≤ (tolerance::slab_centre_difference_bound)
  double width_bound = 0;    // |η̂ − η*| ≤ (tolerance::slab_width_difference_bound)
  double normal_bound = 0;   // ‖â − a*‖₁ ≤ (tolerance::slab_normal_difference_bound)
};

struct CertificationCheck {
  RowVerdict fast = RowVerdict::rank_deficient;
  RowVerdict reference = RowVerdict::rank_deficient;
  bool undecided = false;
  std::string undecided_at;  // which comparison was within its band
  double v_difference = 0;   // ‖v̂ − v*‖ (0 when a path has no v)
  double v_bound = 0;        // its derived bound
  std::vector<ReferenceSlab> reference_slabs;  // when the reference certifies the row, decided
  bool agree() const { return (undecided || fast == reference) && v_difference <= v_bound; }
};

CertificationCheck compare_certification_row(const MatD& x, const MatD& y, const MatD& b_matrix, int row,
                                             const CertifyOptions& options, const RowCertificate& fast,
                                             unsigned bits);

}  // namespace mha
