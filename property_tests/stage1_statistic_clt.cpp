// Claim: the fast path's stage-1 statistic is an unbiased Monte Carlo estimate
// of the population value E[(1/k) Xᵀ J F(X)] = Σ_i M(Θ_i) W_i, which the
// enumerator computes exactly (MPFR). Proof and the test's statistics:
// proofs/stage1_identities.md, Lemma 3.
//
// A statistical test with a stated false-alarm probability and power. Each of
// n cases (a random instance with k·d ≤ 12, independent samples) contributes one
// standardized deviation z = (Ŵ[r,c] − E[r,c]) / SE[r,c] for a random entry;
// under the claim the z are independent and (CLT, N = 5000 samples each)
// standard normal. Three tests, each at level α/3, α = 1e−4 in all:
//   pooled mean   Z = Σz/√n        two-sided normal test (a consistent bias),
//   pooled square T = Σz²          two-sided χ²_n test (any bias, a wrong SE),
//   largest       max|z|           Bonferroni over the n cases (one gross error).
// Power: a bias of 1 SE in every case (five times below what one case can
// see at 5 SE) moves Z by √n = 8 (n = 64): detected with probability 0.99994;
// an SE half its true size makes T ≈ 4χ²_n: detected with probability 0.9999. The test of the tester applies exactly
// these two wrong statistics to the same draws and requires rejection.
#include "data/population.hpp"
#include "generators.hpp"
#include "property.hpp"
#include "stages/stage1/wsum.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

using namespace mha;

namespace {

constexpr double kAlpha = 1e-4;          // total false-alarm probability of the three tests
constexpr int64_t kSamples = 5000;       // per case
constexpr int kCases = 64;               // even: the χ² tail has a closed form

// P(χ²_n ≥ t) for even n = 2j: P(Poisson(t/2) ≤ j − 1) (exact).
double chi_square_upper(double t, int n) {
  const double lambda = t / 2;
  double p = 0;
  for (int i = 0; i < n / 2; ++i) p += std::exp(-lambda + i * std::log(lambda) - std::lgamma(i + 1.0));
  return std::min(1.0, p);
}
// P(χ²_n ≤ t) = P(Poisson(t/2) ≥ j), summed directly (no cancellation).
double chi_square_lower(double t, int n) {
  const double lambda = t / 2;
  double p = 0;
  for (int i = n / 2; i < n / 2 + 2000; ++i) {
    const double term = std::exp(-lambda + i * std::log(lambda) - std::lgamma(i + 1.0));
    p += term;
    if (i > lambda && term < 1e-300) break;
  }
  return std::min(1.0, p);
}
double normal_two_sided(double z) { return std::erfc(std::abs(z) / std::sqrt(2.0)); }

struct Draw {
  double estimate, population, standard_error;
};

struct Verdict {
  double mean_z = 0, chi_square = 0, max_abs_z = 0;
  double p_mean = 1, p_chi_upper = 1, p_chi_lower = 1, p_max = 1;
  bool accepted = true;
};

// The three tests on the standardized deviations.
Verdict pooled_test(const std::vector<Draw>& draws) {
  Verdict v;
  const int n = static_cast<int>(draws.size());
  double sum = 0;
  for (const Draw& d : draws) {
    const double z = (d.estimate - d.population) / d.standard_error;
    sum += z;
    v.chi_square += z * z;
    v.max_abs_z = std::max(v.max_abs_z, std::abs(z));
  }
  v.mean_z = sum / std::sqrt(double(n));
  v.p_mean = normal_two_sided(v.mean_z);
  v.p_chi_upper = chi_square_upper(v.chi_square, n);
  v.p_chi_lower = chi_square_lower(v.chi_square, n);
  v.p_max = std::min(1.0, n * normal_two_sided(v.max_abs_z));
  v.accepted = v.p_mean >= kAlpha / 3 && std::min(v.p_chi_upper, v.p_chi_lower) >= kAlpha / 6 && v.p_max >= kAlpha / 3;
  return v;
}

std::string describe(const Verdict& v, int n) {
  std::ostringstream s;
  s << n << " cases: Z = " << v.mean_z << " (p " << v.p_mean << "), T = " << v.chi_square << " (p upper "
    << v.p_chi_upper << ", lower " << v.p_chi_lower << "), max|z| = " << v.max_abs_z << " (p " << v.p_max << ")";
  return s.str();
}

}  // namespace

TEST_CASE("enumerated mean of the stage-1 statistic matches Monte Carlo: pooled z, chi-square and max tests",
          "[property][population][stage1]") {
  std::vector<Draw> draws;
  mha::test::property("one standardized deviation per case, k*d <= 12, N = 5000", kCases, [&] {
    const int d = *rc::gen::inRange(2, 7).as("d");
    const int k = *rc::gen::inRange(1, std::min(d, 12 / d) + 1).as("k");
    mha::test::LayerCase c;
    c.shape = {k, d, *rc::gen::inRange(1, 4).as("m")};
    c.scale = *rc::gen::inRange(1, 8).as("scale");
    c.seed = *rc::gen::arbitrary<uint64_t>().as("seed");
    const int r = *rc::gen::inRange(0, d).as("row"), col = *rc::gen::inRange(0, d).as("column");
    Instance inst;
    inst.layer = mha::test::make_layer(c);
    inst.k = k;
    // 128 bits: the enumeration's rounding (relative < 2^-100) is far below any SE.
    const MatD population = population_stage1_mpfr(inst.layer, k, 128);
    const SampleOracle oracle(inst, c.seed);
    const Stage1Result s = stage1_estimate_wsum(oracle, {kSamples, 1});
    RC_ASSERT(s.samples == kSamples);
    // With d ≥ 2 every entry of the statistic varies (proofs/stage1_identities.md).
    RC_ASSERT(s.standard_error(r, col) > 0);
    RC_TAG(k, d);
    draws.push_back({s.w_hat(r, col), population(r, col), s.standard_error(r, col)});
  });
  const int n = static_cast<int>(draws.size());
  REQUIRE(n == kCases * mha::test::property_scale());
  REQUIRE(n % 2 == 0);
  const Verdict v = pooled_test(draws);
  WARN("stage-1 CLT, " << describe(v, n));
  CHECK(v.accepted);

  SECTION("test of the tester: a bias of 1 SE and an SE half its size are rejected") {
    std::vector<Draw> biased = draws, small_se = draws;
    for (Draw& d : biased) d.estimate += d.standard_error;
    for (Draw& d : small_se) d.standard_error *= 0.5;
    const Verdict vb = pooled_test(biased), vs = pooled_test(small_se);
    INFO("biased: " << describe(vb, n) << "\nSE halved: " << describe(vs, n));
    CHECK_FALSE(vb.accepted);
    CHECK_FALSE(vs.accepted);
    // The closed-form χ² tail for n = 2 is e^{−t/2}, computed by the same operations here.
    CHECK(chi_square_upper(3.0, 2) == std::exp(-1.5));
  }
}
