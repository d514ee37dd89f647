// Labels as users have them (learn/noise.hpp, proofs/label_noise.md): polishing
// estimates the noise and names the floor it reached; float32 labels are
// recognised; the learner's final fit uses the samples the noise calls for
// (all that a dataset has left, the budget of an oracle) and lowers the error;
// the report warns when the noise exceeds what certification assumed.
#include "test_tolerances.hpp"
#include "data/noisy_source.hpp"
#include "instances.hpp"
#include "learn/learner.hpp"
#include "learn/noise.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <memory>

using namespace mha;

namespace {

// Another source's labels rounded to float32, as reading a '<f4' file gives them.
class Float32Source : public SampleSource {
 public:
  explicit Float32Source(std::unique_ptr<SampleSource> inner) : inner_(std::move(inner)) {}
  int k() const override { return inner_->k(); }
  int d() const override { return inner_->d(); }
  int64_t available() const override { return inner_->available(); }
  LabelledBatch draw(uint64_t first, int64_t count, int threads) const override {
    LabelledBatch b = inner_->draw(first, count, threads);
    for (double& y : b.y) y = static_cast<float>(y);
    return b;
  }

 private:
  std::unique_ptr<SampleSource> inner_;
};

// max_n ‖y_n‖² / mean_n ‖y_n‖² over samples first .. first+count−1 (the weights of the noise power).
double max_ratio(const SampleSource& exact, int64_t count) {
  const LabelledBatch b = exact.draw(0, count, 1);
  const int64_t per = int64_t{b.x.k} * b.x.d;
  double total = 0, largest = 0;
  for (int64_t n = 0; n < b.x.count; ++n) {
    double s = 0;
    for (int64_t e = n * per; e < (n + 1) * per; ++e) s += b.y[e] * b.y[e];
    total += s;
    largest = std::max(largest, s);
  }
  return largest / (total / static_cast<double>(b.x.count));
}

PolishResult polish_noisy(const Instance& inst, double epsilon, int64_t samples) {
  const NoisySource source(std::make_unique<SampleOracle>(inst, 3), epsilon, 3);
  PolishOptions o;
  o.threads = 2;
  o.samples = samples;
  o.validation_samples = 1024;
  return polish_layer(source, inst.layer, o);  // from the truth: the fit moves to the noisy optimum
}

// The stage-6 oracle hands polishing the layer of the instance the learner is
// given: a copy of the truth moved by a relative 10⁻³ stands in for the paper's
// stages' output (~5·10⁻⁴ at (16,2,2)), so the noise handling runs without them.
// (From the truth itself nothing is kept: no fit on noisy labels beats the truth
// on held-out samples.) The report's errors are then against the copy; the tests
// measure against the real truth.
Instance moved_truth(const Instance& inst) {
  Instance moved = inst;
  for (size_t i = 0; i < moved.layer.heads.size(); ++i) {
    const MatD& other = inst.layer.heads[(i + 1) % inst.layer.heads.size()].theta;
    moved.layer.heads[i].theta += 1e-3 * moved.layer.heads[i].theta.norm() / other.norm() * other;
    moved.layer.heads[i].w *= 1 + 1e-3;
  }
  return moved;
}

double max_error(const Layer& layer, const Instance& truth) {
  const LayerErrors e = compare_layers(layer, truth, 1, 0, 1);
  return std::max(e.theta_max_rel, e.w_max_rel);
}

// The learner with every stage but polishing replaced by the truth: the noise handling alone.
LearnOptions noise_learn_options(double declared) {
  LearnOptions o;
  o.m = 2;
  o.threads = 2;
  o.validation_samples = 500;
  o.test_samples = 4000;
  o.oracle.stage1 = o.oracle.hull = o.oracle.stage6 = true;
  o.label_noise = declared;
  o.final_fit_samples = 8192;
  return o;
}

const StageRecord* stage_named(const LearnReport& r, const std::string& stage) {
  for (const auto& s : r.stages)
    if (s.stage == stage) return &s;
  return nullptr;
}

}  // namespace

