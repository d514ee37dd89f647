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

// u of IEEE binary64 with round to nearest: the one definition of 2⁻⁵³ (this
// header includes nothing, so every other header can use it without a cycle).
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
// The SQ family's parameter and total bounds (hardness/sq_family.cpp and
// hardness/sq_verify.cpp): at most
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

// ---- Stage 3: the large-margin selection (proofs/margin_stability.md, "The selection on two paths")
//
// The fast path computes the logits of a row as fl(fl(X P) Xᵀ) (two products of
// d-term dot products): each logit is within γ_{2d} (|x_a||P||x_b|ᵀ) of the exact
// one (Higham (3.13) twice, γ_d + γ_d(1 + γ_d) ≤ γ_{2d}). The margin
// μ = ℓ_(1) − ℓ_(2) (largest minus second largest) is 1-Lipschitz in each of the two
// order statistics, so it moves by at most twice the largest logit error, and the
// subtraction adds u|μ̂|. With M = max_b |x_a||P||x_b|ᵀ (evaluated in double from
// |x| and |P|: 2d roundings of nonnegative terms) and μ the reference margin:
//   |μ̂ − μ| ≤ (2γ_{2d} M + u(|μ| + 2γ_{2d} M)) · bound_evaluation_factor(2d + 6).
// A reference margin within this (plus the reference's own error) of the
// threshold makes the event's keep/drop decision *undecided*.
double logit_margin_bound(double abs_logit_max, double margin, int d);

// ---- Stages 2 and 4: the sculpted body on two paths (proofs/certification.md, "The body on two paths")
//
// A slab's centre b = ln(v_j / v_a) from a v̂ with ‖v̂ − v*‖ ≤ Δv (certification_
// solution_bound), evaluated in double as log(v̂_j / v̂_a), against the reference
// b* = ln(v*_j / v*_a): ln is 1/w-Lipschitz on [w − Δv, ∞), the division adds a
// relative u (|ln(1 + δ)| ≤ γ_1), the log one ulp (2u|b̂|, |b̂| ≤ |b*| + L):
//   L = Δv/(v*_j − Δv) + Δv/(v*_a − Δv),
//   |b̂ − b*| ≤ ((L + γ_1)(1 + 2u) + 2u|b*| + u|b*|) · bound_evaluation_factor(12)
// (the last u|b*|: the reference's centre rounded to double). +inf when Δv ≥ min(v*_j, v*_a).
double slab_centre_difference_bound(double v_j, double v_a, double centre, double v_error);

// A slab's half-width η = g(v_j, δ) + g(v_a, δ), g(w, δ) = log1p(δ/(w − δ)) = −ln(1 − δ/w),
// from (v̂, δ̂) with ‖v̂ − v*‖ ≤ Δv, |δ̂ − δ*| ≤ Δδ, against the reference η*: by the
// mean value theorem over w ∈ [w* − Δv, w* + Δv], δ ∈ [δ* − Δδ, δ* + Δδ], with
// w₋ = w* − Δv, δ₊ = δ* + Δδ, ∂g/∂δ = 1/(w − δ) and |∂g/∂w| = δ/(w(w − δ)):
//   |g(ŵ, δ̂) − g(w*, δ*)| ≤ Δδ/(w₋ − δ₊) + Δv δ₊/(w₋(w₋ − δ₊));
// the double evaluation of each term (a subtraction and a division inside log1p,
// γ_2 of its argument z ≤ δ₊/(w₋ − δ₊), log1p's ulp 2u g) and the sum (u η) add
//   Σ_w (γ_2 z_w + 2u g(w₋, δ₊)) + u η* (+ u η* for the reference rounded to double).
// Returns the total times bound_evaluation_factor(24); +inf when w₋ ≤ δ₊ for either w.
double slab_width_difference_bound(double v_j, double v_a, double delta, double eta, double v_error,
                                   double delta_error);

// A slab's normal a = vec(x_aᵀ(x_j − x_a)) in double, fl(x_a[r] · fl(x_j[c] − x_a[c])), against the
// reference's correctly rounded a*: |â − a| ≤ γ_2|a|, |a* − a| ≤ u|a|, so
// ‖â − a*‖₁ ≤ (γ_2 + u)(1 + u)‖a*‖₁ ≤ γ_3 ‖a*‖₁. Returns γ_3 ‖a*‖₁ · bound_evaluation_factor(n + 1)
// (‖a*‖₁ summed in double over n entries).
double slab_normal_difference_bound(double a_l1, long long n);

// Membership of a point θ in one slab, |⟨a, θ⟩ − b| − η ≤ 0: the fast body evaluates
// fl(|fl(⟨â, θ⟩ − b̂)| − η̂) (ConvexBody::max_violation: an n-term dot product and a
// subtraction, γ_{n+1}(Σ|â_c θ_c| + |b̂|), then u of |r̂| + η̂), on data that differ from
// the reference's by at most Δb, Δη and ‖Δa‖₁ (the three bounds above; ⟨Δa, θ⟩ ≤ ‖Δa‖₁‖θ‖_∞).
// The band outside which the reference's sign of |⟨a*, θ⟩ − b*| − η* decides the fast one:
//   (γ_{n+2}(S + |b|) + u(S + |b| + η) + Δb + Δη + ‖Δa‖₁‖θ‖_∞) · bound_evaluation_factor(n + 8),
// S = Σ|a_c θ_c| (reference data; the fast data differ by the Δ's: γ_{n+2} instead of γ_{n+1}
// covers that second-order term while the Δ's are below u(S + |b|)).
double slab_membership_band(double abs_dot, double abs_centre, double eta, long long n, double centre_error,
                            double width_error, double normal_error_l1, double theta_max);

