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
#include "data/enumerate.hpp"
#include "data/inputs.hpp"
#include "property.hpp"
#include "sq_generators.hpp"

using namespace mha;

namespace {
void check_inputs(const SqFamily& f, bool enumerate, uint64_t seed) {
  const int d = f.params.d;
  const int64_t count = enumerate ? (int64_t{1} << (2 * d)) : 64;
  const InputBatch batch = enumerate ? InputBatch{} : draw_inputs(seed, Stream::test_inputs, InputKind::boolean, 2, d, 0, count, 1);
  for (int64_t n = 0; n < count; ++n) {
    const MatD x = enumerate ? boolean_input<double>(static_cast<uint64_t>(n), 2, d) : batch.sample(n);
    const Mat<Rational> exact = sq_forward_exact(f, x);
    RC_ASSERT(exact == sq_closed_form(f, x));
    for (int a = 0; a < 2; ++a)
      for (int c = 0; c < d; ++c)
        if (c != f.params.q_out) RC_ASSERT(exact(a, c) == 0);
  }
}
}  // namespace

TEST_CASE("the SQ family equals its closed form exactly", "[property][hardness]") {
  mha::test::property("F_S = c·x_p + (x'_p − x_p)·χ_S on every input (enumerated, d ≤ 5)", 40, [] {
    const SqFamilyParams params = mha::test::draw_sq_params(5, 3);
    const SqBuildResult built = build_sq_family(params);
    RC_ASSERT(built.ok);
    RC_ASSERT(built.family.c == 2);
    RC_ASSERT(sq_weights_solve_system(params.q, built.family.w));
    check_inputs(built.family, true, 0);
  });
  mha::test::property("F_S = closed form on sampled inputs (d ≤ 40, m ≤ 6, q possibly < 1)", 40, [] {
    const SqFamilyParams params =
        mha::test::draw_sq_params(40, 6, {mha::test::SqQKind::default_q, mha::test::SqQKind::at_least_one, mha::test::SqQKind::any_positive});
    const SqBuildResult built = build_sq_family(params);
    RC_PRE(built.ok);   // q < 1 can hit a singular system (e.g. q, 1/q and 1 together)
    RC_ASSERT(built.family.c == 2);
    check_inputs(built.family, false, *rc::gen::arbitrary<uint64_t>());
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
