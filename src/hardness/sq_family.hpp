// The SQ-hard family of MATH.md §4, in exact rationals (k = 2 tokens).
//
// Parameters: dimension d, m ≥ 1, distinct positive rationals q_0..q_m (one
// head each), coordinates p ≠ q_out and S ⊂ [d] \ {p} with |S| = m (all
// indices 0-based). Head i has
//     Θ_i = θ_i · diag(1_S),  θ_i = −ln(q_i)/2,       W_i = w_i e_p e_{q_out}ᵀ,
// where w solves, exactly, A w = b with A[s][i] = q_i^s/(1 + q_i^s) and
// b_s = (−1)^s (s = 0..m). Then, for every X ∈ {±1}^{2×d}, exactly
//     F_S(X)[a, q_out] = c·x_{a,p} + (x_{a',p} − x_{a,p})·χ_S(x_0 ⊙ x_1)
// (a' the other row, c = Σ w_i = 2) and every other entry is 0.
// Statement, proof, the SQ bound and the tolerances: proofs/sq_family.md.
//
// Exactness contract (fplll-style):
//   build_sq_family     @proved  exact rational elimination, then A w == b is
//                                re-checked exactly; a singular system is an
//                                explicit error, never a wrong w.
//   sq_forward_exact    @proved  exact rational softmax of the integer-valued
//                                logits (in units of ln(q_i)/2) of ±1 inputs.
//   sq_export_instance  @fast    doubles: θ_i and w_i rounded to nearest; the
//                                exact data travel in Instance::extensions_json.
//   sq_verify           @proved  exact comparison with the closed form, and
//                                derived bounds for the double / MPFR passes.
#pragma once

#include "model/layer.hpp"
#include "numeric/multiprecision.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace mha {

struct SqFamilyParams {
  int d = 0;
  int m = 0;                  // |S|; the layer has m + 1 heads
  int p = 0;                  // input coordinate carried to the output
  int q_out = 1;              // the only nonzero output column
  std::vector<int> subset;    // S, sorted ascending
  std::vector<Rational> q;    // q_0..q_m
};

// Default subset: {0..m−1}, each index ≥ p shifted up by one (so p ∉ S).
std::vector<int> sq_default_subset(int d, int m, int p);
// Chebyshev nodes in ln q on [0, ln(m+1)]:
//   q_i = exp(ln(m+1)·(1 − cos(iπ/m))/2), rounded to the nearest multiple of
//   1/16 (1/64, 1/256, ... if two nodes would coincide), q_0 = 1, q_m = m + 1.
std::vector<Rational> sq_chebyshev_q(int m);
// Default q (docs/hardness.md): for m ≤ 8 the nodes in [1, m + 1] that
// minimise Σ|w_i| (the "optimized" rows of `mhalearn hard --study`, frozen
// here so that the default never depends on the optimiser or the CPU); for
// m > 8 sq_chebyshev_q. Same logit range and smallest attention weight as
// q_i = i + 1.
std::vector<Rational> sq_default_q(int m);

// "" or a one-line description of the first problem (m ≥ 1, d ≥ m + 1,
// 0 ≤ p, q_out < d, p ≠ q_out, S: m distinct sorted indices in [0, d) without
// p, q: m + 1 distinct positive rationals). d ≤ 1024 and m ≤ 63 (instance limits).
std::string validate_sq_params(const SqFamilyParams& params);

// "3", "-7/4", "1.25" (exact decimal) → rational. False on anything else,
// including a zero denominator.
bool parse_rational(const std::string& text, Rational& out);
std::string rational_to_string(const Rational& r);
// Nearest double (Boost's conversion of gmp_rational).
double rational_to_double(const Rational& r);
// Exact value of a finite MPFR number (x = z·2^e).
Rational mpfr_to_rational(const Mpfr& x);

struct SqFamily {
  SqFamilyParams params;
  Mat<Rational> system;       // A, (m+1)×(m+1): A(s, i) = q_i^s / (1 + q_i^s)
  std::vector<Rational> w;    // solution of A w = b
  Rational c;                 // Σ_i w_i
};

