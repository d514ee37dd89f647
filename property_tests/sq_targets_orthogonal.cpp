// Claim (proofs/sq_family.md, Lemma 3): the centred targets
//   g_S = F_S[0, q_out] − c·x_{0,p} = (x_{1,p} − x_{0,p})·χ_S(x_0 ⊙ x_1)
// of the members S ⊂ [d] \ {p}, |S| = m, satisfy E[g_S g_T] = 0 for S ≠ T
// and E[g_S²] = 2 under the uniform distribution on {±1}^{2×d}, exactly.
// Checked by enumerating all 2^{2d} inputs, with g_S taken from the exact
// forward pass of each member (d ≤ 5) and from the closed form (d ≤ 7).
// Test of the tester: a Gram of targets that are not centred (g_S = F_S[0, q_out])
// is rejected.
#include "property.hpp"
#include "sq_generators.hpp"

#include <functional>

using namespace mha;

namespace {

using TargetGram = std::function<SqGram(const SqFamily&, int, bool)>;

// Mistake: the targets not centred, g_T = F_T[0, q_out] (c·x_{0,p} not subtracted: c taken as 0).
SqGram gram_of_uncentred_targets(const SqFamily& family, int count, bool from_layer) {
  SqFamily uncentred = family;
  uncentred.c = Rational(0);
  return sq_target_gram(uncentred, count, from_layer);
}

auto gram_from_layers(const TargetGram& gram) {
  return [gram] {
    const SqFamilyParams params = mha::test::draw_sq_params(5, 3);
    const SqBuildResult built = build_sq_family(params);
    RC_ASSERT(built.ok);
    const SqGram g = gram(built.family, 1 << 20, true);
    RC_ASSERT(g.targets > 0);
    RC_ASSERT(g.orthogonal);
    RC_ASSERT(g.norms_two);
    RC_ASSERT(g.max_abs_offdiag_sum == 0);
    RC_ASSERT(g.min_diag_sum == 2 * g.inputs);
  };
}

}  // namespace

TEST_CASE("the centred targets are orthogonal with norm² 2", "[property][hardness]") {
  mha::test::property("exact Gram of all members from their exact forward passes (d ≤ 5)", 25,
                      gram_from_layers([](const SqFamily& f, int count, bool from_layer) {
                        return sq_target_gram(f, count, from_layer);
                      }));
  mha::test::property("exact Gram of up to 40 members from the closed form (d ≤ 7)", 15, [] {
    const SqFamilyParams params = mha::test::draw_sq_params(7, 4);
    const SqBuildResult built = build_sq_family(params);
    RC_ASSERT(built.ok);
    const SqGram g = sq_target_gram(built.family, 40, false);
    RC_ASSERT(g.orthogonal);
    RC_ASSERT(g.norms_two);
  });
}

TEST_CASE("test of the tester: orthogonality rejects targets that are not centred", "[property][hardness][tester]") {
  mha::test::property_rejects("Gram of F_S[0, q_out] without c x_{0,p} subtracted", 4,
                              gram_from_layers(gram_of_uncentred_targets));
}
