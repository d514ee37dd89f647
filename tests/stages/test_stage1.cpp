#include "test_tolerances.hpp"
#include "data/population.hpp"
#include "numeric/precision.hpp"
#include "generators.hpp"
#include "instances.hpp"
#include "stages/stage1/check.hpp"
#include "stages/stage1/wsum.hpp"
#include "thread_ranks.hpp"

#include <catch2/catch.hpp>

#include <cstring>

using namespace mha;

namespace {
// k = 3, d = 8, m = 2 at logit scale 4: the determinism tests' instance.
Instance determinism_instance() {
  test::LayerCase c;
  c.shape = {3, 8, 2};
  c.scale = 4;
  c.seed = 5;
  Instance inst;
  inst.layer = test::make_layer(c);
  inst.k = 3;
  return inst;
}
}  // namespace

TEST_CASE("stage 1 is bit-identical for any thread count", "[stage1][determinism]") {
  const Instance inst = determinism_instance();
  const SampleOracle oracle(inst, 17);
  const Stage1Result one = stage1_estimate_wsum(oracle, {70000, 1});
  const Stage1Result two = stage1_estimate_wsum(oracle, {70000, 2});
  REQUIRE(one.samples == 70000);
  REQUIRE(std::memcmp(one.w_hat.data(), two.w_hat.data(), 64 * sizeof(double)) == 0);
  REQUIRE(std::memcmp(one.standard_error.data(), two.standard_error.data(), 64 * sizeof(double)) == 0);
}

TEST_CASE("stage 1 shared by 2 and 3 processes is bit-identical to one process", "[stage1][determinism]") {
  // 300001 samples: 74 blocks of 4096 over two batches of 64 blocks, the last block short.
  const Instance inst = determinism_instance();
  const SampleOracle oracle(inst, 17);
  const Stage1Result one = stage1_estimate_wsum(oracle, {300001, 1});
  REQUIRE(one.samples_by_process == std::vector<int64_t>{300001});
  for (int size : {2, 3}) {
    std::vector<Stage1Result> shared(static_cast<size_t>(size));
    test::run_as_ranks(size, [&](const Processes& p) {  // no Catch assertion in a rank's thread: they are not thread-safe
      Stage1Options o{300001, 1};
      o.processes = p;
      shared[static_cast<size_t>(p.rank)] = stage1_estimate_wsum(oracle, o);
    });
    for (int rank = 0; rank < size; ++rank) {
      const Stage1Result& r = shared[static_cast<size_t>(rank)];
      INFO(size << " processes, rank " << rank);
      CHECK(r.samples == one.samples);
      CHECK(std::memcmp(r.w_hat.data(), one.w_hat.data(), 64 * sizeof(double)) == 0);
      CHECK(std::memcmp(r.standard_error.data(), one.standard_error.data(), 64 * sizeof(double)) == 0);
      int64_t sum = 0;
      for (int64_t n : r.samples_by_process) sum += n;
      CHECK(sum == 300001);
      CHECK(r.samples_by_process.size() == static_cast<size_t>(size));
    }
  }
  // The tester: a process that adds only its own blocks gets another Ŵ.
  Stage1Options alone{300001, 1};
  alone.processes.rank = 1;
  alone.processes.size = 2;
  alone.processes.all_gather = [](const std::vector<double>& mine) {  // the others' blocks as zeros
    std::vector<double> all(mine.size() * 2, 0.0);
    std::copy(mine.begin(), mine.end(), all.begin() + static_cast<std::ptrdiff_t>(all.size() - mine.size()));
    return all;
  };
  const Stage1Result own = stage1_estimate_wsum(oracle, alone);
  CHECK(std::memcmp(own.w_hat.data(), one.w_hat.data(), 64 * sizeof(double)) != 0);
}

TEST_CASE("population stage-1 value is Σ_i M(Θ_i) W_i", "[stage1][population]") {
  test::LayerCase c;
  c.shape = {2, 4, 2};
  c.scale = 3;
  c.seed = 9;
  const Layer layer = test::make_layer(c);
  ScopedPrecision precision(200);
  const LayerT<Mpfr> ref = convert_layer<Mpfr>(layer);
  Mat<Mpfr> expected = Mat<Mpfr>::Zero(4, 4);
  for (const auto& h : ref.heads) expected += population_m<Mpfr>(h.theta, 2) * h.w;
  const Mat<Mpfr> got = population_stage1<Mpfr>(ref, 2);
  // The same expectation summed in two ways at 200 bits. With ±1 tokens and rows of
  // A summing to 1, every entry of (1/k) Xᵀ J A X is at most k, so each term of entry
  // (p, c) is at most k Σ_i Σ_j |W_i[j, c]| on both sides; 2^{kd} = 256 inputs and
  // fewer than 2^20 roundings along any path (the difference and its conversion to
  // double included in the evaluation factor).
  double term_size = 0;
  for (const auto& h : layer.heads) term_size += h.w.cwiseAbs().colwise().sum().maxCoeff();
  term_size *= c.shape.k * tolerance::bound_evaluation_factor(16);
  CHECK(to_double_matrix<Mpfr>(got - expected).cwiseAbs().maxCoeff() <=
        tolerance::reference_reorder(200, int64_t{1} << 20) * term_size);
  // The double instantiation of M(Θ) agrees with MPFR to double accuracy.
  const MatD m_double = population_m<double>(layer.heads[0].theta, 2);
  const MatD m_mpfr = to_double_matrix<Mpfr>(population_m<Mpfr>(ref.heads[0].theta, 2));
  CHECK((m_double - m_mpfr).cwiseAbs().maxCoeff() < 1e-12);
}