// The ball ‖θ‖ ≤ R evaluated as fl(‖θ‖) − R (Eigen's norm: n squares summed, a square root, γ_{n+1};
// the subtraction u): the band is (γ_{n+1}‖θ‖ + u(‖θ‖ + R)) · bound_evaluation_factor(n + 4).
double ball_membership_band(double theta_norm, double radius, long long n);

// An LP optimum over two bodies whose slab data differ (max ⟨v, θ⟩ over P = slabs ∩ box):
// for any multipliers y, U(y) = Σ_r (y_r b_r + |y_r| η_r) + R‖v − Aᵀy‖₁ bounds the optimum
// of its body from above (weak duality, z = v − Aᵀy absorbed by the box), and moving the
// data changes U(y) by at most shift(y) = Σ_r |y_r| (Δb_r + Δη_r + R‖Δa_r‖₁). With each
// body's certified bracket [lower, upper] (gap = upper − lower, the computed value inside
// it) and its dual y, OPT_f ≤ U_f(y_r) ≤ upper_r + shift(y_r) and symmetrically, so
//   |value_f − value_r| ≤ gap_f + gap_r + max(shift(y_f), shift(y_r)).
// One dual alone bounds only one side (the optimum is concave in the right-hand side:
// its supergradient at one body says nothing about the other side). Returns that bound
// times bound_evaluation_factor(4) (the shifts are evaluated upward by the caller).
double lp_value_difference_bound(double gap_fast, double gap_reference, double shift_fast, double shift_reference);

// ---- Stage 5: the span on two paths (proofs/span_by_widths.md, "The span on two paths")
//
// The fast path (ConvexBody::least_squares_centre) forms the weighted constraint
// matrix M (N × n) and c in double — w = 1/max(η, φ) with φ computed within γ_{n+3},
// one division, one product: |M̂ − M| ≤ γ_{n+5}|M| and |ĉ − c| ≤ γ_{n+5}|c| entrywise —
// factors M̂ = QR by Householder QR (exact for M̂ + ΔM₁ with ‖ΔM₁‖_F ≤ γ_{16Nn}‖M̂‖_F,
// Higham Thm 19.4, the "small integer" taken as 16 as in qr_least_squares_relative_bound)
// and R by BDCSVD (Householder bidiagonalisation from both sides, then divide and
// conquer: backward stable, ‖ΔR‖_F ≤ γ_{16n²}‖R‖_F, Golub & Van Loan 4th ed. §8.6.3,
// Gu & Eisenstat 1995). Its singular values and vectors are therefore exactly those
// of M + E, up to the computed vectors' departure from orthonormality (≤ γ_{16n²} per
// inner product), with
//   ‖E‖₂ ≤ ‖E‖_F ≤ ε_M = (γ_{n+5} + γ_{16Nn} + γ_{16n²}) ‖M‖_F.
// Returns ε_M / ‖M‖_F, times the factor of its own evaluation. Weyl's inequality then
// gives |ŝ_j − s_j| ≤ ε_M for every singular value.
double svd_backward_error(long long rows, long long cols);

// The same for the streamed centre (ConvexBody::CentreMethod::streamed, at large n;
// geometry/convex_body_centre_streamed.cpp), `free` = p inverse-iteration vectors:
//   M̂, ĉ         as above, γ_{n+5} entrywise;
//   [M̂ | ĉ] → R̂  blocks of b ≤ N rows folded into the (n+1)×(n+1) triangle by
//                Householder reflectors of at most b + 1 nonzeros; a column meets at
//                most (n+1)⌈N/b⌉ of them, so by Higham Lemma 19.3 (and §19.5: the
//                compact WY application is as stable, with another small constant)
//                R̂ is exact for [M̂ + ΔM | ĉ + Δc], column by column
//                ‖Δm_j‖ ≤ (n+1)⌈N/b⌉γ̃_{b+1}‖m_j‖ ≤ γ_{64(n+1)N}‖m_j‖ (⌈N/b⌉(b+1) ≤ 4N for
//                1 ≤ b ≤ N; the small integer 16 as above);
//   R̂ → B        Householder bidiagonalisation from both sides: γ_{16n²}‖R‖_F, as BDCSVD's;
//   B → ŝ_j      the eigenvalues of the Golub–Kahan tridiagonal T (‖T‖_F = √2‖B‖_F) by
//                Eigen's implicit symmetric QR: at most 30·2n steps (else the method is
//                not used), each rotating any row of T at most twice, so ≤ 120n rotations
//                of γ̃_1 each (Higham Lemma 19.8, constant 16): ‖ΔT‖_F ≤ γ_{1920n}√2‖B‖_F;
//   the free basis  each vector accepted with its singular-pair residual ≤ ρ‖B‖₂,
//                ρ = max(kInverseIterationResidual = 2⁻⁴⁰, the largest residual achieved,
//                ConvexBody::Centre::free_basis_residual): an exact singular vector of B + E_i,
//                ‖E_i‖ ≤ ρ‖B‖; orthonormal, so the subspace's sin θ is at most √p times the
//                largest vector's (the Frobenius norm of (I − P)V_F), i.e. as if ‖E‖ were
//                √p·ρ‖B‖ in Wedin's bound;
//   x0           least squares over the computed complement of the free basis: p reflectors
//                applied to R̂ (γ_{16np}), Householder QR of the n × (n − p) result
//                (γ_{16n²}), the triangular solve (γ_n, Higham Thm 8.5): x̂0 is the exact
//                minimiser over that complement for M + E with E within these terms —
//                the situation hull_point_bound assumes;
// so ε_M = (γ_{n+5} + γ_{64(n+1)N} + 2γ_{16n²} + 2γ_{1920n} + √p·ρ + γ_{16np} + γ_n)‖M‖_F
// (‖B‖, ‖R‖ ≤ ‖M‖_F(1 + γ)). Returns ε_M/‖M‖_F times the factor of its own evaluation;
// `residual` is the centre's free_basis_residual.
double streamed_svd_backward_error(long long rows, long long cols, long long free, double residual);
// The streamed centre accepts an inverse-iteration vector as soon as its
// singular-pair residual is at most this times the bidiagonal's largest entry.
constexpr double kInverseIterationResidual = 0x1p-40;
// Otherwise, after all its iterations, it accepts the vector of the smallest
// residual when that is at most this, and ρ above is that residual. Not a
// tolerance of any check (ε_M carries whatever residual is accepted): the point
// beyond which the dense method is tried instead. Rounding's floor sits above 2⁻⁴⁰
// on square systems (1.1·10⁻¹² at d = 32, N = n: docs/bench/memory.md); the limit
// is a choice, half the digits.
constexpr double kInverseIterationStallLimit = 0x1p-26;

