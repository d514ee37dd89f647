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
//
// Gaussian inputs (MATH.md §3.10, Lemma 3.10.1; proofs/gaussian_inputs.md): the
// identities of Lemmas 3.1.1–3.1.2 use only E[x_t x_sᵀ] = δ_ts I_d and hold for
// Gaussian tokens too, but nothing can be enumerated. Each claim gets its own 32
// Monte Carlo cases on the project's Gaussian inputs (draw_inputs), each one
// standardized deviation against the closed-form population value with the
// sample standard error, and the same three pooled tests at α = 1e−4 per claim:
// E[XᵀAX] = Tr(A)I, (1/k)E[XᵀJSX] = I, and stage 1's fast statistic
// (stage1_estimate_wsum on a Gaussian instance) where every M(Θ_i) = I — Θ_i = 0,
// or k = 1 — so that its population value is W_Σ exactly. Power at n = 32: a
// bias of 1 SE moves Z by √32 ≈ 5.7 (p ≈ 1.5e−8 < α/3); a halved SE makes T ≈ 4χ²_32.
// Tests of the tester: both wrong statistics again, and the Boolean enumeration
// taken as the population value of Gaussian inputs with Θ ≠ 0 (what `mhalearn
// stage1 --reference` reported on a Gaussian instance) is rejected.
#include "data/population.hpp"
#include "generators.hpp"
#include "property.hpp"
#include "model/inputs.hpp"
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

namespace {

constexpr int kGaussianCases = 32;          // per claim; even
constexpr int64_t kGaussianDraws = 4000;    // Monte Carlo draws per case (the identities)

// Mean and sample standard error of entry(X) over the case's Gaussian draws (Welford).
template <class Entry>
Draw gaussian_monte_carlo(uint64_t seed, int k, int d, double population, Entry&& entry) {
  const InputBatch batch = draw_inputs(seed, Stream::test_inputs, InputKind::gaussian, k, d, 0, kGaussianDraws, 1);
  double mean = 0, m2 = 0;
  for (int64_t i = 0; i < batch.count; ++i) {
    const double v = entry(batch.sample(i));
    const double delta = v - mean;
    mean += delta / double(i + 1);
    m2 += delta * (v - mean);
  }
  const double n = double(batch.count);
  return {mean, population, std::sqrt(m2 / (n - 1) / n)};
}

// A k×k matrix with entries in {−1, −½, 0, ½, 1}, not all zero.
MatD small_matrix(int k, const char* name) {
  MatD a(k, k);
  for (int r = 0; r < k; ++r)
    for (int c = 0; c < k; ++c) a(r, c) = *rc::gen::inRange(-2, 3).as(name) / 2.0;
  if (a.cwiseAbs().maxCoeff() == 0) a(0, 0) = 1;
  return a;
}

void require_accepted(const std::vector<Draw>& draws, const char* claim) {
  const int n = static_cast<int>(draws.size());
  REQUIRE(n == kGaussianCases * mha::test::property_scale());
  const Verdict v = pooled_test(draws);
  WARN(claim << ", " << describe(v, n));
  CHECK(v.accepted);
  std::vector<Draw> biased = draws, small_se = draws;
  for (Draw& d : biased) d.estimate += d.standard_error;
  for (Draw& d : small_se) d.standard_error *= 0.5;
  INFO("test of the tester, " << claim << ": biased " << describe(pooled_test(biased), n) << "; SE halved "
                              << describe(pooled_test(small_se), n));
  CHECK_FALSE(pooled_test(biased).accepted);
  CHECK_FALSE(pooled_test(small_se).accepted);
}

// The stage-1 fast statistic on a Gaussian instance, one random entry against `population`.
Draw gaussian_stage1_draw(const Instance& inst, uint64_t seed, const MatD& population) {
  const int d = inst.d();
  const int r = *rc::gen::inRange(0, d).as("row"), col = *rc::gen::inRange(0, d).as("column");
  const SampleOracle oracle(inst, seed);
  const Stage1Result s = stage1_estimate_wsum(oracle, {kSamples, 1});
  RC_ASSERT(s.samples == kSamples);
  RC_ASSERT(s.standard_error(r, col) > 0);
  return {s.w_hat(r, col), population(r, col), s.standard_error(r, col)};
}

}  // namespace