struct SqBuildResult {
  bool ok = false;
  std::string error;          // one line when !ok (invalid parameters or a singular system)
  SqFamily family;
};

SqBuildResult build_sq_family(const SqFamilyParams& params);
// The same family (same q, w) with another subset S (w does not depend on S).
SqFamily sq_with_subset(const SqFamily& family, std::vector<int> subset);

// Independent check, from q alone: Σ_i w_i q_i^s/(1+q_i^s) == (−1)^s for s = 0..m.
bool sq_weights_solve_system(const std::vector<Rational>& q, const std::vector<Rational>& w);

// F_S(X) (k×d) in exact rationals for X with entries ±1 (any k ≥ 1): the
// logits X Θ_i Xᵀ are integers n_ab times ln(q_i)/2, so each softmax entry
// is q_i^{e}/Σ q_i^{e'} with integer exponents. Throws std::invalid_argument
// for an entry other than ±1 or a shape mismatch.
Mat<Rational> sq_forward_exact(const SqFamily& family, const MatD& x);
// The closed form of MATH.md §4 for k = 2 (integers, since c = 2).
Mat<Rational> sq_closed_form(const SqFamily& family, const MatD& x);
// The centred target g_S(X) = (x_{1,p} − x_{0,p})·χ_S(x_0 ⊙ x_1) ∈ {0, ±2}.
int sq_centred_target(const SqFamilyParams& params, const std::vector<int>& subset, const MatD& x);

// θ_i = −ln(q_i)/2 at `bits` of MPFR precision (q_i rounded once, then a
// correctly rounded log), with a rigorous bound on |θ̃_i − θ_i|.
struct NegHalfLog {
  Mpfr value;
  Mpfr error_bound;
};
NegHalfLog sq_neg_half_log(const Rational& q, unsigned bits);

// The exported instance: k = 2, Boolean inputs, Θ_i = fl(θ_i)·diag(1_S)
// (θ_i computed at 256 bits, rounded to nearest), W_i = fl(w_i) e_p e_qᵀ, and
// extensions_json = {"sq_family": {...exact data...}} (docs/hardness.md).
// provenance_json is left to the caller.
Instance sq_export_instance(const SqFamily& family);
constexpr unsigned kSqStoredLogBits = 256;

// The family's layer at the current MPFR precision P (caller holds a
// ScopedPrecision): θ̃_i = sq_neg_half_log(q_i, P), w̃_i = w_i rounded to P bits.
LayerT<Mpfr> sq_layer_mpfr(const SqFamily& family);

// A bound E with |F_L(X) − F_S(X)| ≤ E entrywise for every ±1 input X, where
// F_L is the exact-arithmetic forward pass of a layer L with the family's
// structure and parameters (θ̂_i, ŵ_i) that differ from (θ_i, w_i) by at most
// (dθ_i, |ŵ_i − w_i|): E = Σ_i (e^{2m·dθ_i} − 1)|ŵ_i| + |ŵ_i − w_i|.
// (proofs/sq_family.md §5.)
double sq_parameter_error_bound(int m, const std::vector<double>& d_theta, const std::vector<double>& w_abs,
                                const std::vector<double>& d_w);
// E for the exported double layer (θ̂, ŵ read back from `exported`, which must
// have the family's structure: "" or an error line in `error`).
double sq_exported_parameter_error(const SqFamily& family, const Layer& exported, std::string& error);
// E for sq_layer_mpfr at `bits` of precision.
double sq_mpfr_parameter_error(const SqFamily& family, unsigned bits);

struct SqVerifyOptions {
  bool enumerate = true;        // all 2^{2d} inputs (requires 2d ≤ kMaxEnumerationBits)
  int64_t samples = 10000;      // otherwise: inputs 0..samples−1 of Philox stream `inputs`
  uint64_t seed = 1;
  int64_t mpfr_checks = 256;    // inputs (evenly spread) also run through both MPFR passes
  unsigned precision = 200;     // MPFR bits
  int threads = 1;              // results do not depend on it
};