// Wedin's sin θ theorem (Stewart & Sun, Matrix Perturbation Theory, Thm V.4.4):
// the right singular subspaces of the p smallest singular values of M and of
// M + E, ‖E‖₂ ≤ ε, are at largest principal angle θ with
//   sin θ ≤ ε / (s_{p+1} − s_p − ε)
// when the gap s_{p+1} − s_p (ascending, of M: the reference's values) exceeds ε
// (Weyl: the perturbed s̃_{p+1} ≥ s_{p+1} − ε ≥ s_p + δ with δ = s_{p+1} − s_p − ε);
// the computed vectors' departure from orthonormality adds √p·γ_{16n²}. The same
// bound holds for the complementary subspaces (the n − p largest). Returns it, times
// the factor of its own evaluation; +inf when the gap is ≤ ε (not separated at this
// accuracy: the subspace is not determined by the matrix, and no comparison can
// be made).
double singular_subspace_sin_bound(double eps, double gap, long long p, long long cols);

// The hull point x0 = argmin { ‖M x − c‖ : x ∈ span of the K largest right singular
// vectors } (the fast path's truncated SVD) of M + E and ĉ against that of M and c.
// With V_c, Ṽ_c the two kept subspaces at largest angle θ (sin θ ≤ sin_kept from
// singular_subspace_sin_bound with p = n − K), write Ṽ_c = V_c C + V_f S (‖S‖ = sin θ,
// C invertible with ‖C⁻¹‖ = 1/cos θ): (M + E)Ṽ_c = (M V_c + F C⁻¹)C with
// ‖F‖ ≤ s_drop sin θ + ε (s_drop the largest dropped singular value: ‖M V_f‖ = s_drop),
// so with w = C z the perturbed problem is the least-squares problem of D = M V_c
// (κ = s_max/s_K) with ‖ΔD‖ ≤ (s_drop sin θ + ε)/cos θ and Δc; Wedin's bound
// (least_squares_perturbation_bound) and ‖D⁺‖‖Δc‖ give Δw, and x̃0 − x0 =
// (Ṽ_c C⁻¹ − V_c) w̃ + V_c(w̃ − w) with ‖Ṽ_c C⁻¹ − V_c‖ = ‖V_f S C⁻¹‖ = tan θ:
//   ‖x̂0 − x0‖ ≤ tan θ (‖x0‖ + Δw) + Δw + √n γ_{16n²}(‖x0‖ + Δw) + γ_{16Nn+2n} √K ‖c‖/(s_K − ε),
// the last two terms for the computed vectors' orthonormality and for evaluating
// x0 = Σ_j (û_jᵀQ̂ᵀĉ/ŝ_j) v̂_j in double. Arguments: ε = ε_M, the reference's s_max,
// s_K (smallest kept), s_drop, sin_kept, ‖x0‖, ‖M x0 − c‖, ‖c‖, N, n, K. Returns the
// bound times the factor of its own evaluation; +inf when sin_kept ≥ 1 or the
// perturbed problem may lose rank.
double hull_point_bound(double eps, double s_max, double s_kept, double s_drop, double sin_kept, double x0_norm,
                        double residual_norm, double c_norm, long long rows, long long cols, long long kept);

// ---- Stage 5's reference (span_reference) at u = 2^−bits: its own errors (stages/stage5/check.cpp)
//
// The reference forms G = MᵀM of the N × n matrix M in MPFR (each entry an N-term sum:
// γ_N(u)‖M‖_F² in all) and takes G's eigenvalues by the symmetric eigensolver (backward
// error γ_{16n²}(u)‖G‖_F, as BDCSVD's above): every eigenvalue λ_j = s_j² is within
// δλ = (γ_N(u) + γ_{16n²}(u))‖M‖_F² (Weyl), so every singular value within √δλ
// (|√a − √b| ≤ √|a − b|). Returns √δλ.
double span_reference_value_error(long long rows, long long cols, unsigned bits, double frobenius);
// The reference's free subspace (eigenvectors of its p smallest eigenvalues) by
// Davis–Kahan on the same G: sin θ ≤ δλ' / (λ_p − λ_{p−1}) with δλ' = (γ_n(u) +
// γ_{16n²}(u))‖M‖_F² (the eigensolver's backward error; the n-term rows of G), λ = s².
// Returns it; +inf without an eigenvalue gap (s_p ≤ s_{p−1}).
double span_reference_angle_error(long long cols, unsigned bits, double frobenius, double s_p, double s_p_minus_1);
// The reference's hull point x0 (least squares over the kept values, κ = s_max/s_kept):
// its relative error is at most γ_{N+16n²}(u)κ² (the normal equations' κ² amplification
// of the formation and eigensolver errors above). Returns that times ‖x0‖.
double span_reference_point_error(long long rows, long long cols, unsigned bits, double kappa, double x0_norm);
// The rank threshold t = s_max·n·ε (n = cols, ε = 2⁻⁵²) the reference computes at its own
// s_max and rounds to double: with s_max within `value_error` of the exact one, the exact
// threshold is within n·ε·value_error of the reference's, and the rounding adds u·t.
// Returns n·ε·value_error + u·t (NaN when an argument is: the callers' decisions
// treat NaN as undecided).
double rank_threshold_error(long long cols, double value_error, double threshold);

