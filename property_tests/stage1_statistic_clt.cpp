// Claim: the fast path's stage-1 statistic is an unbiased Monte Carlo estimate
// of the population value E[(1/k) Xᵀ J F(X)] = Σ_i M(Θ_i) W_i, which the
// enumerator computes exactly (MPFR). By the CLT each entry of the mean of N
// samples lies within z standard errors of it; with z = 5 the chance that one
// of ≤ 36 entries strays is < 2.1e-5 per case. Proof: proofs/stage1_identities.md.
// Seeds are fixed, so the outcome is reproducible.
#include "data/population.hpp"
#include "generators.hpp"
#include "property.hpp"
#include "stages/stage1_wsum.hpp"

using namespace mha;

TEST_CASE("enumerated mean of the stage-1 statistic matches Monte Carlo", "[property][population][stage1]") {
  mha::test::property("|W_hat - population| <= 5 SE entrywise, k*d <= 12", 12, [] {
    const int d = *rc::gen::inRange(2, 7).as("d");
    const int k = *rc::gen::inRange(1, std::min(d, 12 / d) + 1).as("k");
    mha::test::LayerCase c;
    c.shape = {k, d, *rc::gen::inRange(1, 4).as("m")};
    c.scale = *rc::gen::inRange(1, 8).as("scale");
    c.seed = *rc::gen::arbitrary<uint64_t>().as("seed");
    Instance inst;
    inst.layer = mha::test::make_layer(c);
    inst.k = k;
    const MatD population = population_stage1_mpfr(inst.layer, k, 200);
    const SampleOracle oracle(inst, c.seed);
    const Stage1Result r = stage1_estimate_wsum(oracle, {40000, 1});
    const MatD z = (r.w_hat - population).cwiseAbs().cwiseQuotient(r.standard_error.cwiseMax(1e-300));
    RC_TAG(k, d);
    RC_ASSERT(z.maxCoeff() <= 5.0);
  });
}
