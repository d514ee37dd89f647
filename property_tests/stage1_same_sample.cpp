// Stage 1's same-sample check (proofs/stage1_identities.md, "The same-sample
// check"): the fast statistic and the statistic with MPFR labels on the same
// N samples differ entrywise by at most the derived bound. Tests of the tester:
// a statistic biased by 10⁻¹² of its largest entry, and a mean over N + 1.
#include "generators.hpp"
#include "property.hpp"
#include "stages/stage1/reference.hpp"

using namespace mha;

namespace {
auto same_sample_within_bound(const Stage1Fast& fast) {
  return [fast] {
    auto c = *test::gen_layer_case(4, 10, 3).as("case");
    Instance inst;
    inst.layer = test::make_layer(c);
    inst.k = c.shape.k;
    inst.inputs = *rc::gen::element(InputKind::boolean, InputKind::gaussian).as("inputs");
    RC_PRE(oracle_problem(inst).empty());  // the fast path answers every input (huge-logit flavours may not)
    const int64_t n = *rc::gen::inRange<int64_t>(1, 401).as("samples");
    const SampleOracle oracle(inst, c.seed);
    const Stage1SameSampleCheck s = stage1_same_sample_check(oracle, &inst.layer, 0, n, 128, fast);
    RC_LOG() << "max |fast − ref| " << s.max_abs_diff << ", max ratio to the bound " << s.max_ratio << "\n";
    RC_ASSERT(s.max_ratio <= 1.0);
  };
}
}  // namespace

TEST_CASE("stage 1: the fast statistic is within the derived bound of the MPFR-label statistic on the same samples",
          "[property][stage1]") {
  mha::test::property("same-sample check", 60, same_sample_within_bound(stage1_estimate_wsum));
}

TEST_CASE("stage 1 same-sample check rejects a biased statistic and a mean over N + 1", "[property][stage1]") {
  mha::test::property_rejects("statistic biased by 1e-12 of its largest entry", 30,
                              same_sample_within_bound([](const SampleSource& s, const Stage1Options& o) {
                                Stage1Result r = stage1_estimate_wsum(s, o);
                                r.w_hat(0, 0) += 1e-12 * r.w_hat.cwiseAbs().maxCoeff();
                                return r;
                              }));
  mha::test::property_rejects("mean over N + 1", 30, same_sample_within_bound([](const SampleSource& s, const Stage1Options& o) {
                                Stage1Result r = stage1_estimate_wsum(s, o);
                                r.w_hat *= double(r.samples) / double(r.samples + 1);
                                return r;
                              }));
}