// ---- Stage 3: the minimum-norm point on two paths (proofs/convex_body_programs.md,
// "The minimum-norm point on two paths")
//
// The fast path (geometry/min_norm_active_set.hpp) ends with θ̂ = J₁R⁻ᵀe, the
// minimum-norm solution of its q active equalities C θ = e (C = RᵀJ₁ᵀ, q × n, full
// row rank), from a QR factorisation kept by `rotations` Givens rotations: the
// factors are exact for C + ΔC with ‖ΔC‖_F ≤ γ_{16·rotations}‖C‖_F (Higham Lemma 19.9,
// the "small integer" 16 as elsewhere), the triangular solve and the product with
// J₁ add γ_{2q} (Higham Thm 8.5 and (3.13)): ε = γ_{16·rotations + 2q}. For a
// consistent underdetermined system the minimum-norm solution moves by at most
//   ‖θ̂ − θ*‖ ≤ κε/(1 − κε) · 3‖θ*‖,   κ = κ₂(C)
// (Higham Thm 21.1: ‖Δθ‖ ≤ ‖C⁺‖(‖Δe‖ + ‖ΔC‖‖θ‖) + ‖C⁺‖‖ΔC‖‖θ‖ to first order, with
// ‖Δe‖ ≤ ε‖e‖ ≤ ε‖C‖‖θ‖). When the active set is the true one at the optimum, θ*
// is the minimum-norm point of the slabs. Returns the bound times the factor of
// its own evaluation (θ_norm: an upper bound of ‖θ*‖); +inf when κε ≥ 1.
double min_norm_solution_bound(double kappa, long long rotations, long long active, double theta_norm);

// ---- Stage 6: the net's objective on two paths (proofs/w_least_squares.md, "The net on two paths")
//
// Wedin's bound (Higham Thm 20.1) for a given relative perturbation ε = ‖ΔD‖₂/‖D‖₂ of the
// design, per output column and summed in squares: the least-squares solutions of D and
// D + ΔD differ by at most
//   κε/(1 − κε) · (2‖X*‖_F + (κ + 1)‖R*‖_F / ‖D‖₂),
// κ = κ₂(D), X* and R* = Y − D X* the exact solution and residual; the arguments may be
// upper bounds (κ, ‖X*‖_F, ‖R*‖_F) and a lower bound (‖D‖₂). +inf when κε ≥ 1.
double least_squares_perturbation_bound(double kappa, double eps, double x_fro, double r_fro, double d_norm2);

// A design row A X evaluated in double from an attention row with relative error ≤ ε_A
// (double_softmax_relative_error): |fl(Â X) − A X| ≤ (ε_A + γ_k(1 + ε_A)) (A|X|) entrywise
// (Higham (3.13) for the k-term products). Returns (1 + ε_A)(1 + γ_k) − 1, the factor of A|X|,
// times bound_evaluation_factor(4).
double design_entry_relative_error(double softmax_relative_error, int k);

// The relative validation error E = ‖R‖_F²/‖Y‖_F² evaluated in double from a residual R̂
// with ‖R̂ − R*‖_F ≤ δ (R* exact, ρ = ‖R*‖_F), M entries: the sum of squares adds γ_M, the
// computed ‖Y‖² γ_M, the division u, so Ê lies in
//   [max(0, ρ − δ)²(1 − γ_M)/(‖Y‖²(1 + γ_M))·(1 − u),  (ρ + δ)²(1 + γ_M)/(‖Y‖²(1 − γ_M))·(1 + u)].
// Returns the distance of E* = ρ²/‖Y‖² to the upper end, expanded so that no subtraction
// of nearly equal numbers occurs, times bound_evaluation_factor(16); it is never less than
// the distance to the lower end (compared term by term at the definition).
double objective_from_residual_bound(double residual_norm, double residual_error, double label_norm2,
                                     long long entries);

// ---- Used by the library and by the tests (the tolerances and accuracy targets
// that only tests use live beside them: tests/support/test_tolerances.hpp)

// Singular values of an n × d matrix T (n ≥ d) computed in double by Eigen's
// JacobiSVD (QR preconditioning, then two-sided Jacobi sweeps): the algorithm
// is backward stable, the computed σ̂_i being exact for T + ΔT with
// ‖ΔT‖₂ ≤ p u ‖T‖₂, and Weyl's inequality gives |σ̂_i − σ_i| ≤ ‖ΔT‖₂
// (Golub & Van Loan, 4th ed., Cor. 8.6.2 and §8.6.3; Higham §19.3 for the QR
// step). We take p = 16 n d for the QR step plus 16 d² for each of at most
// 30 sweeps, a generous count of the rotations' roundings. Returns the absolute
// bound relative to σ_max: |σ̂_i − σ_i| ≤ (returned) · σ̂_max.
double jacobi_singular_value_bound(long long rows, long long cols);

// A softmax row evaluated in double as exp(ℓ̂_b − max ℓ̂) / Σ, from logits ℓ̂ each
// within `logit_error` of the exact ℓ (e.g. γ_{2d}|x||Θ||x|ᵀ for x Θ xᵀ, Higham
// (3.13)), `span` = max ℓ̂ − min ℓ̂: subtracting the maximum adds u(span + 2D) to
// each exponent, so each is off by at most E = 2D + u(span + 2D); exp (one ulp,
// counted as two roundings), the k-term sum and the division give
// |att_b − softmax(ℓ)_b| ≤ ((1 + expm1(2E))(1 + γ_{k+5}) − 1) softmax(ℓ)_b.
// Returns that relative bound (absolute too, as softmax(ℓ)_b ≤ 1).
double double_softmax_relative_error(double logit_error, double span, int k);