TEST_CASE("float32 labels are recognised by their values", "[noise]") {
  CHECK(labels_are_float32({0.5, -3.0, static_cast<float>(0.1)}));
  CHECK_FALSE(labels_are_float32({0.5, 0.1}));  // 0.1 as a double is no float32 value
  CHECK_FALSE(labels_are_float32({0.5, std::nan("")}));
  CHECK_FALSE(labels_are_float32({}));
  const Instance inst = test::generated_instance(8, 2, 2, 5, 2);
  const SampleOracle oracle(inst, 1);
  CHECK_FALSE(labels_are_float32(oracle.draw(0, 100, 1).y));
  const Float32Source rounded(std::make_unique<SampleOracle>(inst, 1));
  CHECK(labels_are_float32(rounded.draw(0, 100, 1).y));
}

TEST_CASE("polishing on noisy labels estimates the noise and names the floor", "[noise][polish]") {
  const Instance inst = test::generated_instance(8, 2, 2, 5, 2);
  const SampleOracle exact(inst, 3);
  const int64_t samples = 256, entries = samples * 2 * 8, parameters = 2 * 2 * 8 * 8;
  const double ratio = max_ratio(exact, samples);
  for (double epsilon : {1e-8, 1e-5, 1e-3}) {
    const PolishResult r = polish_noisy(inst, epsilon, samples);
    INFO("ε " << epsilon << ": " << r.report.stop_reason << "; training estimate " << r.report.noise_train
              << ", held-out " << r.report.noise_heldout << ", rounding level " << r.report.rounding_level);
    const double band = tolerance::noise_estimate_band(entries, parameters, ratio);
    CHECK(r.report.parameters == parameters);
    CHECK(r.report.residual_entries == entries);
    // The training residual, corrected for the p fitted parameters, is the noise.
    CHECK(std::abs(r.report.noise_train * r.report.noise_train / (epsilon * epsilon) - 1) <= band);
    // The held-out residual is the noise ⊕ the fit's error: at least the noise.
    CHECK(r.report.noise_heldout * r.report.noise_heldout >=
          epsilon * epsilon * (1 - tolerance::noise_estimate_band(1024 * 16, 0, ratio)));
    CHECK(r.report.noise_floor);
    CHECK(r.report.reached_floor);
    CHECK_THAT(r.report.stop_reason, Catch::Contains("noise floor"));
  }
  // Noiseless: the floor is rounding, and the report says so as before.
  const PolishResult quiet = polish_noisy(inst, 0.0, samples);
  UNSCOPED_INFO("noiseless floor: training residual " << quiet.report.noise_train << " = "
                << quiet.report.noise_train / quiet.report.rounding_measured << " × the measured rounding");
  CHECK_FALSE(quiet.report.noise_floor);
  CHECK(quiet.report.noise_train <= quiet.report.rounding_level);
  CHECK(quiet.report.rounding_measured <= quiet.report.rounding_bound);
  CHECK_THAT(quiet.report.stop_reason, !Catch::Contains("noise"));
}

TEST_CASE("test of the tester: a noise estimate without the parameters' correction is rejected", "[noise][tester]") {
  // 128 samples of (8,2,2): p/n = 256/2048 = 1/8, so the raw training residual's
  // power √cost² is 7/8 of the noise's. Pooled over 16 noise draws the band is
  // tight enough to see that, and the corrected estimate stays inside it.
  const Instance inst = test::generated_instance(8, 2, 2, 5, 2);
  const SampleOracle exact(inst, 3);
  const int64_t samples = 128, entries = samples * 16, parameters = 256, draws = 16;
  double corrected = 0, raw = 0;
  for (uint64_t seed = 1; seed <= draws; ++seed) {
    const NoisySource source(std::make_unique<SampleOracle>(inst, 3), 1e-5, seed);
    PolishOptions o;
    o.threads = 2;
    o.samples = samples;
    const PolishResult r = polish_layer(source, inst.layer, o);
    corrected += r.report.noise_train * r.report.noise_train / 1e-10 / draws;
    raw += r.report.train_error.back() / 1e-10 / draws;
  }
  const double band = tolerance::noise_estimate_band(draws * entries, draws * parameters, max_ratio(exact, samples));
  INFO("pooled over " << draws << " draws: corrected " << corrected << ", raw " << raw << ", band " << band);
  CHECK(std::abs(corrected - 1) <= band);
  CHECK(std::abs(raw - 1) > band);
}