TEST_CASE("Gaussian inputs: E[X^T A X] = Tr(A) I and (1/k) E[X^T J S X] = I by Monte Carlo, and a test of the tester",
          "[property][population][stage1][gaussian]") {
  std::vector<Draw> quadratic, pattern;
  mha::test::property("Gaussian X: one standardized deviation of X^T A X per case, N = 4000", kGaussianCases, [&] {
    const int d = *rc::gen::inRange(1, 9).as("d"), k = *rc::gen::inRange(1, 5).as("k");
    const int r = *rc::gen::inRange(0, d).as("row"), col = *rc::gen::inRange(0, d).as("column");
    const MatD a = small_matrix(k, "A entry (halves)");
    const uint64_t seed = *rc::gen::arbitrary<uint64_t>().as("seed");
    const Draw draw = gaussian_monte_carlo(seed, k, d, r == col ? a.trace() : 0.0,
                                           [&](const MatD& x) { return (x.transpose() * a * x)(r, col); });
    RC_ASSERT(draw.standard_error > 0);
    quadratic.push_back(draw);
  });
  require_accepted(quadratic, "E[X^T A X] = Tr(A) I (Gaussian)");
  mha::test::property("Gaussian X: one standardized deviation of (1/k) X^T J S X per case, N = 4000", kGaussianCases, [&] {
    const int d = *rc::gen::inRange(1, 9).as("d"), k = *rc::gen::inRange(1, 5).as("k");
    const int r = *rc::gen::inRange(0, d).as("row"), col = *rc::gen::inRange(0, d).as("column");
    MatD s = small_matrix(k, "S weight (halves)").cwiseAbs() + MatD::Constant(k, k, 0.25);
    for (int row = 0; row < k; ++row) s.row(row) /= s.row(row).sum();  // row-stochastic
    const MatD j = MatD::Ones(k, k);
    const uint64_t seed = *rc::gen::arbitrary<uint64_t>().as("seed");
    const Draw draw = gaussian_monte_carlo(seed, k, d, r == col ? 1.0 : 0.0,
                                           [&](const MatD& x) { return (x.transpose() * j * s * x)(r, col) / k; });
    RC_ASSERT(draw.standard_error > 0);
    pattern.push_back(draw);
  });
  require_accepted(pattern, "(1/k) E[X^T J S X] = I (Gaussian)");
}

TEST_CASE("Gaussian inputs: stage 1's statistic is unbiased for W_sum where every M(Theta_i) = I, and a test of the tester",
          "[property][population][stage1][gaussian]") {
  std::vector<Draw> draws;
  mha::test::property("Gaussian instance with Theta_i = 0 (k >= 2) or k = 1: one standardized deviation per case, N = 5000",
                      kGaussianCases, [&] {
    const int d = *rc::gen::inRange(2, 9).as("d");
    const int k = *rc::gen::inRange(1, std::min(d, 4) + 1).as("k");
    mha::test::LayerCase c;
    c.shape = {k, d, *rc::gen::inRange(1, 4).as("m")};
    c.scale = *rc::gen::inRange(1, 8).as("scale");
    c.seed = *rc::gen::arbitrary<uint64_t>().as("seed");
    Instance inst;
    inst.layer = mha::test::make_layer(c);
    inst.k = k;
    inst.inputs = InputKind::gaussian;
    if (k >= 2)  // M(0) = I; with k = 1 the softmax is 1 whatever Θ
      for (auto& h : inst.layer.heads) h.theta.setZero();
    RC_TAG(k == 1 ? "k = 1, Theta as drawn" : "Theta_i = 0");
    draws.push_back(gaussian_stage1_draw(inst, c.seed, inst.layer.w_sum()));
  });
  require_accepted(draws, "stage 1 at M(Theta_i) = I (Gaussian)");

  SECTION("test of the tester: the Boolean enumeration as the population value of Gaussian inputs is rejected") {
    std::vector<Draw> wrong;
    // 12 cases and a 64-bit enumeration: enough, the rejection is by far (proofs/gaussian_inputs.md, "Measured").
    mha::test::property("Gaussian instance, Theta != 0, against the Boolean population value", 12, [&] {
      const int d = *rc::gen::inRange(2, 7).as("d");
      const int k = *rc::gen::inRange(2, std::min(d, 12 / d) + 1).as("k");
      mha::test::LayerCase c;
      c.shape = {k, d, *rc::gen::inRange(1, 4).as("m")};
      c.scale = *rc::gen::element(3.0, 6.0).as("scale");
      c.seed = *rc::gen::arbitrary<uint64_t>().as("seed");
      Instance inst;
      inst.layer = mha::test::make_layer(c);
      inst.k = k;
      inst.inputs = InputKind::gaussian;
      wrong.push_back(gaussian_stage1_draw(inst, c.seed, population_stage1_mpfr(inst.layer, k, 64)));
    });
    const Verdict v = pooled_test(wrong);
    INFO("Boolean population for Gaussian inputs: " << describe(v, int(wrong.size())));
    CHECK_FALSE(v.accepted);
  }
}
