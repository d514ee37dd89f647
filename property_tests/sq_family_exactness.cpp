// Claim (proofs/sq_family.md, Theorem 1): for every d, m, S ⊂ [d] \ {p},
// p ≠ q_out and distinct positive q_0..q_m for which the (m+1)×(m+1) system is
// nonsingular, the family's layer satisfies, exactly in rationals and for
// every X ∈ {±1}^{2×d},
//   F_S(X)[a, q_out] = c·x_{a,p} + (x_{a',p} − x_{a,p})·χ_S(x_0 ⊙ x_1),  c = Σ w_i = 2,
// and every other entry of F_S(X) is 0. Also (Lemma 2): the system is
// nonsingular for m = 1 and any distinct positive q; for m = 2 it is singular
// exactly when 1 + e1(q) = e2(q) + e3(q) (so never when every q_i ≥ 1, or every
// q_i ≤ 1); for m ≥ 3 with every q_i ≥ 1 nonsingularity is a conjecture,
// checked here on random instances (every build re-checks A w = b exactly anyway).
//
// What is checked on each input: sq_forward_exact (the exact rational softmax)
// equals sq_closed_form; and, independently of both, the family's layer as
// d×d matrices (sq_layer_mpfr: Θ_i = θ_i diag(1_S), W_i = w_i e_p e_{q_out}ᵀ)
// run through the generic MPFR forward pass gives exactly 0 in every entry
// outside column q_out — X W_i has exact zeros there, and so has every A_i X W_i.
// (The former check of zeros in sq_forward_exact's output was vacuous: that
// function writes only column q_out, and the equality above already covers it.)
// Tests of the tester: the q_i of two heads swapped after solving for w, and a
// layer with W_i transposed (w_i e_{q_out} e_pᵀ) are rejected.
#include "data/enumerate.hpp"
#include "model/inputs.hpp"
#include "model/reference.hpp"
#include "numeric/precision.hpp"
#include "property.hpp"
#include "sq_generators.hpp"

#include <algorithm>
#include <functional>

using namespace mha;

namespace {
// The family's layer in MPFR (a mutated copy replaces it in a test of the tester).
using LayerOf = std::function<LayerT<Mpfr>(const SqFamily&)>;
const LayerOf family_layer = [](const SqFamily& f) { return sq_layer_mpfr(f); };

// Every input against the closed form; through the generic MPFR pass, at most
// 16 (enumerated) or 4 (sampled, d ≤ 40) evenly spread ones: the zeros are
// structural, a few inputs exercise them.
void check_inputs(const SqFamily& f, bool enumerate, uint64_t seed, const LayerOf& layer_of) {
  const int d = f.params.d;
  const int64_t count = enumerate ? (int64_t{1} << (2 * d)) : 64;
  const InputBatch batch = enumerate ? InputBatch{} : draw_inputs(seed, Stream::test_inputs, InputKind::boolean, 2, d, 0, count, 1);
  ScopedPrecision precision(64);  // the zeros are exact at any precision
  const LayerT<Mpfr> layer = layer_of(f);
  const int64_t stride = std::max<int64_t>(1, count / (enumerate ? 16 : 4));
  for (int64_t n = 0; n < count; ++n) {
    const MatD x = enumerate ? boolean_input<double>(static_cast<uint64_t>(n), 2, d) : batch.sample(n);
    RC_ASSERT(sq_forward_exact(f, x) == sq_closed_form(f, x));
    if (n % stride != 0) continue;
    const Mat<Mpfr> y = forward_reference<Mpfr>(layer, cast_matrix<Mpfr>(x));
    for (int a = 0; a < 2; ++a)
      for (int c = 0; c < d; ++c)
        if (c != f.params.q_out) RC_ASSERT(y(a, c) == 0);
  }
}

void check_enumerated(const LayerOf& layer_of, const std::function<void(SqFamily&)>& mutate) {
  const SqFamilyParams params = mha::test::draw_sq_params(5, 3);
  const SqBuildResult built = build_sq_family(params);
  RC_ASSERT(built.ok);
  SqFamily family = built.family;
  mutate(family);
  RC_ASSERT(family.c == 2);
  RC_ASSERT(sq_weights_solve_system(params.q, family.w));
  check_inputs(family, true, 0, layer_of);
}
}  // namespace

