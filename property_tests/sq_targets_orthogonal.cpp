// Claim (proofs/sq_family.md, Lemma 3): the centred targets
//   g_S = F_S[0, q_out] − c·x_{0,p} = (x_{1,p} − x_{0,p})·χ_S(x_0 ⊙ x_1)
// of the members S ⊂ [d] \ {p}, |S| = m, satisfy E[g_S g_T] = 0 for S ≠ T
// and E[g_S²] = 2 under the uniform distribution on {±1}^{2×d}, exactly.
// Checked by enumerating all 2^{2d} inputs, with g_S taken from the exact
// forward pass of each member (d ≤ 5) and from the closed form (d ≤ 7).
#include "property.hpp"
#include "sq_generators.hpp"

using namespace mha;

TEST_CASE("the centred targets are orthogonal with norm² 2", "[property][hardness]") {
  mha::test::property("exact Gram of all members from their exact forward passes (d ≤ 5)", 25, [] {
    const SqFamilyParams params = mha::test::draw_sq_params(5, 3);
    const SqBuildResult built = build_sq_family(params);
    RC_ASSERT(built.ok);
    const SqGram g = sq_target_gram(built.family, 1 << 20, true);
    RC_ASSERT(g.targets > 0);
    RC_ASSERT(g.orthogonal);
    RC_ASSERT(g.norms_two);
    RC_ASSERT(g.max_abs_offdiag_sum == 0);
    RC_ASSERT(g.min_diag_sum == 2 * g.inputs);
  });
  mha::test::property("exact Gram of up to 40 members from the closed form (d ≤ 7)", 15, [] {
    const SqFamilyParams params = mha::test::draw_sq_params(7, 4);
    const SqBuildResult built = build_sq_family(params);
    RC_ASSERT(built.ok);
    const SqGram g = sq_target_gram(built.family, 40, false);
    RC_ASSERT(g.orthogonal);
    RC_ASSERT(g.norms_two);
  });
}