TEST_CASE("accumulate_stage1_statistic adds (1/k)(Σ_t x_t)ᵀ(Σ_t y_t) and its entrywise square", "[stage1][hardening]") {
  MatD x(2, 2), y(2, 2);
  x << 1, 2, 3, 4;    // Σ_t x_t = (4, 6)
  y << 1, -1, 2, 0.5; // Σ_t y_t = (3, −0.5)
  MatD sum = MatD::Ones(2, 2), sum_sq = MatD::Zero(2, 2);
  accumulate_stage1_statistic(x, y, sum, sum_sq);
  MatD s(2, 2);
  s << 6, -1, 9, -1.5;  // (4, 6)ᵀ (3, −0.5) / 2
  CHECK((sum == MatD::Ones(2, 2) + s));
  CHECK((sum_sq == s.cwiseProduct(s)));
}

namespace {
// Two samples, k = 2, d = 1: X₁ = (1, 1), Y₁ = (0.5, 0.25); X₂ = (1, −1), Y₂ = (0.125, 1).
// Their statistics (1/k)(Σx)(Σy) are 0.75 and 0 (exact), so Ŵ = 0.375.
DatasetSource two_samples() {
  const std::vector<double> x = {1, 1, 1, -1}, y = {0.5, 0.25, 0.125, 1};
  return DatasetSource(dense_batch_from_values(x, 2, 2, 1), y);
}
}  // namespace

TEST_CASE("stage 1's same-sample bound equals its formula on hand-computed samples", "[stage1][tolerance]") {
  // With the source's own labels (no propagated label error) the bound is
  // (γ_{N+2k} Σ_n |s_n| / N + u|Ŵ|)·bound_evaluation_factor(N + 2k + 8) =
  // (γ_6·0.75/2 + 0.375u)(1 + γ_15); expected: mpmath at 300 bits, rounded once.
  // A bound N times (or 10 times) too loose is off by far more than γ_20.
  const DatasetSource source = two_samples();
  const Stage1SameSampleCheck s = stage1_same_sample_check(source, nullptr, 0, 2, 128);
  REQUIRE(s.samples == 2);
  CHECK(s.reference(0, 0) == 0.375);
  CHECK(s.fast(0, 0) == 0.375);
  const double exact = 2.914335439641042436e-16;
  CHECK(std::abs(s.bound(0, 0) - exact) <= tolerance::gamma(20) * exact);
}

TEST_CASE("stage 1's check rejects an estimate three bounds away and accepts one half a bound away", "[stage1][verify]") {
  // A fault a few bounds out, not millions: a bound loosened 10× (or N×, here N = 500)
  // would accept the first of these.
  const Instance inst = test::generated_instance(8, 2, 2, 3.0, 4);
  const SampleOracle oracle(inst, 3);
  const Stage1SameSampleCheck clean = stage1_same_sample_check(oracle, nullptr, 0, 500, 128);
  REQUIRE(clean.max_ratio <= 1.0);
  auto moved_by = [&](double bounds) {
    return [&clean, bounds](const SampleSource& s, const Stage1Options& o) {
      Stage1Result r = stage1_estimate_wsum(s, o);
      r.w_hat(0, 0) = clean.reference(0, 0) + bounds * clean.bound(0, 0);
      return r;
    };
  };
  CHECK(disagrees(check_stage1(oracle, nullptr, 0, 500, moved_by(3.0))));
  CHECK_FALSE(disagrees(check_stage1(oracle, nullptr, 0, 500, moved_by(0.5))));
  // The same with the labels recomputed in MPFR (the bound then carries the forward pass's error).
  const Stage1SameSampleCheck layered = stage1_same_sample_check(oracle, &inst.layer, 0, 500, 128);
  auto layered_by = [&](double bounds) {
    return [&layered, bounds](const SampleSource& s, const Stage1Options& o) {
      Stage1Result r = stage1_estimate_wsum(s, o);
      r.w_hat(0, 0) = layered.reference(0, 0) + bounds * layered.bound(0, 0);
      return r;
    };
  };
  CHECK(disagrees(check_stage1(oracle, &inst.layer, 0, 500, layered_by(3.0))));
  CHECK_FALSE(disagrees(check_stage1(oracle, &inst.layer, 0, 500, layered_by(0.5))));
}
