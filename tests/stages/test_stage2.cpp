#include "test_tolerances.hpp"
#include "instances.hpp"
#include "stages/stage2/sculpt.hpp"
#include "thread_ranks.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace mha;

namespace {
Instance small_instance(int d, int k, int m, double scale) { return test::generated_instance(d, k, m, scale, 3); }

bool same_slabs(const ConvexBody& a, const ConvexBody& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a.slabs()[i].a != b.slabs()[i].a || a.slabs()[i].b != b.slabs()[i].b || a.slabs()[i].eta != b.slabs()[i].eta)
      return false;
  return true;
}
}  // namespace

TEST_CASE("sculpting with the exact W_sum keeps every true head inside K and finds the hull", "[stage2]") {
  // d = 10: at d = 8 the coincidences concentrate on 32 token pairs whose
  // constraints span only half of R^64 (docs/stages12.md); from d = 10 on they span all d².
  const Instance inst = small_instance(10, 2, 2, 3.0);
  const SampleOracle oracle(inst, 5);
  SculptOptions o;
  o.certify.sigma_min = default_sigma_min(10, 2, 2);
  o.max_samples = 4000000;
  const SculptResult r = sculpt_body(oracle, inst.layer.w_sum(), 2, o, &inst.layer);
  REQUIRE(r.report.truth.has_value());
  CHECK(r.report.constraints >= 3 * 100);
  CHECK(r.report.numerical_rank == 100);
  CHECK(r.report.rows_certified > r.report.rows_certified_first_row);
  for (double v : r.report.truth->theta_violation) CHECK(v == 0.0);
  // Measured 1e-4..1e-3 at this size; 1e-2 would mean the hull was not found.
  CHECK(r.report.truth->hull_error < tolerance::sculpt_hull_error_target());
  CHECK(r.report.gap > 10);
}

TEST_CASE("the sculpted body does not depend on the thread count", "[stage2][determinism]") {
  const Instance inst = small_instance(8, 2, 2, 3.0);
  const SampleOracle oracle(inst, 6);
  SculptOptions o;
  o.max_samples = 300000;
  o.threads = 1;
  const SculptResult one = sculpt_body(oracle, inst.layer.w_sum(), 2, o);
  o.threads = 2;
  const SculptResult two = sculpt_body(oracle, inst.layer.w_sum(), 2, o);
  REQUIRE(one.body.size() == two.body.size());
  REQUIRE(one.body.size() > 0);
  for (size_t i = 0; i < one.body.size(); ++i) {
    REQUIRE(one.body.slabs()[i].a == two.body.slabs()[i].a);
    REQUIRE(one.body.slabs()[i].b == two.body.slabs()[i].b);
    REQUIRE(one.body.slabs()[i].eta == two.body.slabs()[i].eta);
  }
  REQUIRE(one.centre.x0 == two.centre.x0);
}

TEST_CASE("a sample budget that certifies nothing is reported, not hidden", "[stage2]") {
  const Instance inst = small_instance(8, 2, 2, 3.0);
  const SampleOracle oracle(inst, 7);
  SculptOptions o;
  o.max_samples = 10;
  const SculptResult r = sculpt_body(oracle, inst.layer.w_sum(), 2, o);
  CHECK(r.report.samples == 10);
  CHECK(r.report.budget_exhausted);
}

TEST_CASE("best-rows selection is the threshold body at its τ_effective over the whole budget", "[stage2]") {
  const Instance inst = small_instance(10, 2, 2, 3.0);
  const SampleOracle oracle(inst, 8);
  SculptOptions o;
  o.certify.sigma_min = default_sigma_min(10, 2, 2);
  o.max_samples = 200000;
  o.target_constraints = 150;
  o.selection = SculptOptions::Selection::best_rows;
  const SculptResult best = sculpt_body(oracle, inst.layer.w_sum(), 2, o);
  REQUIRE(best.report.constraints == 150);  // k = 2: one slab a row, exactly the target
  CHECK(best.report.samples == 200000);     // the whole budget, no early stop
  o.selection = SculptOptions::Selection::threshold;
  o.certify.tau = best.report.tau_effective;
  o.target_constraints = std::numeric_limits<int64_t>::max();
  const SculptResult threshold = sculpt_body(oracle, inst.layer.w_sum(), 2, o);
  REQUIRE(threshold.body.size() == best.body.size());
  for (size_t i = 0; i < best.body.size(); ++i) {
    CHECK(best.body.slabs()[i].a == threshold.body.slabs()[i].a);
    CHECK(best.body.slabs()[i].b == threshold.body.slabs()[i].b);
  }
  // One ulp below τ_effective the threshold body loses the worst kept row.
  o.certify.tau = std::nextafter(best.report.tau_effective, 0.0);
  CHECK(sculpt_body(oracle, inst.layer.w_sum(), 2, o).body.size() == best.body.size() - 1);
}

