#include "numeric/tolerance.hpp"
#include "learn/learner.hpp"
#include "instances.hpp"

#include <catch2/catch.hpp>

using namespace mha;

namespace {
// Budgets well below the defaults: the test also runs under the sanitizers
// (about 17× slower), and it checks recovery, not the defaults' accuracy.
LearnOptions small_learn_options() {
  LearnOptions o;
  o.m = 2;
  o.threads = 2;
  o.reference = false;  // the reference paths have their own tests (test_stage5, convex body)
  o.stage1_samples = 100000;
  o.crude_sculpt_samples = 200000;
  o.sculpt.sculpt.max_samples = 800000;
  o.max_rounds = 3;
  o.net.max_tuples = 2000;
  o.validation_samples = 500;
  o.test_samples = 2000;
  return o;
}
}  // namespace

TEST_CASE("the learner recovers a (12,2,2) instance end to end", "[learn]") {
  const Instance inst = test::generated_instance(12, 2, 2, 5, 2);
  const SampleOracle oracle(inst, 1);
  const LearnOptions o = small_learn_options();
  const LearnResult r = learn_layer(oracle, o, &inst);
  INFO(format_table(r.report));
  REQUIRE(r.report.ok);
  REQUIRE(r.report.errors_before_polish.has_value());
  // The paper's stages alone: measured 1e-4..1e-3 at d = 12..16 (docs/learner.md).
  CHECK(r.report.errors_before_polish->theta_max_rel < tolerance::learner_stages_target());
  CHECK(r.report.errors_before_polish->w_max_rel < tolerance::learner_stages_target());
  // Polished: machine precision, as gradient training reaches on such instances.
  CHECK(r.report.errors->theta_max_rel < tolerance::learner_polished_target());
  CHECK(r.report.errors->w_max_rel < tolerance::learner_polished_target());
  CHECK(r.report.errors->test_relative_error < tolerance::learner_polished_test_error_target());
  // Samples: every stage's count adds up to the total.
  int64_t sum = r.report.validation_samples;
  for (const auto& s : r.report.stages) sum += s.samples;
  CHECK(sum == r.report.samples_total);
}

// Tagged [reproducibility]: the sanitizer run skips it (CMakePresets.json),
// since a second learner run finds no memory error the first does not.
TEST_CASE("the learner's result is the same whatever the thread count", "[learn][reproducibility]") {
  const Instance inst = test::generated_instance(12, 2, 2, 5, 2);
  const SampleOracle oracle(inst, 1);
  LearnOptions o2 = small_learn_options();
  o2.polish = false;
  LearnOptions o1 = o2;
  o1.threads = 1;
  const LearnResult r2 = learn_layer(oracle, o2, &inst);
  const LearnResult r1 = learn_layer(oracle, o1, &inst);
  REQUIRE(r1.report.ok);
  REQUIRE(r2.report.ok);
  for (int i = 0; i < 2; ++i) {
    CHECK(r1.layer.heads[i].theta == r2.layer.heads[i].theta);
    CHECK(r1.layer.heads[i].w == r2.layer.heads[i].w);
  }
}

TEST_CASE("on a finite dataset the learner stops when the data run out and polishes on the reserved tail", "[learn]") {
  const Instance inst = test::generated_instance(10, 2, 1, 3, 2);
  const SampleOracle oracle(inst, 4);
  LabelledBatch b = oracle.draw(0, 300000, 2);
  const DatasetSource data(std::move(b.x), std::move(b.y));
  LearnOptions o;
  o.m = 1;
  o.threads = 2;
  o.reference = false;
  o.stage1_samples = 50000;
  o.crude_sculpt_samples = 100000;
  o.sculpt.sculpt.max_samples = 200000;
  o.max_rounds = 5;
  o.test_samples = 1000;
  const LearnResult r = learn_layer(data, o, &inst);
  INFO(format_table(r.report));
  REQUIRE(r.report.ok);
  const int64_t reserve = polish_samples_needed(10, 2, 1, o.polish_options);
  CHECK(r.report.samples_paper <= 300000 - reserve);
  CHECK(r.report.samples_polish == reserve);
  CHECK(r.report.samples_total <= 300000);
  CHECK(r.report.errors->theta_max_rel < tolerance::learner_budget_limited_target());
  CHECK(r.report.message.find("ran out") != std::string::npos);
}
