#include "baseline/random_polish.hpp"
#include "cli_sandbox.hpp"
#include "data/instance_io.hpp"
#include "instances.hpp"
#include "numeric/rng.hpp"
#include "test_tolerances.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace mha;

namespace {
// (8,2,2), logit scale 3: every random start reached 2e−16 here (0.9 s each on
// a loaded 2-core machine) with 256 training samples per fit.
RandomPolishOptions random_polish_small_options() {
  RandomPolishOptions o;
  o.m = 2;
  o.threads = 2;
  o.starts = 2;
  o.validation_samples = 500;
  o.polish.samples = 256;
  o.test_samples = 2000;
  return o;
}

int64_t random_polish_fit_size(const RandomPolishReport& r) { return r.samples_per_fit; }
}  // namespace

TEST_CASE("Polishing alone from random starts recovers a small instance, and its counts add up", "[random-polish]") {
  const Instance inst = test::generated_instance(8, 2, 2, 3, 2);
  const SampleOracle oracle(inst, 1);
  const RandomPolishOptions o = random_polish_small_options();
  const RandomPolishResult r = random_polish(oracle, o, &inst);
  INFO(format_table(r.report));
  REQUIRE(r.report.ok);
  REQUIRE(r.report.errors);
  CHECK(r.report.errors->theta_max_rel < tolerance::random_polish_recovery_target());
  CHECK(r.report.errors->w_max_rel < tolerance::random_polish_recovery_target());
  CHECK(r.report.stop_reason == "starts");
  REQUIRE(r.report.starts.size() == 2);
  // Samples: the validation set, then one fresh chunk (training + the fit's own validation) per start.
  CHECK(random_polish_fit_size(r.report) == 256 + 256);
  int64_t sum = r.report.validation_samples;
  for (size_t s = 0; s < r.report.starts.size(); ++s) {
    const auto& st = r.report.starts[s];
    CHECK(st.first_sample == static_cast<uint64_t>(o.validation_samples + s * random_polish_fit_size(r.report)));
    CHECK(st.samples == random_polish_fit_size(r.report));
    sum += st.samples;
    // The kept start has the smallest validation error.
    CHECK(st.validation_error >= r.report.starts[r.report.best_start].validation_error);
  }
  CHECK(r.report.samples_total == sum);
  CHECK(r.report.validation_samples == o.validation_samples);
  // The report's top-level keys are the other methods'.
  const nlohmann::json j = to_json(r.report);
  CHECK(j["method"] == "random-polish");
  CHECK(j["stages"][0]["stage"] == "random-polish");
  CHECK(j["samples_total"] == sum);
  for (const char* key : {"theta_max_rel", "w_max_rel", "test_rel"}) CHECK(j["errors"].contains(key));
  CHECK(j["starts"].size() == 2);
}

TEST_CASE("Random starts follow the documented distribution", "[random-polish]") {
  RandomPolishOptions o = random_polish_small_options();
  o.m = 3;
  o.radius = 7;
  const int d = 6;
  for (int s = 0; s < 4; ++s) {
    const Layer a = random_polish_start(d, s, o);
    REQUIRE(a.m() == 3);
    for (int i = 0; i < 3; ++i) {
      // docs/formats.md: Θ_i = R·u · G/‖G‖_F, G from (seed, stream 8, counter (s, i, e/4, 0)),
      // u from word 0 of counter (s, i, 0, 1).
      const MatD g = gaussian_matrix(o.init_seed, Stream::polish_start, s, i, d);
      const double u = static_cast<double>(philox_block(o.init_seed, Stream::polish_start, s, i, 0, 1)[0] >> 11) * 0x1.0p-53;
      CHECK((a.heads[i].theta - g * (o.radius * u / g.norm())).norm() == 0);
      CHECK(a.heads[i].theta.norm() < o.radius);
      CHECK(a.heads[i].w.norm() == 0);
    }
    // Starts and heads differ; another seed gives other starts.
    CHECK(a.heads[0].theta != a.heads[1].theta);
    if (s > 0) CHECK(a.heads[0].theta != random_polish_start(d, s - 1, o).heads[0].theta);
    RandomPolishOptions other = o;
    other.init_seed = 2;
    CHECK(random_polish_start(d, s, other).heads[0].theta != a.heads[0].theta);
  }
  // A fixed norm replaces R·u and nothing else.
  o.init_theta_norm = 2.5;
  const Layer fixed = random_polish_start(d, 1, o);
  for (int i = 0; i < 3; ++i) {
    const MatD g = gaussian_matrix(o.init_seed, Stream::polish_start, 1, i, d);
    CHECK((fixed.heads[i].theta - g * (2.5 / g.norm())).norm() == 0);
  }
}