// Polishing's matrix-free products J·v and Jᵀ·R (stages/polish/operator.hpp)
// against the MPFR Jacobian (property_tests/polish_operator.cpp;
// proofs/attention_jacobian.md, "Matrix-free products"): at first order the
// double product is within γ_n (1 + 4Λ) times its majorant, with n the
// roundings along one entry's longest chain (3d + 2k + 8 + m for J·v,
// 2d + 3k + 10 + N for Jᵀ·R over N samples) and Λ the largest |logit| bound
// max_{a,l} |x_a||Θ_i||x_l|ᵀ (the attention weights' rounding, as in the
// double-vs-MPFR Jacobian check).
double polish_operator_relative(long long roundings, double logit_bound);

// ---- Polishing: one iteration on two paths (proofs/attention_jacobian.md,
// "polish.cpp's gradient on two paths"; check_polish_iteration)

// attention_jacobian<double> against the exact Jacobian, entrywise, at first
// order (proofs/attention_jacobian.md, "Tolerance of the check", second
// assertion): each g entry is a nested sum of at most n = 2d + 2k + 8 rounded
// operations over terms bounded by A_l(|V_lc| + ȳabs_c)|x_l[q]|, and the
// attention weights carry the logits' rounding γ_{2d}Λ, a relative (1 + 4Λ)
// factor, Λ = max_l |x_a||Θ_i||x_l|ᵀ. Returns γ_n(u)(1 + 4Λ), the factor of the
// majorant M_J[(a,c),(i,p,q)] = |x_a[p]| Σ_l A_l(|X||W_i| + ȳabs)_{lc}|x_l[q]|
// (at u = 2⁻ᵖ the same bound holds for the MPFR Jacobian).
double attention_jacobian_relative(int k, int d, double logit_bound, double u = kDoubleUnitRoundoff);

// Two orthogonal projections onto the ranges of D and D + E, both of full
// column rank, ‖E‖₂ ≤ e < σ_min(D): for subspaces of equal dimension
// ‖P' − P‖₂ = ‖(I − P)P'‖₂ (Golub & Van Loan, 4th ed., Thm 2.5.1), and
// (I − P)P' = (I − P)(D + E)(D + E)⁺ = (I − P)E(D + E)⁺, so
// ‖P' − P‖₂ ≤ e/σ_min(D + E) ≤ e/(σ_min(D) − e) (Weyl) — Wedin's sin θ theorem
// for the whole column space. Returns that, times the factor of its own
// evaluation; +inf when e ≥ σ_min(D).
double projection_distance(double design_error, double sigma_min);

// The projection Q̂Q̂ᵀ that polishing forms from Householder QR of its double
// design D̂ (R × n; unpivoted, Q̂ formed explicitly), against the projection
// P_D onto range(D), D the exact design with ‖D̂ − D‖_F ≤ e: Higham Thm 19.4
// gives an orthonormal Q with range(Q) = range(D̂ + ΔD), ‖ΔD‖_F ≤ γ̃‖D̂‖_F and,
// for the explicitly formed factor (§19.3 after the theorem), ‖Q̂ − Q‖_F ≤ ε_Q =
// √n γ̃, γ̃ = γ_{16Rn} (the "small integer" c = 16 as in
// qr_least_squares_relative_bound). So ‖Q̂Q̂ᵀ − QQᵀ‖₂ ≤ 2ε_Q + ε_Q² and, with
// ‖E‖₂ ≤ e + γ̃(‖D‖_F + e), projection_distance gives the rest. Returns
//   π = 2ε_Q + ε_Q² + projection_distance(e + γ̃(‖D‖_F + e), σ_min(D)),
// times the factor of its own evaluation; +inf when σ_min(D) ≤ ‖E‖ bound.
double householder_projection_distance(long long rows, long long cols, double design_error, double design_frobenius,
                                       double sigma_min);

// The rounding of applying that projection in double, relative to ‖Ĵ‖_F‖r̂‖_F
// (polish.cpp: the dense model forms fl(Ĵ_c − Q̂ fl(Q̂ᵀĴ_c)) per output column
// c, the matrix-free one fl(r̂ − Q̂ fl(Q̂ᵀ r̂)); either way each entry is within
// γ_{R+n+1}(|v| + |Q̂||Q̂|ᵀ|v|), Higham (3.13) twice and a subtraction, and
// ‖|Q̂||Q̂|ᵀ|v|‖ ≤ ‖Q̂‖_F²‖v‖ ≤ n(1 + γ̃)²‖v‖), plus the dense model's final
// R·d-term products fl((P̂⊥Ĵ)ᵀ r̂): γ_{Rd}‖P̂⊥‖₂‖Ĵ‖_F‖r̂‖ with
// ‖P̂⊥‖₂ ≤ 1 + 2ε_Q + ε_Q² (counted for both models). Returns
//   γ_{R+n+1}(1 + n(1 + γ̃)²) + γ_{R·out_cols}(1 + 2ε_Q + ε_Q²),
// times the factor of its own evaluation (rows R, cols n, out_cols d).
double householder_projection_rounding(long long rows, long long cols, long long out_cols);

// ‖P̂⊥r̂ − P⊥r‖ for a residual r̂ within ‖r̂ − r‖ ≤ b and a projection within
// ‖P̂ − P‖₂ ≤ π of P = P_D: P̂⊥r̂ − P⊥r = P̂⊥(r̂ − r) + (P̂⊥ − P⊥)r and
// ‖P̂⊥‖₂ ≤ 1 + π, so the bound is (1 + π)b + π‖r‖, times the factor of its own
// evaluation.
double projected_residual_error(double residual_frobenius, double residual_error, double projection);