TEST_CASE("the final fit uses the samples the noise calls for, capped by the data, the budget and memory", "[noise]") {
  PolishReport polish;
  polish.noise_floor = false;
  FinalFitLimits limits;
  limits.available = 500000;
  CHECK(plan_final_fit(polish, 512, 2, 16, 2, limits).samples == 0);  // rounding floor: nothing to gain
  polish.noise_floor = true;
  polish.noise_train = 1e-13;
  polish.rounding_level = 1e-14;
  // Stopped by the iteration limit above the rounding level: the residual is the fit's, not noise.
  CHECK(plan_final_fit(polish, 512, 2, 16, 2, limits).samples == 0);
  CHECK_THAT(plan_final_fit(polish, 512, 2, 16, 2, limits).reason, Catch::Contains("iteration limit"));
  polish.reached_floor = true;
  FinalFitPlan plan = plan_final_fit(polish, 512, 2, 16, 2, limits);
  CHECK(plan.needed == 51200);  // n₀·(ε̂/L)² = 512·100
  CHECK(plan.samples == 51200);
  CHECK_THAT(plan.reason, Catch::Contains("what the noise calls for"));
  polish.noise_train = 1e-4;  // the noise calls for 512·10²⁰: the budget decides
  plan = plan_final_fit(polish, 512, 2, 16, 2, limits);
  CHECK(plan.samples == 500000);
  CHECK_THAT(plan.reason, Catch::Contains("oracle budget"));
  limits.dataset = true;
  CHECK_THAT(plan_final_fit(polish, 512, 2, 16, 2, limits).reason, Catch::Contains("all remaining samples"));
  limits.max_bytes = 1e8;  // 1e8 / 4400 bytes per sample
  plan = plan_final_fit(polish, 512, 2, 16, 2, limits);
  CHECK(plan.samples == static_cast<int64_t>(1e8 / final_fit_bytes_per_sample(2, 16, 2)));
  CHECK_THAT(plan.reason, Catch::Contains("memory"));
  limits.max_bytes = 4e9;
  limits.available = 400;  // fewer than polishing used: no final fit
  CHECK(plan_final_fit(polish, 512, 2, 16, 2, limits).samples == 0);
  // Noiseless labels (an oracle without label noise): a floor above rounding is the
  // fit's own error, and the report says so instead of naming it noise.
  limits.available = 500000;
  limits.noiseless = true;
  CHECK(plan_final_fit(polish, 512, 2, 16, 2, limits).samples == 0);
  CHECK_THAT(plan_final_fit(polish, 512, 2, 16, 2, limits).reason, Catch::Contains("noiseless"));
  polish.noise_train = 0.3;
  CHECK_THAT(assess_noise(polish, 512, 2, 16, 2, false, 0, true).limit, Catch::StartsWith("the fit: the labels are noiseless"));
  CHECK_THAT(assess_noise(polish, 512, 2, 16, 2, false, 0, false).limit, Catch::StartsWith("label noise"));
  limits.noiseless = false;
  // The final fit's options: polishing's, matrix-free, with the plan's samples and bounded effort.
  const PolishOptions o = final_fit_options(PolishOptions(), plan, 1024, 777, 2);
  CHECK(o.samples == plan.samples);
  CHECK(o.validation_samples == 1024);
  CHECK(o.first_sample == 777);
  CHECK(o.linear_solver == PolishSolver::matrix_free);
  CHECK(o.statistical_stop > 0);
  CHECK(o.max_iterations <= 10);
  CHECK(o.cg_max_iterations <= 200);
}