// Largest |computed − exact| over the checked entries and the derived bound.
struct SqAgreement {
  int64_t inputs = 0;
  double max_abs_diff = 0;
  double max_bound = 0;
  double max_ratio = 0;         // max over entries of |diff| / bound (0/0 := 0)
  int64_t violations = 0;       // entries with |diff| > bound (exact comparison)
  double parameter_error = 0;   // the E part of the bound
  bool ok() const { return violations == 0; }
};

// Adds one input to `acc`: every entry's |computed − exact| is computed and
// compared with bound(a, c) exactly (computed values are dyadic rationals);
// a non-finite computed value counts as a violation. The verifier of every
// agreement claim of sq_verify; unit-tested on a deliberately wrong value.
void sq_accumulate(SqAgreement& acc, const Mat<Rational>& exact, const double* computed, const MatD& bound);
void sq_accumulate(SqAgreement& acc, const Mat<Rational>& exact, const Mat<Mpfr>& computed, const MatD& bound);

struct SqVerifyReport {
  bool ok = false;              // exact match everywhere and no bound violated
  std::string error;            // structural problem (e.g. exported layer has the wrong shape)
  bool enumerated = false;
  int64_t inputs = 0;
  int64_t exact_mismatches = 0; // inputs where sq_forward_exact != sq_closed_form
  int64_t first_mismatch = -1;  // its index (enumeration index or sample number)
  SqAgreement fast;             // FastForward of the exported double layer
  SqAgreement mpfr_exported;    // MPFR reference of the exported double layer
  SqAgreement mpfr_full;        // MPFR reference of sq_layer_mpfr (full-precision θ, w)
  unsigned precision_bits = 0;  // effective MPFR precision
  double seconds = 0;
};

SqVerifyReport sq_verify(const SqFamily& family, const Layer& exported, const SqVerifyOptions& options);

// Gram matrix of the centred targets g_T = F_T[0, q_out] − c·x_{0,p} over the
// first `count` subsets T ⊂ [d] \ {p}, |T| = m (lexicographic order), by
// enumeration of all 2^{2d} inputs (2d ≤ kMaxEnumerationBits). With
// from_layer, g_T comes from sq_forward_exact of member T; otherwise from
// sq_centred_target (the closed form). Entries are exact: E[g_S g_T] = sum / 2^{2d}.
struct SqGram {
  int targets = 0;
  int64_t pairs = 0;            // unordered pairs including S = T
  bool from_layer = false;
  bool orthogonal = false;      // every off-diagonal sum is exactly 0
  bool norms_two = false;       // every diagonal sum is exactly 2·2^{2d}
  int64_t max_abs_offdiag_sum = 0;
  int64_t min_diag_sum = 0, max_diag_sum = 0;
  int64_t inputs = 0;           // 2^{2d}
};
// `threads` ≤ 0: OpenMP's default. The sums do not depend on it.
SqGram sq_target_gram(const SqFamily& family, int count, bool from_layer, int threads = 0);
// All subsets of [d] \ {p} of size m, lexicographic, at most `limit` of them.
std::vector<std::vector<int>> sq_subsets(int d, int m, int p, int64_t limit);

// The SQ lower bound (proofs/sq_family.md §4) for N = C(d−1, m) members at
// tolerance τ ∈ (0, 1]: one query distinguishes fewer than 1/(4τ²) members,
// i.e. at most H = ⌈1/(4τ²)⌉ − 1; a deterministic SQ learner that reaches
// E‖F̂ − F_S‖_F² < 2 (relative error 1/6) on every member needs
// ⌈(N − 1)/H⌉ queries, a randomized one with success ≥ 2/3 needs
// ⌈(2N/3 − 1)/H⌉; whatever τ, max(queries, 1/τ) > (4(N − 1))^{1/3}.
struct SqBound {
  std::string members;          // N, decimal
  double members_double = 0;
  double tolerance = 0;
  std::string per_query;        // H, decimal
  bool impossible = false;      // H = 0: no query distinguishes any member (τ ≥ 1/2)
  std::string queries_deterministic;  // decimal, or "infinite"
  std::string queries_randomized;
  double queries_deterministic_double = 0, queries_randomized_double = 0;
  double cube_root = 0;         // (4(N − 1))^{1/3}
};
SqBound sq_query_bound(int d, int m, double tolerance);

}  // namespace mha