// The MPFR reference's projection r − D c, c = (DᵀD)⁻¹Dᵀr by Gauss–Jordan at p
// bits (solve_w_stack_reference): c is within normal_equations_relative_bound
// (κ ≤ ‖D‖_F/σ_min) of the exact least-squares solution, column by column, and
// fl(r − D c) adds γ_{n+1}(2⁻ᵖ)(‖r‖ + ‖D‖_F‖c‖) (Higham (3.13)). Returns
// ‖D‖_F·‖Δc‖_F + that, times the factor of its own evaluation.
double normal_equations_projection_error(unsigned bits, long long rows, long long cols, double design_frobenius,
                                         double sigma_min, double solution_frobenius, double residual_frobenius);

// ‖ĝ − g‖₂ for the Kaufman gradient g = Jᵀ P⊥ r computed as ĝ = fl(Ĵᵀ ŝ),
// ŝ ≈ P⊥r (proofs/attention_jacobian.md, "polish.cpp's gradient on two paths"):
//   ĝ − g = (Ĵ − J)ᵀŝ [+ the products' rounding] + Jᵀ(ŝ − P⊥r),
// with |Ĵ − J| ≤ ρ_J M_J entrywise (attention_jacobian_relative, or
// polish_operator_relative for the matrix-free Jᵀ·R) and ‖ŝ − P⊥r‖ ≤ e_s
// (projected_residual_error, plus the projection's rounding
// `projection_rounding`·‖Ĵ‖_F‖r̂‖_F). Arguments: jacobian_term =
// ‖Σ_{n,i} ρ_J,n,i M_J,n,iᵀ|P⊥r_n|‖₂, ρ_max = max ρ_J, ‖J‖_F, ‖M_J‖_F, ‖r‖_F,
// e_s. Returns
//   jacobian_term + (ρ_max‖M_J‖_F + ‖J‖_F) e_s + projection_rounding (1 + ρ_max)‖M_J‖_F(‖r‖_F + e_s),
// times the factor of its own evaluation (first order in the Jacobian's ρ_J,
// whose (1 + 4Λ) is a first-order amplification).
double polish_gradient_bound(double jacobian_term, double jacobian_relative_max, double jacobian_frobenius,
                             double majorant_frobenius, double residual_frobenius, double projected_residual_error,
                             double projection_rounding);

// ---- Label noise (proofs/certification.md, "Label noise"; proofs/label_noise.md)

// Upper tail of the χ² distribution (Laurent & Massart 2000, Lemma 1): for
// Z ~ χ²_n and t ≥ 0, P(Z ≥ n + 2√(n t) + 2t) ≤ e^{−t}. Returns that quantile
// bound q_n(t), times the factor of its own evaluation.
double chi_square_tail_quantile(long long n, double t);

// The certification lemma with noisy labels ỹ = F(X) + e (proofs/certification.md,
// "Label noise"): a bound ν on ‖e_a‖, the noise of one label row (d entries),
// holding with probability ≥ 1 − failure_probability when sample n's k×d labels
// carry Gaussian noise of relative size ε (data/noisy_source.hpp: σ_n =
// ε·‖y_n‖_F/√(kd), y_n the exact labels). From the noisy labels' norm ‖ỹ_n‖_F:
// with t = ln(2/failure_probability), on the event ‖g_n‖² ≤ q_{kd}(t) the exact
// norm is ‖y_n‖ ≤ ‖ỹ_n‖ + σ_n‖g_n‖, so σ_n ≤ ε‖ỹ_n‖/(√(kd) − ε√q_{kd}); on the
// event ‖g_{n,a}‖² ≤ q_d(t), ‖e_a‖ = σ_n‖g_{n,a}‖; the two events fail with
// probability ≤ 2e^{−t} = failure_probability:
//   ν = ε‖ỹ_n‖√q_d(t) / (√(kd) − ε√q_{kd}(t)),
// times the factor of its own evaluation (24 roundings: the subtraction, whose
// operands are ≥ 2:1 apart, at most triples the relative error of the ~8
// roundings of ε√q_{kd}). +inf when ε√q_{kd} > √(kd)/2 (noise too large for a
// row to be certified; the half keeps the subtraction's rounding relative). 0
// when ε = 0.
double label_noise_row_bound(double relative, double sample_label_norm, int k, int d, double failure_probability);

// Labels stored as float32 (rounded to nearest from the exact labels): each entry
// is within 2⁻²⁴|y| + 2⁻¹⁵⁰ of the exact value (relative half-ulp; the absolute
// term covers float32's subnormal range), hence within (2⁻²⁴|ŷ| + 2⁻¹⁵⁰)/(1 − 2⁻²⁴)
// of the stored ŷ, and a row of d entries within (2⁻²⁴‖ŷ_a‖ + √d·2⁻¹⁵⁰)/(1 − 2⁻²⁴).
// Returns that bound, times the factor of its own evaluation. Deterministic: no
// failure probability.
double float32_label_rounding_row_bound(double row_norm, int d);

// The rounding level of a held-out residual (proofs/label_noise.md, "Rounding
// level"): the relative rms Σ‖F̂(X) − ỹ‖²/Σ‖ỹ‖² that rounding alone can produce
// when the labels were computed by a double forward pass of a layer whose
// forward_error_bound is (to first order) that of F̂ and stored in double: per
// entry |fl(F̂) − F̂| ≤ B and |ỹ − F| ≤ B + u|ỹ|, so the residual of the exact fit
// is at most 2B + u|ỹ|. Given Σ(2B + u|ỹ|)² and Σỹ² over the held-out entries,
// returns √ of their ratio times the factor of its own evaluation.
double residual_rounding_level(double rounding_sq_sum, double label_sq_sum);