TEST_CASE("Random-polish keeps to its sample and time budgets and cycles a small dataset", "[random-polish]") {
  const Instance inst = test::generated_instance(8, 2, 2, 3, 2);
  const SampleOracle oracle(inst, 1);
  RandomPolishOptions o = random_polish_small_options();
  o.polish.max_iterations = 2;  // the accounting, not the fit, is under test
  o.starts = 5;
  const int64_t p = 512;
  SECTION("sample budget: the third chunk would pass it") {
    o.max_samples = o.validation_samples + 2 * p + p / 2;
    const RandomPolishResult r = random_polish(oracle, o, &inst);
    REQUIRE(r.report.ok);
    CHECK(r.report.starts.size() == 2);
    CHECK(r.report.stop_reason == "samples");
    CHECK(r.report.samples_total == o.validation_samples + 2 * p);
    CHECK(r.report.samples_total <= o.max_samples);
  }
  SECTION("time budget: start 0 runs and is cut, no other starts") {
    o.max_seconds = 1e-6;
    o.polish.max_iterations = 40;
    const RandomPolishResult r = random_polish(oracle, o, &inst);
    REQUIRE(r.report.ok);
    REQUIRE(r.report.starts.size() == 1);
    CHECK(r.report.stop_reason == "time");
    CHECK(r.report.starts[0].stop_reason == "time budget");
    CHECK(r.report.starts[0].iterations == 0);
  }
  SECTION("a dataset with two whole chunks after the validation set is cycled") {
    const LabelledBatch all = oracle.draw(0, o.validation_samples + 2 * p + 100, 2);
    const DatasetSource data(all.x, all.y);
    const RandomPolishResult r = random_polish(data, o, &inst);
    REQUIRE(r.report.ok);
    REQUIRE(r.report.starts.size() == 5);
    for (int s = 0; s < 5; ++s) {
      CHECK(r.report.starts[s].first_sample == static_cast<uint64_t>(o.validation_samples + (s % 2) * p));
      CHECK(r.report.starts[s].samples == (s < 2 ? p : 0));
    }
    CHECK(r.report.samples_total == o.validation_samples + 2 * p);
  }
  SECTION("too few samples for the validation set and one fit") {
    const LabelledBatch all = oracle.draw(0, o.validation_samples + p - 1, 2);
    const DatasetSource data(all.x, all.y);
    CHECK(check_random_polish(data, o).find("fewer than") != std::string::npos);
    CHECK_FALSE(random_polish(data, o).report.ok);
    o.max_samples = o.validation_samples + p - 1;
    CHECK(check_random_polish(oracle, o).find("--max-samples") != std::string::npos);
  }
}

// Release only (the sanitizer test preset excludes it: a rerun of arithmetic the
// first test already runs under the sanitizers).
TEST_CASE("Random-polish's result is the same whatever the thread count", "[random-polish]") {
  const Instance inst = test::generated_instance(8, 2, 2, 3, 2);
  const SampleOracle oracle(inst, 1);
  RandomPolishOptions two = random_polish_small_options();
  two.polish.max_iterations = 4;
  RandomPolishOptions one = two;
  one.threads = 1;
  const RandomPolishResult r2 = random_polish(oracle, two, &inst);
  const RandomPolishResult r1 = random_polish(oracle, one, &inst);
  REQUIRE(r1.report.best_start == r2.report.best_start);
  for (int i = 0; i < 2; ++i) {
    CHECK(r1.layer.heads[i].theta == r2.layer.heads[i].theta);
    CHECK(r1.layer.heads[i].w == r2.layer.heads[i].w);
  }
  for (size_t s = 0; s < r1.report.starts.size(); ++s)
    CHECK(r1.report.starts[s].validation_error == r2.report.starts[s].validation_error);
}

TEST_CASE("learn --method random-polish reports like the other methods and rejects bad options", "[cli][random-polish]") {
  const test::Sandbox s("mhalearn_random_polish_");
  const Instance inst = test::generated_instance(8, 2, 2, 3, 2);
  REQUIRE(write_instance(s.path("inst.json"), inst).empty());
  const std::string learn = "learn " + s.path("inst.json") + " --method random-polish ";
  const test::Run r = s.run(learn + "--starts 2 --polish-samples 256 --threads 2 --report " + s.path("r.json") +
                            " -o " + s.path("learned.json"));
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const auto report = nlohmann::json::parse(test::slurp(s.path("r.json")));
  CHECK(report["method"] == "random-polish");
  CHECK(report["stages"][0]["stage"] == "random-polish");
  CHECK(report["starts"].size() == 2);
  CHECK(report["samples_total"] == 1000 + 2 * 512);
  CHECK(report["provenance"]["options"]["method"] == "random-polish");
  CHECK(report["errors"]["theta_max_rel"].get<double>() < tolerance::random_polish_recovery_target());
  CHECK(std::ifstream(s.path("learned.json")).good());

  test::expect_bad_input(s.run(learn + "--starts 0"), "--starts");
  test::expect_bad_input(s.run(learn + "--oracle stage1"), "--oracle");
  test::expect_bad_input(s.run(learn + "--max-samples 1200"), "--max-samples");
  test::expect_bad_input(s.run(learn + "--polish-iterations 0"), "--polish-iterations");
}
