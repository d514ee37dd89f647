// Stage 2, per row (MATH.md §3.2, Lemma 3.2.1): certify that all heads attend in nearly the
// same way, and turn a certified row into slab constraints on Θ.
//
// For an example (X, Y) and a row a, B = X Ŵ (row j is x_j Ŵ) and
//   v̂ = argmin_v ‖y_a − vᵀB‖,   ρ = ‖y_a − v̂ᵀB‖.
// Certification lemma: with C the km×d matrix of rows x_j W_i and c the vector
// of A_i[a,j] − v̂_j, y_a − v̂ᵀB = cᵀC − v̂ᵀX(Ŵ − W_Σ), so if km ≤ d and
// σ_min(C) > 0 then ‖c‖ ≤ δ := (ρ + ‖v̂ᵀX(W_Σ − Ŵ)‖) / σ_min(C). Every head then
// satisfies, for j ≠ a,
//   |⟨x_aᵀ(x_j − x_a), Θ_i⟩ − ln(v̂_j / v̂_a)| ≤ η_j := ln(1 + δ/(v̂_j − δ)) + ln(1 + δ/(v̂_a − δ)).
// Proof: proofs/certification.md.
//
// The learner does not know W_i, so it bounds δ with two assumptions stated in
// CertifyOptions (a lower bound on σ_min(C) and a bound on ‖W_Σ − Ŵ‖_op); when
// the truth is known the report measures how often they were violated.
//
// Noisy labels ỹ_a = y_a + e_a add e_a to the identity, so ‖cᵀC‖ ≤ ρ + ‖v̂ᵀX(W_Σ −
// Ŵ)‖ + ‖e_a‖ and δ gains ν/σ_min(C), ν a bound on ‖e_a‖: for Gaussian noise of a
// declared relative level (`label_noise`, the model of data/noisy_source.hpp) a χ²
// tail bound that fails with probability ≤ noise_failure_probability per row
// (tolerance::label_noise_row_bound), and for labels rounded to float32 the
// deterministic rounding bound (tolerance::float32_label_rounding_row_bound).
// Without it a noisy row is certified with a slab too thin for the truth
// (proofs/certification.md, "Label noise").
#pragma once

#include "model/inputs.hpp"
#include "model/layer.hpp"

#include <Eigen/Cholesky>

#include <string>
#include <vector>

namespace mha {

struct CertifyOptions {
  double tau = 1e-3;          // certify when ρ ≤ tau · ‖y_a‖ (relative residual, as in the planning prototype)
  double v_min = 0.05;        // every v̂_j ≥ v_min: one-hot patterns give useless constraints
  double sigma_min = 1.0;     // assumed lower bound on σ_min(C)
  double w_error = 0.0;       // assumed bound on ‖W_Σ − Ŵ‖_op (0 when Ŵ is exact)
  double label_noise = 0.0;   // declared relative Gaussian label noise ε (rms ε·rms(y_n) per sample; 0: none)
  double noise_failure_probability = 1e-12;  // per row: the noise bound ν fails with at most this probability
  bool float32_labels = false;  // the labels are float32 roundings of the exact values: add their rounding bound
  // Which pattern entries v_min applies to. every_entry: all k (a row is kept only
  // when no entry is below v_min). pairwise: a row keeps the slab of each pair
  // (a, j) with v̂_a ≥ v_min and v̂_j ≥ v_min; the lemma's widths need only those
  // two entries above δ, so a token both heads ignore (v̂_l ≈ 0) no longer
  // discards the row (proofs/certification.md, "Pairwise v_min").
  enum class VMinRule { every_entry, pairwise } v_min_rule = VMinRule::every_entry;
};

// ν: the bound on ‖e_a‖ the options add to the residual side of δ, from the
// sample's k×d (noisy) labels y; 0 without noise or rounding.
double label_noise_bound(const MatD& y, int row, const CertifyOptions& options);

enum class RowVerdict { certified, duplicate_tokens, rank_deficient, residual_too_large, below_v_min, too_uncertain };
const char* to_string(RowVerdict verdict);

struct RowCertificate {
  RowVerdict verdict = RowVerdict::rank_deficient;
  RowVec<double> v;           // v̂ (k entries)
  double residual = 0;        // ρ
  double relative_residual = 0;
  double delta = 0;           // the δ used for the slab widths
  double noise_bound = 0;     // ν, the label-noise part of δ·σ_min (0 without noise)
  std::vector<int> partners;  // the j ≠ a whose slabs the row gives (empty unless certified)
};

// One slab |⟨a, Θ⟩ − b| ≤ eta, with a = vec(x_aᵀ(x_j − x_a)) (row-major d×d).
struct SlabConstraint {
  std::vector<double> a;
  double b = 0;
  double eta = 0;
  int row = 0, other = 0;     // a and j
};

// Fast path: normal equations (k×k LDLᵀ) in double. Every sum is formed in a
// fixed order (certify.cpp), so the learner's loops (RowCertifier), `verify`
// and the tests compute the same bytes.
RowCertificate certify_row_fast(const MatD& x, const MatD& y, const MatD& b_matrix, int row, const CertifyOptions& o);

// B = X Ŵ as certification forms it: entry (t, c) is the fused sum
// fma(x[t,d−1], Ŵ[d−1,c], … fma(x[t,0], Ŵ[0,c], 0)), over r in increasing order.
MatD certification_products(const MatD& x, const MatD& w_hat);

// The fast path over many samples without an allocation per row: one per
// thread, loaded with one sample at a time. certify(a) is certify_row_fast(x, y,
// certification_products(x, Ŵ), a) — the same arithmetic, in the same order.
class RowCertifier {
 public:
  RowCertifier(const MatD& w_hat, int k);
  // Sample s of the batch, with its k×d labels y (row-major): forms X and B.
  void load(const InputBatch& batch, int64_t s, const double* y);
  RowVerdict certify(int row, const CertifyOptions& o);
  // The certificate of the last certify() (built on demand: it allocates).
  RowCertificate certificate() const;
  MatD x() const;  // the loaded sample

  // Working memory of one row, shared with certify_row_fast.
  struct Work {
    Work(int k, int d);
    Eigen::MatrixXd gram;
    Eigen::VectorXd rhs, v;
    Eigen::LDLT<Eigen::MatrixXd> ldlt;
    std::vector<double> row_scratch;  // d entries
    std::vector<int> partners;
    RowVerdict verdict = RowVerdict::rank_deficient;
    double residual = 0, relative_residual = 0, delta = 0, noise_bound = 0;
  };

 private:
  MatD w_hat_;
  int k_, d_;
  std::vector<double> x_, b_;
  const double* y_ = nullptr;
  Work work_;
};

// Slab half-width for a pattern entry v_j against v_a with ‖c‖ ≤ delta;
// +inf when delta ≥ min(v_j, v_a).
double slab_half_width(double v_j, double v_a, double delta);

// Every j ≠ row (0 ≤ j < k): the partners of a row under the every_entry rule.
std::vector<int> all_partners(int k, int row);

// The j ≠ row whose pairs pass v_min under the options' rule (empty: none).
std::vector<int> v_min_partners(const RowVec<double>& v, int row, const CertifyOptions& o);

// The slabs of a certified row, one per partner.
std::vector<SlabConstraint> slabs_of_row(const MatD& x, int row, const RowCertificate& cert);

// True when the k tokens are pairwise distinct.
bool tokens_distinct(const MatD& x);

}  // namespace mha