// A noiseless fit's residual against rounding measured at the fit
// (stages/polish/polish.cpp measured_rounding: the double forward pass against MPFR,
// counted twice — the fit's evaluation and the labels' — and the layer's
// response to its parameters moved by ±u, what storing them in double costs):
// the training residual's noise estimate (√(cost·n/(n − p))) of a noiseless fit
// over that measurement, measured 0.99 at (12,2,2) (tests/stages/test_polish.cpp,
// dense), 1.11 at (12,2,2) (matrix-free), 1.12–1.18 at (16,2,2) (tests/golden, learn)
// and 1.00 at (8,2,2) (tests/learn/test_noise.cpp; values printed with -s).
// A residual above 8 times the measured rounding is called noise; 8 leaves a
// factor ≥ 5.7 over the measured noiseless floors. A claim about rounding's
// typical size, not a bound: tolerance::residual_rounding_level is the a priori
// bound (about 3000 times larger at (16,2,2)), above which a residual is
// certainly not rounding.
double rounding_floor_factor();

// The statistical tolerance of a noise estimate: σ̂² = Σr²/(n − p) of a linear
// least-squares fit with p parameters on n residual entries with iid Gaussian
// noise σ is σ²χ²_{n−p}/(n − p), relative standard deviation √(2/(n − p)); with
// per-sample noise levels (data/noisy_source.hpp) the weights add the factor
// max_ratio as in label_noise_power_band. Returns six of those standard
// deviations, for σ̂²/σ² − 1 (+inf when entries ≤ parameters). A statistical
// tolerance, not a rounding one.
double noise_estimate_band(long long entries, long long parameters, double max_ratio);


// ---- The iterative centre (i51: the slabs by their structure; proofs/iterative_centre.md)
//
// ConvexBody::CentreMethod::iterative (geometry/iterative_centre.hpp) ends its LOBPCG
// once every free Ritz pair's residual ‖A v − λ v‖ (A = MᵀM) is at most
// kIterativeCentreResidual·λ_max (2⁻⁵⁰: about rounding's level in the products, so
// the free basis is as accurate as the products allow; the stall rule below ends it
// where rounding stops it first), and its conjugate gradients once the projected
// normal residual is at most that times (λ_max‖x‖ + ‖PMᵀc‖). Algorithm parameters,
// not tolerances of a check: the check takes whatever residual was reached (ρ below).
constexpr double kIterativeCentreResidual = 0x1p-50;
// When rounding stops the residual above that (no halving in 60 iterations), the
// pairs are still used when their residual is at most this; otherwise the streamed
// method computes the centre. A choice, as kInverseIterationStallLimit.
constexpr double kIterativeCentreStallLimit = 0x1p-30;
// The gap rule's values (and the free ones before their second pass) to a residual
// of this times their own eigenvalue λ̂_j = ŝ_j², so each ŝ_j to about 2⁻⁹ of itself:
// they sit at the edge of the bulk, close together, converge slowly, and decide only
// which ratio is largest (ratios ≥ 10 against ≈ 1), with the check's band from their
// own residual (Centre::value_residual).
constexpr double kIterativeCentreValueResidual = 0x1p-8;

// The Ritz pairs' residual bound. The fast path returns V̂ (n × k, orthonormal to
// γ_{16nk}: Householder Q times a symmetric eigensolver's vectors) and Λ̂, and
// ρ ≥ ‖fl(Â V̂) − V̂Λ̂‖_F/‖M‖_F² (Centre::free_basis_residual). Every entry of a
// product Â x = Mᵀ(M x) is Σ_r u_rp w_r² (u_rᵀ Θ v_r) v_rq: a 2d-term dot product,
// four products and an N-term sum (in blocks, still N − 1 additions per entry), so
// |fl(Â x) − Â x| ≤ γ_{N+2d+5}|M|ᵀ|M||x| and ‖·‖ ≤ γ_{N+2d+5}‖M‖_F²‖x‖; forming
// AV̂ − V̂Λ̂ adds 3u per entry; the weights w = 1/max(η, φ) carry γ_{n+5} (as the
// dense method's), so ‖Â − A‖₂ ≤ (2γ_{n+5} + γ_{n+5}²)‖M‖_F²; the orthonormalised V̂
// moves the residual by at most √k·γ_{16nk}‖A‖. So for the exact A and the
// orthonormalised V̂ (the same subspace), with V̂ᵀAV̂'s eigenvalues as Λ̂:
//   ‖A V̂ − V̂Λ̂‖_F ≤ (ρ + √k(γ_{N+2d+8} + γ_{16nk}) + 3γ_{n+5})‖M‖_F².
// Returns that, times the factor of its own evaluation. Kahan's theorem then puts k
// eigenvalues of A within it of the λ̂_j (the reference check pairs them by index),
// and Davis–Kahan's sin θ theorem bounds the free basis's angle by it over the gap
// λ_p − λ̂_{p−1} to the rest of A's spectrum.
double iterative_eigen_residual_bound(double rho, long long rows, int d, long long cols, long long k, double frobenius);