TEST_CASE("with label noise the learner names the floor and its final fit lowers the error", "[noise][learn]") {
  const Instance inst = test::generated_instance(8, 2, 2, 5, 2), start = moved_truth(inst);
  const double epsilon = 1e-4;
  const NoisySource source(std::make_unique<SampleOracle>(inst, 1), epsilon, 1);
  LearnOptions o = noise_learn_options(epsilon);
  const LearnResult r = learn_layer(source, o, &start);
  INFO(format_table(r.report));
  REQUIRE(r.report.ok);
  REQUIRE(r.report.noise.has_value());
  const NoiseReport& n = *r.report.noise;
  CHECK(n.estimated);
  CHECK_FALSE(n.float32_labels);
  CHECK_THAT(n.limit, Catch::Contains("label noise"));
  CHECK(n.warning.empty());  // certification assumed the level the labels have
  CHECK(n.final_fit.samples == 8192);
  CHECK_THAT(stage_named(r.report, "polish")->summary, Catch::Contains("noise floor"));
  // The final fit's training residual (8192 samples, 131072 entries) is the noise.
  const double ratio = max_ratio(SampleOracle(inst, 1), 8192);
  CHECK(std::abs(n.noise * n.noise / (epsilon * epsilon) - 1) <=
        tolerance::noise_estimate_band(8192 * 16, 2 * 2 * 64, ratio));
  const StageRecord* fit = stage_named(r.report, "fit");
  REQUIRE(fit != nullptr);
  CHECK(fit->samples == 8192 + 1024);
  CHECK_FALSE(fit->details.contains("kept"));
  CHECK(r.report.samples_final_fit == 8192 + 1024);
  int64_t sum = r.report.validation_samples;
  for (const auto& s : r.report.stages) sum += s.samples;
  CHECK(sum == r.report.samples_total);
  // 32 times polishing's 256 samples: the statistical error falls by √32 ≈ 5.7.
  o.final_fit_samples = 0;
  const LearnResult polished = learn_layer(source, o, &start);
  const double before = max_error(polished.layer, inst), after = max_error(r.layer, inst);
  INFO("parameter error: start " << max_error(start.layer, inst) << ", polished " << before << ", final fit " << after);
  CHECK(before < max_error(start.layer, inst));
  CHECK(after * tolerance::final_fit_improvement_target() <= before);
}

TEST_CASE("the report warns when the labels' noise exceeds what certification assumed", "[noise][learn]") {
  const Instance inst = test::generated_instance(8, 2, 2, 5, 2);
  const NoisySource source(std::make_unique<SampleOracle>(inst, 1), 1e-4, 1);
  LearnOptions o = noise_learn_options(0.0);
  o.final_fit_samples = 0;  // no final fit: the estimate comes from polishing
  const Instance start = moved_truth(inst);
  const LearnResult r = learn_layer(source, o, &start);
  REQUIRE(r.report.noise.has_value());
  CHECK_THAT(r.report.noise->warning, Catch::Contains("--assume-label-noise"));
  CHECK(r.report.noise->final_fit.samples == 0);
  CHECK(stage_named(r.report, "fit") == nullptr);
}

