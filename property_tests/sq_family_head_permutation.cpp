// Claim (proofs/sq_family.md, Corollary 4; proofs/permutation_symmetries.md):
// the family is invariant under permuting its heads. Permuting q_0..q_m
// permutes the exact solution w the same way (the solution is unique), the
// exact layer is the same function (checked exactly on random inputs), the
// exported instance's heads are permuted bit for bit, and its fast forward
// pass changes only by summation order (within twice forward_error_bound).
// Test of the tester: a builder that sorts q first (so permuting q does not
// permute w) is rejected.
#include "model/inputs.hpp"
#include "model/forward_error.hpp"
#include "model/forward_fast.hpp"
#include "property.hpp"
#include "sq_generators.hpp"

#include <algorithm>
#include <functional>

using namespace mha;

namespace {

using SqBuilder = std::function<SqBuildResult(const SqFamilyParams&)>;

// Mistake: the builder puts q in ascending order first (a canonical form), so head i no longer has q_i.
SqBuildResult build_sq_family_sorted_q(SqFamilyParams params) {
  std::sort(params.q.begin(), params.q.end());
  return build_sq_family(params);
}

auto sq_permutation_invariant(const SqBuilder& build) {
  return [build] {
    const SqFamilyParams params = mha::test::draw_sq_params(16, 5);
    const int heads = params.m + 1;
    std::vector<int> perm(heads);
    for (int i = 0; i < heads; ++i) perm[i] = i;
    for (int i = heads - 1; i > 0; --i) std::swap(perm[i], perm[*rc::gen::inRange(0, i + 1)]);
    SqFamilyParams permuted = params;
    for (int i = 0; i < heads; ++i) permuted.q[i] = params.q[perm[i]];
    const SqBuildResult a = build(params), b = build(permuted);
    RC_ASSERT(a.ok);
    RC_ASSERT(b.ok);
    for (int i = 0; i < heads; ++i) RC_ASSERT(b.family.w[i] == a.family.w[perm[i]]);
    RC_ASSERT(a.family.c == b.family.c);
    const Instance ia = sq_export_instance(a.family), ib = sq_export_instance(b.family);
    for (int i = 0; i < heads; ++i) {
      RC_ASSERT(ib.layer.heads[i].theta == ia.layer.heads[perm[i]].theta);
      RC_ASSERT(ib.layer.heads[i].w == ia.layer.heads[perm[i]].w);
    }
    const InputBatch batch = draw_inputs(*rc::gen::arbitrary<uint64_t>(), Stream::test_inputs, InputKind::boolean, 2, params.d, 0, 8, 1);
    const FastForwardResult fa = FastForward(ia.layer).run(batch, 1), fb = FastForward(ib.layer).run(batch, 1);
    RC_ASSERT(fa.status.ok() && fb.status.ok());
    const std::vector<double>& ya = fa.y;
    const std::vector<double>& yb = fb.y;
    for (int64_t n = 0; n < batch.count; ++n) {
      const MatD x = batch.sample(n);
      RC_ASSERT(sq_forward_exact(a.family, x) == sq_forward_exact(b.family, x));
      const MatD b2 = 2.0 * forward_error_bound(ia.layer, x);
      for (int e = 0; e < 2 * params.d; ++e) RC_ASSERT(std::abs(ya[n * 2 * params.d + e] - yb[n * 2 * params.d + e]) <= b2.data()[e]);
    }
  };
}

}  // namespace

TEST_CASE("the SQ family is invariant under head permutations", "[property][hardness][symmetry]") {
  mha::test::property("permuting q permutes w exactly and leaves F_S unchanged", 60,
                      sq_permutation_invariant([](const SqFamilyParams& p) { return build_sq_family(p); }));
}

TEST_CASE("test of the tester: SQ head permutation rejects a builder that sorts q",
          "[property][hardness][symmetry][tester]") {
  mha::test::property_rejects("builder sorting q", 4, sq_permutation_invariant(build_sq_family_sorted_q));
}
