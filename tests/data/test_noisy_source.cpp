// NoisySource (`--label-noise`): the noise is a pure function of the sample
// index, its relative size is what was asked for, and 0 changes nothing.
#include "data/noisy_source.hpp"

#include "test_tolerances.hpp"
#include "instances.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <algorithm>

using namespace mha;
using mha::test::generated_instance;

namespace {

struct NoisePower {
  double relative_power = 0;  // Σ‖noisy − exact‖² / Σ‖exact‖²
  double max_ratio = 0;       // max_n ‖y_n‖² / mean_n ‖y_n‖², from the exact labels alone
};

NoisePower measure_noise_power(const SampleSource& noisy, const SampleSource& exact, int64_t count, int64_t per) {
  const LabelledBatch a = noisy.draw(0, count, 1), b = exact.draw(0, count, 1);
  double noise = 0, signal = 0, largest = 0;
  for (int64_t n = 0; n < count; ++n) {
    double sample_signal = 0;
    for (int64_t e = n * per; e < (n + 1) * per; ++e) {
      noise += (a.y[e] - b.y[e]) * (a.y[e] - b.y[e]);
      sample_signal += b.y[e] * b.y[e];
    }
    signal += sample_signal;
    largest = std::max(largest, sample_signal);
  }
  return {noise / signal, largest / (signal / static_cast<double>(count))};
}

bool power_matches(const NoisePower& p, double epsilon, int64_t count, int64_t per) {
  return std::abs(p.relative_power / (epsilon * epsilon) - 1) <=
         tolerance::label_noise_power_band(count, per, p.max_ratio);
}

}  // namespace

TEST_CASE("label noise: 0 leaves the labels as they are", "[noise]") {
  const Instance inst = generated_instance(16, 2, 2, 6, 3);
  NoisySource noisy(std::make_unique<SampleOracle>(inst, 7), 0.0, 7);
  SampleOracle exact(inst, 7);
  CHECK(noisy.draw(10, 50, 1).y == exact.draw(10, 50, 1).y);
}

TEST_CASE("label noise: sample n's noise does not depend on the batch or the thread count", "[noise][determinism]") {
  const Instance inst = generated_instance(16, 2, 2, 6, 3);
  NoisySource noisy(std::make_unique<SampleOracle>(inst, 7), 1e-3, 7);
  const LabelledBatch whole = noisy.draw(0, 40, 1), tail = noisy.draw(25, 15, 2);
  const int64_t per = 2 * 16;
  REQUIRE(tail.y.size() == size_t(15 * per));
  CHECK(std::equal(tail.y.begin(), tail.y.end(), whole.y.begin() + 25 * per));
  // Inputs pass through unchanged.
  SampleOracle exact(inst, 7);
  CHECK(whole.x.bits == exact.draw(0, 40, 1).x.bits);
}

TEST_CASE("label noise: its root mean square is the requested fraction of the labels'", "[noise]") {
  const Instance inst = generated_instance(16, 2, 2, 6, 3);
  SampleOracle exact(inst, 7);
  const int64_t count = 4000, per = 2 * 16;
  for (double epsilon : {1e-2, 1e-6}) {
    NoisySource noisy(std::make_unique<SampleOracle>(inst, 7), epsilon, 7);
    const NoisePower p = measure_noise_power(noisy, exact, count, per);
    INFO("epsilon " << epsilon << ": noise power / signal power = " << p.relative_power << ", band "
                    << tolerance::label_noise_power_band(count, per, p.max_ratio));
    CHECK(power_matches(p, epsilon, count, per));
    // Tests of the tester: noise 10 % too large, and noise scaled by ‖y_n‖_F instead of rms(y_n)
    // (√(kd) = √32 times too large), are rejected.
    CHECK_FALSE(power_matches({p.relative_power * 1.21, p.max_ratio}, epsilon, count, per));
    CHECK_FALSE(power_matches({p.relative_power * 32, p.max_ratio}, epsilon, count, per));
  }
}

TEST_CASE("label noise: a negative or non-finite size is refused", "[noise]") {
  const Instance inst = generated_instance(8, 2, 1, 3, 1);
  CHECK_THROWS_AS(NoisySource(std::make_unique<SampleOracle>(inst, 1), -1e-3, 1), std::invalid_argument);
  CHECK_THROWS_AS(NoisySource(std::make_unique<SampleOracle>(inst, 1), std::nan(""), 1), std::invalid_argument);
}