TEST_CASE("the SQ family equals its closed form exactly", "[property][hardness]") {
  mha::test::property("F_S = c·x_p + (x'_p − x_p)·χ_S on every input (enumerated, d ≤ 5)", 40,
                      [] { check_enumerated(family_layer, [](SqFamily&) {}); });
  mha::test::property("F_S = closed form on sampled inputs (d ≤ 40, m ≤ 6, q possibly < 1)", 40, [] {
    const SqFamilyParams params =
        mha::test::draw_sq_params(40, 6, {mha::test::SqQKind::default_q, mha::test::SqQKind::at_least_one, mha::test::SqQKind::any_positive});
    const SqBuildResult built = build_sq_family(params);
    // q < 1 can hit a singular system (e.g. q, 1/q and 1 together): counted by
    // RapidCheck's discard limit; the drawn kinds make it rare.
    RC_PRE(built.ok);
    RC_ASSERT(built.family.c == 2);
    check_inputs(built.family, false, *rc::gen::arbitrary<uint64_t>(), family_layer);
  });
}

TEST_CASE("test of the tester: the SQ exactness property rejects wrong weights and a transposed W",
          "[property][hardness][tester]") {
  // q_0 and q_1 swapped after solving for w (w still solves the system of the
  // drawn q, c is still 2): the exact forward pass no longer equals the closed form.
  mha::test::property_rejects("q_0 and q_1 swapped after solving", 40, [] {
    check_enumerated(family_layer, [](SqFamily& f) { std::swap(f.params.q[0], f.params.q[1]); });
  });
  // A layer with W_i = w_i e_{q_out} e_pᵀ: output in column p, not q_out.
  mha::test::property_rejects("W_i transposed", 40, [] {
    check_enumerated(
        [](const SqFamily& f) {
          LayerT<Mpfr> layer = sq_layer_mpfr(f);
          for (auto& h : layer.heads) h.w.transposeInPlace();
          return layer;
        },
        [](SqFamily&) {});
  });
}

TEST_CASE("the system is nonsingular where proved, and where conjectured on random q", "[property][hardness]") {
  mha::test::property("m = 1: any two distinct positive q", 100, [] {
    const auto q = mha::test::draw_sq_q(mha::test::SqQKind::any_positive, 1);
    SqFamilyParams p{3, 1, 0, 1, {2}, q};
    RC_ASSERT(build_sq_family(p).ok);
  });
  mha::test::property("m = 2: singular iff 1 + e1(q) = e2(q) + e3(q), also on constructed singular triples", 100, [] {
    auto q = mha::test::draw_sq_q(mha::test::SqQKind::any_positive, 2);
    if (*rc::gen::arbitrary<bool>()) {
      // Solve the criterion for q_2: q_2 = (1 + q_0 + q_1 − q_0 q_1)/(q_0 + q_1 + q_0 q_1 − 1).
      const Rational den = q[0] + q[1] + q[0] * q[1] - 1;
      RC_PRE(den != 0);
      q[2] = (Rational(1) + q[0] + q[1] - q[0] * q[1]) / den;
      RC_PRE(q[2] > 0 && q[2] != q[0] && q[2] != q[1]);
      RC_TAG("constructed singular");
    }
    const Rational e1 = q[0] + q[1] + q[2], e2 = q[0] * q[1] + q[0] * q[2] + q[1] * q[2], e3 = q[0] * q[1] * q[2];
    SqFamilyParams p{4, 2, 0, 1, {1, 2}, q};
    RC_ASSERT(build_sq_family(p).ok == (Rational(1) + e1 != e2 + e3));
  });
  mha::test::property("m = 2 with every q_i ≥ 1 (Lemma 2); m = 3..6 with every q_i ≥ 1 (conjecture)", 100, [] {
    const int m = *rc::gen::inRange(2, 7).as("m");
    const auto q = mha::test::draw_sq_q(mha::test::SqQKind::at_least_one, m);
    SqFamilyParams p;
    p.d = m + 2;
    p.m = m;
    p.p = 0;
    p.q_out = 1;
    p.subset = sq_default_subset(p.d, m, 0);
    p.q = q;
    const SqBuildResult b = build_sq_family(p);
    RC_ASSERT(b.ok);
    RC_ASSERT(sq_weights_solve_system(q, b.family.w));
  });
}
