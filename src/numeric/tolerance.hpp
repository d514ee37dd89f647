// Every tolerance a comparison uses, in one place: each is a named function whose
// comment states the derivation and cites where it is written out. A comparison
// in src/, tests/ or property_tests/ uses one of these, never a bare epsilon
// (the few numbers that must stay are listed in proofs/README.md, "Numbers that
// are not tolerances").
//
// Notation (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., 2002):
// u is the unit roundoff of the arithmetic (2⁻⁵³ for IEEE double, 2⁻ᵖ for MPFR at
// p bits, round to nearest), γ_n = n u / (1 − n u) for n u < 1.
#pragma once

namespace mha::tolerance {

// u of IEEE binary64 with round to nearest.
constexpr double kDoubleUnitRoundoff = 0x1p-53;

// u of MPFR at `bits` bits of precision (round to nearest): 2^−bits.
double mpfr_unit_roundoff(unsigned bits);

// γ_n (Higham Lemma 3.1): |Π_{i≤n} (1 + δ_i)^{±1} − 1| ≤ γ_n when |δ_i| ≤ u and n u < 1.
// A dot product of n terms, summed in any order, is within γ_n Σ|x_i y_i| (Higham (3.5)).
// +inf when n u ≥ 1 (no bound).
double gamma(long long n, double u = kDoubleUnitRoundoff);

// A bound that is itself evaluated in double with at most `operations` roundings
// of nonnegative terms is too small by at most a factor 1/(1 + γ_operations);
// multiplying by this factor makes the computed bound a true bound (Higham Lemma 3.3).
double bound_evaluation_factor(long long operations);

// Coarser evaluation factors kept where a bound's printed value is part of a
// committed output (changing it would change those bytes). Each is ≥ the
// bound_evaluation_factor of its evaluation over the whole supported range:
//
// forward_error_bound (model/forward_error.cpp): at most m(3d + 2k + 24) roundings
// of nonnegative terms per entry (products and sums of d and k terms, expm1 and
// the softmax chain counted as two each); for d, k ≤ 1024 and m ≤ 64 that is
// ≤ 3.3·10⁵ roundings, γ ≤ 3.7·10⁻¹¹ < 10⁻⁹.
constexpr double kForwardBoundEvaluationFactor = 1.0 + 1e-9;
// The SQ family's parameter and total bounds (hardness/sq_family.cpp): at most
// m + 8 roundings per term (expm1 counted as two) plus the m-term sum, for
// m ≤ 63: (2m + 8)u < 1.5·10⁻¹⁴ < 2⁻⁴⁰.
constexpr double kSqBoundEvaluationFactor = 1.0 + 0x1p-40;

// ---- Stage 6: least squares for W (proofs/w_least_squares.md, "Fast against reference")
//
// Householder QR (with or without column pivoting) of an N × n design D in double
// returns the exact least-squares solution of a perturbed problem with
// ‖ΔD e_j‖ ≤ γ̃ ‖D e_j‖, ‖Δy‖ ≤ γ̃ ‖y‖, γ̃ = γ_{c N n}, c = 16 (Higham Thm 19.4 /
// 20.3, whose constant c is "a small integer"; 16 covers the reflector's
// construction and application counted in Lemma 19.2–19.3). Hence ‖ΔD‖₂ ≤ ε‖D‖₂
// with ε = √n γ̃, and Wedin's bound (Higham Thm 20.1) gives, for κ = κ₂(D), κ ε < 1,
//   ‖x̂ − x‖ / ‖x‖ ≤ κ ε / (1 − κ ε) · (2 + (κ + 1) ‖r‖ / (‖D‖₂ ‖x‖)),
// with r = y − D x the exact residual. Returns that relative bound (per output
// column); +inf when κ ε ≥ 1.
double qr_least_squares_relative_bound(double kappa, long long rows, long long cols, double residual_ratio);

// The reference path solves the normal equations (DᵀD) x = Dᵀy by Gauss–Jordan
// at p bits. Forming DᵀD and Dᵀy (γ_N each) and eliminating (γ_{3n}, Higham
// Thm 9.3 with growth ≤ 2 for a positive definite matrix under partial pivoting
// — bounded here by the Gram matrix's diagonal) give a relative error below
//   κ(DᵀD) · (γ_N + γ_{3n}) · 4 = κ² (γ_N + γ_{3n}) · 4   at u = 2^−p.
// The answer is exact when the inputs are rationals (Gauss–Jordan in GMP rationals).
double normal_equations_relative_bound(double kappa, long long rows, long long cols, unsigned bits);

// ---- Stage 2: one row's certification (proofs/certification.md, "Fast against reference")
//
// The fast path solves (B Bᵀ) v = B y by LDLᵀ in double (B: k × d). Forming
// G = B Bᵀ and g = B y costs ‖ΔG‖_F ≤ γ_d ‖B‖_F², ‖Δg‖ ≤ γ_d ‖B‖_F ‖y‖; LDLᵀ of a
// positive definite G is backward stable with ‖ΔG‖_F ≤ γ_{3k+1} ‖B‖_F²
// (Higham Thm 10.3–10.5: |ΔG| ≤ γ_{3k+1}|L||D||Lᵀ| and ‖|L||D||Lᵀ|‖_F ≤ tr G).
// With s = σ_min(B)² (the reference's), E = (γ_d + γ_{3k+1}) ‖B‖_F² < s:
//   ‖v̂ − v*‖ ≤ (E ‖v*‖ + γ_d ‖B‖_F ‖y‖) / (s − E).
// +inf when E ≥ s.
double certification_solution_bound(double b_frobenius, double sigma_min_b, double y_norm, double v_norm, int k, int d);

// The residual ρ̂ = ‖y − v̂ᵀB‖ evaluated in double differs from the exact residual
// ρ* at v* by at most  t = ‖B‖_F Δv  (moving v̂ to v*)  +  e = γ_{k+1}(‖y‖ + (‖v*‖ + Δv)‖B‖_F)
// (each entry of y − v̂ᵀB is a k-term dot product and a subtraction)  +  γ_{d+1}(ρ* + t + e)
// (the norm of d entries), with Δv any bound on ‖v̂ − v*‖.
double certification_residual_bound(double b_frobenius, double y_norm, double v_norm, double residual, double v_error,
                                    int k, int d);

// ---- The MPFR reference's own error relative to the quantity's size
//
// A reference computed at p bits by an algorithm with at most `depth` rounding
// steps along any path, each relative (error ≤ γ_depth at u = 2^−p), is exact to
// a relative γ_depth(2^−p): with p ≥ 128 and depth ≤ 10⁶ this is below 10^−32, far
// under every double bound it is compared against. Returns γ_depth(2^−p).
double reference_relative_error(unsigned bits, long long depth);


// ---- Property tests
//
// Tolerances of the rewritten property tests (issue 15, item 3). Each is
// self-contained (γ_n is evaluated locally as n u / (1 − n u), u = 2⁻⁵³) and
// already multiplied by the factor that covers its own evaluation in double.

// Two floating-point sums of the same n computed terms t̂_1..t̂_n, summed in
// any two orders, differ by at most 2 γ_{n−1} Σ|t̂_j|: each is within
// γ_{n−1} Σ|t̂_j| of the exact sum of the t̂_j (Higham (4.4)). Permuting the
// heads of the fast forward pass leaves every per-head product ŵ ẑ bitwise
// unchanged and reorders only the m k terms of each output entry, whose
// absolute sum is at most (1 + γ_{d+k+3}) Σ_i max_b (|X||W_i|)[b,c]
// (|ẑ| ≤ (1 + γ_d)|X||W|, Σ_b ŵ_b ≤ (1 + u)/(1 − γ_k), one rounded product).
// `abs_z_sum` is that Σ_i max_b (|X||W_i|)[b,c] evaluated in double (d + m
// roundings of nonnegative terms: one more factor 1 + γ_{d+m}).
// Derivation: proofs/permutation_symmetries.md, "Floating-point statement tested".
// +inf when (m k + 2d + m + k + 8) u ≥ 1.
double head_reorder_bound(int m, int k, int d, double abs_z_sum);

// |½‖F̂ − Y‖² − ½‖F − Y‖²| for a computed F̂ with |F̂ − F| ≤ B entrywise, the
// left loss evaluated in double from F̂ and the right one exact:
// ½‖F̂−Y‖² − ½‖F−Y‖² = ⟨E, F̂ − Y⟩ − ½‖E‖² with E = F̂ − F, so the difference is
// at most Σ B|F̂ − Y| + ½ Σ B²; evaluating ½‖F̂ − Y‖² (n = k d subtractions,
// squares and a sum) adds γ_{n+2} · ½‖F̂ − Y‖². Arguments: `b_dot_r` = Σ B|F̂ − Y|,
// `b_sq` = Σ B², `loss` = the double loss, `entries` = k d.
// Derivation: proofs/squared_loss_gradient.md, "The loss against the fast forward pass".
double squared_loss_from_forward_bound(double b_dot_r, double b_sq, double loss, long long entries);

// Rounding of the ℓ1 distance of two softmaxes of k entries computed in MPFR
// at `bits` bits: each entry has relative error ≤ (k + 4)·2^−bits (k − 1
// exponentials and additions, one division, one subtraction of the maximum),
// the two vectors sum to 1, so the computed distance is within 2(k + 4)·2^−bits
// of the exact one, and the final k-term sum adds k·2^−bits·(its size ≤ 2).
// Returned in units of 2^−bits (the caller scales it in MPFR: at the bits the
// property uses, 2^−bits is below double's range).
// Derivation: proofs/margin_stability.md, "Check".
double mpfr_softmax_l1_rounding_units(int k);

// Least squares min ‖T x − y‖ by Householder QR (Eigen's ColPivHouseholderQR)
// in double, for every column of a right-hand side Y (n × c), T n × d of full
// column rank, κ = κ₂(T). Higham Thm 20.3: the computed x̂ solves exactly a
// problem with column-wise perturbations ≤ γ_{16 n d} (the "small integer"
// taken as 16), so ‖ΔT‖₂ ≤ ε‖T‖₂ with ε = √d γ_{16 n d}; Wedin's bound
// (Higham Thm 20.1) per column, then summed in squares:
//   ‖X̂ − X*‖_F ≤ κε/(1 − κε) · (2‖X*‖_F + (κ + 1)‖R*‖_F / ‖T‖₂),
// R* = Y − T X*. The arguments may be upper bounds of ‖X*‖_F, ‖R*‖_F and κ
// and a lower bound of ‖T‖₂. +inf when κε ≥ 1. Computed as ‖X*‖_F times
// qr_least_squares_relative_bound (the per-column bound, summed by Minkowski's
// inequality). Used by proofs/margin_stability.md, "refine_wsum on a case".
double least_squares_fit_bound(double kappa, long long rows, long long cols, double x_fro, double r_fro,
                               double t_norm2);

// Singular values of an n × d matrix T (n ≥ d) computed in double by Eigen's
// JacobiSVD (QR preconditioning, then two-sided Jacobi sweeps): the algorithm
// is backward stable, the computed σ̂_i being exact for T + ΔT with
// ‖ΔT‖₂ ≤ p u ‖T‖₂, and Weyl's inequality gives |σ̂_i − σ_i| ≤ ‖ΔT‖₂
// (Golub & Van Loan, 4th ed., Cor. 8.6.2 and §8.6.3; Higham §19.3 for the QR
// step). We take p = 16 n d for the QR step plus 16 d² for each of at most
// 30 sweeps, a generous count of the rotations' roundings. Returns the absolute
// bound relative to σ_max: |σ̂_i − σ_i| ≤ (returned) · σ̂_max.
double jacobi_singular_value_bound(long long rows, long long cols);

}  // namespace mha::tolerance