TEST_CASE("distinct constraints: a repeated row of a small Boolean domain counts once", "[stage2]") {
  // d = 6, k = 2: 2¹² ordered token pairs, so rows repeat within a few thousand samples.
  const Instance inst = small_instance(6, 2, 2, 3.0);
  const SampleOracle oracle(inst, 9);
  SculptOptions o;
  o.certify.tau = 1;           // every eligible row
  o.certify.sigma_min = 1e3;  // heuristic widths: only the repetition matters here
  o.max_samples = 100000;
  o.target_constraints = std::numeric_limits<int64_t>::max();
  const SculptResult all = sculpt_body(oracle, inst.layer.w_sum(), 2, o);
  o.distinct_constraints = true;
  const SculptResult distinct = sculpt_body(oracle, inst.layer.w_sum(), 2, o);
  REQUIRE(distinct.report.duplicate_constraints > 0);
  CHECK(distinct.body.size() + distinct.report.duplicate_constraints == all.body.size());
  // No two kept slabs are equal.
  int64_t equal_pairs = 0;
  const auto& slabs = distinct.body.slabs();
  for (size_t i = 0; i < slabs.size(); ++i)
    for (size_t j = i + 1; j < slabs.size(); ++j) equal_pairs += slabs[i].a == slabs[j].a && slabs[i].b == slabs[j].b;
  CHECK(equal_pairs == 0);
}

TEST_CASE("the sample loop shared by 2 and 3 processes gives the body and counts of one process", "[stage2][determinism]") {
  // Each process draws and certifies its block of every batch; the outcomes are
  // merged in sample order (SculptOptions::processes). Both selections, distinct
  // slabs on, a budget that ends inside a batch; threads stand for the ranks.
  const Instance inst = small_instance(8, 2, 2, 3.0);
  const SampleOracle oracle(inst, 6);
  for (const auto selection : {SculptOptions::Selection::threshold, SculptOptions::Selection::best_rows}) {
    SculptOptions o;
    o.max_samples = 150001;
    o.selection = selection;
    o.distinct_constraints = true;
    o.target_constraints = 200;
    const SculptResult one = sculpt_slabs(oracle, inst.layer.w_sum(), o);
    REQUIRE(one.body.size() > 0);
    REQUIRE(one.report.samples_by_process == std::vector<int64_t>{one.report.samples});
    for (int size : {2, 3}) {
      std::vector<SculptResult> shared(static_cast<size_t>(size), SculptResult{ConvexBody(64, o.radius), {}, {}});
      test::run_as_ranks(size, [&](const Processes& p) {
        SculptOptions ro = o;
        ro.processes = p;
        shared[static_cast<size_t>(p.rank)] = sculpt_slabs(oracle, inst.layer.w_sum(), ro);
      });
      for (int r = 0; r < size; ++r) {
        const SculptReport& rep = shared[static_cast<size_t>(r)].report;
        INFO("selection " << int(selection) << ", " << size << " processes, rank " << r);
        CHECK(same_slabs(shared[static_cast<size_t>(r)].body, one.body));
        CHECK(rep.verdicts == one.report.verdicts);
        CHECK(rep.samples == one.report.samples);
        CHECK(rep.duplicate_constraints == one.report.duplicate_constraints);
        CHECK(rep.tau_effective == one.report.tau_effective);
        REQUIRE(rep.samples_by_process.size() == static_cast<size_t>(size));
        int64_t sum = 0;
        for (int64_t s : rep.samples_by_process) {
          CHECK(s > 0);
          sum += s;
        }
        CHECK(sum == rep.samples);
      }
    }
  }
  // More processes than samples: the ranks without a share draw nothing and agree.
  SculptOptions few;
  few.max_samples = 2;
  few.certify.tau = 1;
  const SculptResult two_samples = sculpt_slabs(oracle, inst.layer.w_sum(), few);
  std::vector<SculptReport> reports(3);
  test::run_as_ranks(3, [&](const Processes& p) {  // no Catch assertion in a rank's thread: they are not thread-safe
    SculptOptions ro = few;
    ro.processes = p;
    reports[static_cast<size_t>(p.rank)] = sculpt_slabs(oracle, inst.layer.w_sum(), ro).report;
  });
  for (const SculptReport& r : reports) {
    CHECK(r.samples_by_process == std::vector<int64_t>{0, 1, 1});
    CHECK(r.verdicts == two_samples.report.verdicts);
  }
}

TEST_CASE("the shared sample loop's comparison rejects processes that keep only their own rows", "[stage2][determinism]") {
  // The tester of the test above: an all-gather that returns the caller's part
  // alone (each process merges only what it certified) gives another body.
  const Instance inst = small_instance(8, 2, 2, 3.0);
  const SampleOracle oracle(inst, 6);
  SculptOptions o;
  o.max_samples = 150001;
  o.distinct_constraints = true;
  o.target_constraints = 200;
  const SculptResult one = sculpt_slabs(oracle, inst.layer.w_sum(), o);
  SculptOptions broken = o;
  broken.processes.rank = 1;
  broken.processes.size = 2;
  broken.processes.all_gather = [](const std::vector<double>& mine) { return mine; };
  const SculptResult alone = sculpt_slabs(oracle, inst.layer.w_sum(), broken);
  CHECK_FALSE(same_slabs(alone.body, one.body));
  // A process count without an all-gather is refused.
  SculptOptions bad = o;
  bad.processes.size = 2;
  CHECK_THROWS_AS(sculpt_slabs(oracle, inst.layer.w_sum(), bad), std::invalid_argument);
}