// The hull point's backward error: x̂0 ⊥ F̂ with projected normal residual
// g = P(Mᵀc − A x̂0) and residual r = M x̂0 − c is the exact minimiser over F̂'s
// complement for M + E, E = −r rᵀ M P/‖r‖² (Stewart 1977: (M + E)ᵀ(c − (M + E)x̂0) ∝
// PMᵀr − PMᵀr = 0), ‖E‖₂ = ‖g‖/‖r‖. With ρ ≥ ‖ĝ‖/(‖r̂‖‖M‖_F), the evaluation of g
// (γ_{N+2d+8}(‖M‖_F‖c‖ + ‖M‖_F²‖x̂0‖), as above), ‖r̂‖ ≥ ‖r*‖ (the least-squares
// minimum over the complement is at most any point's residual: `residual_min` may be
// the reference's) and the weights' γ_{n+5}:
//   ε = (ρ + γ_{n+5})‖M‖_F + γ_{N+2d+8}(‖M‖_F‖c‖ + ‖M‖_F²‖x̂0‖)/‖r*‖.
// Returns ε times the factor of its own evaluation (+inf when residual_min = 0):
// hull_point_bound's ε for this method.
double iterative_point_backward_error(double rho, long long rows, int d, long long cols, double frobenius,
                                      double c_norm, double x_norm, double residual_min);

// ---- Stage 5 by membership queries (the paper variant; stages/stage5/span_membership.hpp,
// proofs/span_by_membership.md)

// The separation oracle decides "slab r violated at θ" by the double value
// e = fl(|fl(⟨a_r, θ⟩) − b_r|) − η_r (then compared with its tolerance t_r). The dot
// product of n terms is within γ_n Σ_c |a_rc θ_c| of ⟨a_r, θ⟩ (Higham (3.5)), the
// subtraction of b_r adds u(|⟨a_r, θ⟩| + γ_n S + |b_r|) ≤ u(S(1 + γ_n) + |b_r|), and
// the subtraction of η_r u(|e| + η_r); with S = Σ_c |a_rc θ_c| the double e is within
//   γ_{n+2}(S + |b_r|) + u·η_r
// of the exact excess |⟨a_r, θ⟩ − b_r| − η_r. Returns it, times the factor of its own
// evaluation. The reference accepts an optimiser as a point the oracle passed when the
// exact excess (in MPFR) is at most t_r plus this.
double membership_excess_evaluation_error(long long n, double abs_dot, double b, double eta);

// One linear optimum OPT = max_P ⟨v, θ⟩ computed twice. The reference (the full LP over
// every slab, ConvexBody::maximise) returns v_r and a certified bracket L_r ≤ OPT ≤ U_r
// containing v_r, so e_r = max(U_r − v_r, v_r − L_r) (Lemma 3.2.5). The fast path
// (cutting planes through the oracle) returns a point x_f, v_f = ⟨v, x_f⟩, and a dual y_f
// over its cuts; a dual of a subset of the slabs is a dual of all of them (zero
// elsewhere), so OPT ≤ U_f = U(y_f) (Lemma 3.2.5). Let x_r ≥ 0 be x_f's excesses over
// the slabs: x_f lies in P widened by them, whose optimum is at most U(y) + Σ_r |y_r| x_r
// for every y; with the reference's y, v_f ≤ U_r + P_f, P_f = Σ_r |y_r| x_r. Then
//   v_f − v_r ≤ (U_r − v_r) + P_f ≤ e_r + P_f,
//   v_r − v_f ≤ (v_r − L_r) + (L_r − v_f) ≤ e_r + (U_f − v_f)   (L_r ≤ OPT ≤ U_f),
// so |v_f − v_r| ≤ e_r + P_f + (U_f − v_f)₊. Arguments: gap_fast = U_f − v_f,
// penalty = P_f, reference_error = e_r, computed rigorously or in MPFR by the caller.
// Returns the bound, times the factor of its own evaluation. (That the fast certificate
// itself is valid, L_r ≤ U_f, is checked separately.)
double optimum_two_paths_bound(double gap_fast, double penalty, double reference_error);

// The hull point read off the optimisers' differences, x̂0 = p − Û Ûᵀ p (Û the fast
// path's m − 1 left singular vectors, orthonormal to working precision), against
// x0 = p − U Uᵀ p (the reference's): ‖ÛÛᵀ − UUᵀ‖₂ = sin θ (the largest principal angle;
// Stewart & Sun Thm I.5.5), so ‖x̂0 − x0‖ ≤ sin θ·‖p‖ with sin θ ≤ sin_bound, plus the
// double evaluation of p − Û(Ûᵀp): 2n(m − 1) + 1 roundings per entry, within
// γ_{2n(m−1)+1}·(1 + (m − 1))‖p‖ (Higham (3.5), ‖Û‖₂ ≤ 1 + γ). Returns the sum, times the
// factor of its own evaluation.
double membership_hull_point_bound(double sin_bound, double point_norm, long long n, long long free);

// ---- Polishing's samples (a fit its held-out samples contradict; docs/bench/polish.md)
//
// A least-squares fit at its optimum, p parameters on n training entries with noise σ,
// leaves held-out entries with E[r²] = σ²(1 + p/n) (the fixed-design prediction error;
// Hastie, Tibshirani & Friedman, ESL §7.4, eq. 7.22 summed over the design). Its training
// estimate σ̂² = cost·n/(n − p) (PolishReport::noise_train²) lies within σ²(1 ± b_n),
// b_n = noise_estimate_band(n, p, 4), and the held-out mean square over n_v entries within
// (1 ± b_v)·E[r²], b_v = noise_estimate_band(n_v, 0, 4) (six standard deviations each).
// σ is at least the rounding level a noiseless fit stops at (PolishReport::rounding_level).
// Returns the largest held-out relative rms residual such a fit leaves:
//   max(noise_train, rounding_level)·√((1 + p/n)(1 + b_v)/(1 − b_n)),
// +inf when b_n ≥ 1 or an argument is not finite. A held-out residual above it says the
// fit is under-determined by its training samples: a statistical decision, not a bound.
double heldout_residual_limit(double noise_train, double rounding_level, long long entries, long long parameters,
                              long long heldout_entries);

}  // namespace mha::tolerance
