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

}  // namespace mha::tolerance
