#include "instances.hpp"
#include "stages/stage1_wsum.hpp"
#include "stages/stage2_sculpt.hpp"
#include "stages/stage3_margin.hpp"

#include <catch2/catch.hpp>

#include <cstdio>

using namespace mha;

TEST_CASE("large-margin events of the proxy pin down W_sum far better than stage 1", "[stage3]") {
  const Instance inst = test::generated_instance(16, 2, 2, 6, 1);
  const SampleOracle oracle(inst, 2);
  const Stage1Result s1 = stage1_estimate_wsum(oracle, {400000, 2});
  const double e1 = (s1.w_hat - inst.layer.w_sum()).norm() / inst.layer.w_sum().norm();
  SculptOptions o;
  o.threads = 2;
  o.first_sample = s1.samples;
  o.certify.tau = e1;  // the crude Ŵ only certifies at about its own error (as in the planning prototype)
  // With a crude Ŵ the lemma's widths are vacuous (δ ≥ v̂_j); the crude round
  // uses the constraints as estimates (as the planning prototype did), with an
  // optimistic σ_min so that every certified row keeps a finite width.
  o.certify.sigma_min = 1e3;
  o.max_samples = 400000;
  const SculptResult s2 = sculpt_body(oracle, s1.w_hat, 2, o, &inst.layer);
  REQUIRE(s2.body.size() > 0);
  // Proxy: the minimum-norm point of the least-squares affine set.
  const Eigen::VectorXd x0 = s2.centre.x0 - s2.centre.free_basis.transpose() * (s2.centre.free_basis * s2.centre.x0);
  const MatD proxy = Eigen::Map<const MatD>(x0.data(), 16, 16);
  MarginOptions mo;
  mo.threads = 2;
  mo.first_sample = s1.samples + s2.report.samples;
  const MarginResult s3 = refine_wsum(oracle, proxy, mo, &inst.layer);
  REQUIRE(s3.report.truth.has_value());
  std::printf("stage 2: %lld constraints, rank %d, gap %.3g\n", (long long)s2.report.constraints, s2.report.numerical_rank, s2.report.gap);
  std::printf("stage 1 error %.3g; stage 2 hull error %.3g; stage 3: threshold %.3g, %lld events (%lld kept), W_sum error %.3g, "
              "not-large-margin fraction %.3g\n",
              e1, s2.report.truth->hull_error, s3.report.threshold, (long long)s3.report.events, (long long)s3.report.events_kept,
              s3.report.truth->w_sum_rel_error, s3.report.truth->true_not_large_margin);
  CHECK(s3.report.event_rank == 16);
  CHECK(s3.report.truth->w_sum_rel_error < e1 / 10);
}