TEST_CASE("float32 labels: the learner recognises them and names their rounding as the floor", "[noise][learn][float32]") {
  const Instance inst = test::generated_instance(8, 2, 2, 5, 2);
  const Float32Source source(std::make_unique<SampleOracle>(inst, 1));
  const Instance start = moved_truth(inst);
  const LearnResult r = learn_layer(source, noise_learn_options(0.0), &start);
  INFO(format_table(r.report));
  REQUIRE(r.report.noise.has_value());
  CHECK(r.report.noise->float32_labels);
  CHECK_THAT(r.report.noise->limit, Catch::Contains("float32"));
  CHECK(r.report.noise->warning.empty());  // certification added the float32 rounding bound
  CHECK(r.report.noise->final_fit.samples == 8192);
  CHECK(r.report.noise->noise <= 0x1p-24);
}

TEST_CASE("on a noisy dataset the final fit uses every remaining sample", "[noise][learn]") {
  const Instance inst = test::generated_instance(8, 2, 2, 5, 2);
  const NoisySource noisy(std::make_unique<SampleOracle>(inst, 1), 1e-4, 1);
  LabelledBatch b = noisy.draw(0, 12000, 2);
  const DatasetSource data(std::move(b.x), std::move(b.y));
  const Instance start = moved_truth(inst);
  const LearnResult r = learn_layer(data, noise_learn_options(1e-4), &start);
  INFO(format_table(r.report));
  REQUIRE(r.report.noise.has_value());
  // The stages used the 500 validation samples; the final fit trains on the rest but its 1024 held-out samples.
  CHECK(r.report.noise->final_fit.samples == 12000 - 500 - 1024);
  CHECK_THAT(r.report.noise->final_fit.reason, Catch::Contains("all remaining samples"));
}

TEST_CASE("the report names the floor from the estimate, the rounding level and what certification assumed",
          "[noise]") {
  PolishReport fit;
  fit.samples = 512 + 256;
  fit.rounding_measured = 2e-16;
  fit.rounding_level = 1.6e-15;
  fit.noise_heldout = 1.1e-6;
  fit.noise_train = 1e-6;
  fit.noise_floor = fit.reached_floor = true;
  // Declared 10⁻⁶, estimated 10⁻⁶: label noise, no warning.
  NoiseReport r = assess_noise(fit, 512, 2, 16, 2, false, 1e-6);
  CHECK_THAT(r.limit, Catch::StartsWith("label noise"));
  CHECK(r.warning.empty());
  CHECK(r.heldout_samples == 256);
  CHECK(r.fit_share == 1024.0 / (512 * 32));
  // Estimated far above the declared level: a local minimum, or more noise than declared; warned.
  fit.noise_train = 1e-3;
  r = assess_noise(fit, 512, 2, 16, 2, false, 1e-6);
  CHECK_THAT(r.limit, Catch::Contains("local minimum"));
  CHECK_THAT(r.warning, Catch::Contains("--assume-label-noise"));
  // Nothing declared: the estimate is the noise, and certification assumed none.
  r = assess_noise(fit, 512, 2, 16, 2, false, 0.0);
  CHECK_THAT(r.limit, Catch::StartsWith("label noise"));
  CHECK_FALSE(r.warning.empty());
  // Float32 labels with noise within their rounding.
  fit.noise_train = 2e-8;
  r = assess_noise(fit, 512, 2, 16, 2, true, 0.0);
  CHECK_THAT(r.limit, Catch::Contains("float32"));
  CHECK(r.warning.empty());
  // Stopped by the iteration limit: the fit.
  fit.reached_floor = false;
  CHECK_THAT(assess_noise(fit, 512, 2, 16, 2, true, 0.0).limit, Catch::StartsWith("the fit"));
  // Below the rounding level: rounding, whatever else.
  fit.noise_floor = false;
  CHECK_THAT(assess_noise(fit, 512, 2, 16, 2, false, 1e-6).limit, Catch::StartsWith("rounding"));
  // Without polishing: only an upper bound.
  r = unpolished_noise(4e-8, 1000, false, 0.0);
  CHECK_FALSE(r.estimated);
  CHECK(r.heldout_residual == 2e-4);
  CHECK_THAT(r.limit, Catch::StartsWith("undetermined"));
}
