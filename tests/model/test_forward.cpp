#include "test_tolerances.hpp"
#include "model/inputs.hpp"
#include "model/forward_error.hpp"
#include "model/forward_fast.hpp"
#include "model/forward_reference.hpp"
#include "model/reference.hpp"
#include "generators.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

using namespace mha;

namespace {
Layer layer_for(int k, int d, int m, double scale, uint64_t seed) {
  test::LayerCase c;
  c.shape = {k, d, m};
  c.scale = scale;
  c.seed = seed;
  return test::make_layer(c);
}

// The outputs of a batch the fast path must answer.
std::vector<double> answered(const FastForwardResult& r) {
  REQUIRE(r.status.ok());
  return r.y;
}
}  // namespace

TEST_CASE("a hand-computed forward pass", "[forward]") {
  // d = 1, k = 2, one head Θ = [ln 3], W = [2]: X = [1; -1] gives logits
  // [[ln3, -ln3], [-ln3, ln3]], rows softmax to (9/10, 1/10) and (1/10, 9/10),
  // so F = A X W = [[ (9/10 - 1/10)·2 ], [ (1/10 - 9/10)·2 ]] = [[1.6], [-1.6]].
  Layer layer;
  layer.heads.push_back({MatD::Constant(1, 1, std::log(3.0)), MatD::Constant(1, 1, 2.0)});
  MatD x(2, 1);
  x << 1, -1;
  const MatD ref = forward_mpfr(layer, x, 200);
  // The 200-bit reference takes fewer than 64 roundings along any path at this size.
  CHECK(ref(0, 0) == Approx(1.6).epsilon(tolerance::reference_in_double_relative(200, 64)));
  CHECK(ref(1, 0) == Approx(-1.6).epsilon(tolerance::reference_in_double_relative(200, 64)));
  std::vector<double> scratch;
  MatD fast(2, 1);
  REQUIRE(FastForward(layer).forward_dense(x.data(), 2, fast.data(), scratch));
  CHECK(std::abs(fast(0, 0) - 1.6) <= forward_error_bound(layer, x)(0, 0));
}

TEST_CASE("fast forward is bit-identical for any thread count and batch split", "[forward][determinism]") {
  for (InputKind kind : {InputKind::boolean, InputKind::gaussian}) {
    const Layer layer = layer_for(3, 24, 2, 5.0, 11);
    const FastForward fast(layer);
    const InputBatch all = draw_inputs(5, Stream::inputs, kind, 3, 24, 0, 1000, 2);
    const std::vector<double> y1 = answered(fast.run(all, 1)), y2 = answered(fast.run(all, 2));
    REQUIRE(std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(double)) == 0);
    // Samples 400..999 drawn as their own batch give the same bytes.
    const InputBatch tail = draw_inputs(5, Stream::inputs, kind, 3, 24, 400, 600, 1);
    const std::vector<double> yt = answered(fast.run(tail, 2));
    REQUIRE(std::memcmp(yt.data(), y1.data() + 400 * 3 * 24, yt.size() * sizeof(double)) == 0);
  }
}

TEST_CASE("both table widths agree with the reference", "[forward]") {
  // d = 64, m = 3: the 8-bit table would exceed 2 MiB, so 4-bit chunks are used.
  for (auto [d, m, bits] : {std::tuple{16, 2, 8}, std::tuple{64, 3, 4}, std::tuple{20, 2, 8}, std::tuple{70, 1, 4}}) {
    const Layer layer = layer_for(4, d, m, 6.0, 3);
    const FastForward fast(layer);
    CHECK(fast.chunk_bits() == bits);
    const InputBatch batch = draw_inputs(9, Stream::inputs, InputKind::boolean, 4, d, 0, 5, 1);
    const std::vector<double> y = answered(fast.run(batch, 1));
    for (int64_t i = 0; i < batch.count; ++i) {
      const MatD x = batch.sample(i);
      const MatD ref = forward_mpfr(layer, x, 200);
      const MatD got = Eigen::Map<const MatD>(y.data() + i * 4 * d, 4, d);
      const MatD bound = forward_error_bound(layer, x) + ref.cwiseAbs() * tolerance::kDoubleUnitRoundoff;
      CHECK(((got - ref).cwiseAbs() - bound).maxCoeff() <= 0.0);
    }
  }
}

TEST_CASE("logits of ±1e6 give finite outputs on both paths", "[forward][softmax]") {
  const Layer layer = layer_for(4, 8, 2, 1e6, 2);
  const InputBatch batch = draw_inputs(1, Stream::inputs, InputKind::boolean, 4, 8, 0, 50, 1);
  const std::vector<double> y = answered(FastForward(layer).run(batch, 1));
  for (double v : y) REQUIRE(std::isfinite(v));
  const MatD ref = forward_mpfr(layer, batch.sample(0), 200);
  REQUIRE(ref.allFinite());
}

TEST_CASE("Boolean bits decode to the documented layout", "[inputs]") {
  // Bit j of token t is bit (j mod 256) of Philox block (seed, inputs, n, t, j/256).
  const int k = 2, d = 300;
  std::vector<uint64_t> words(k * words_per_token(d));
  boolean_sample_bits(42, Stream::inputs, 7, k, d, words.data());
  for (int t = 0; t < k; ++t)
    for (int j = 0; j < d; ++j) {
      const auto block = philox_block(42, Stream::inputs, 7, t, j / 256);
      const bool expected = (block[(j % 256) / 64] >> (j % 64)) & 1u;
      REQUIRE(((words[t * words_per_token(d) + j / 64] >> (j % 64)) & 1u) == expected);
    }
  // Bits beyond d are zero.
  REQUIRE((words[words_per_token(d) - 1] >> (d % 64)) == 0);
}

TEST_CASE("inputs have the right first two moments", "[inputs]") {
  for (InputKind kind : {InputKind::boolean, InputKind::gaussian}) {
    const int64_t n = 20000;
    const InputBatch b = draw_inputs(3, Stream::inputs, kind, 2, 8, 0, n, 2);
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i) {
      const MatD x = b.sample(i);
      sum += x.sum();
      sq += x.squaredNorm();
    }
    const double cnt = n * 16.0;
    // Mean 0 with standard error 1/sqrt(cnt) ≈ 0.0018; 5 SE.
    CHECK(std::abs(sum / cnt) < 5 / std::sqrt(cnt));
    // E[x²] = 1; Boolean exactly, Gaussian with SE sqrt(2/cnt).
    CHECK(std::abs(sq / cnt - 1) < 5 * std::sqrt(2 / cnt));
  }
}

TEST_CASE("the fast path reports inputs whose logits overflow instead of returning NaN", "[forward][overflow]") {
  // Regression: Gaussian-style inputs with entries of 1e154 and more made the logits
  // ±inf and softmax compute inf − inf, so forward wrote all-NaN outputs with
  // exit 0, while the reference path answers.
  const int k = 2, d = 4;
  const Layer layer = layer_for(k, d, 2, 1.0, 5);
  const FastForward fast(layer);
  InputBatch batch = draw_inputs(3, Stream::inputs, InputKind::gaussian, k, d, 0, 4, 1);
  std::vector<double> values = batch.values;
  for (int j = 0; j < k * d; ++j) values[2 * k * d + j] *= 1e160;  // sample 2 only: logits ~1e320
  const InputBatch big = dense_batch_from_values(values, 4, k, d);
  std::vector<double> y(values.size());
  const FastForwardStatus status = fast.run(big, y.data(), 2);
  CHECK_FALSE(status.ok());
  CHECK(status.first_unanswered == 2);
  CHECK_THAT(status.message(), Catch::Contains("sample 2") && Catch::Contains("not finite"));
  // The samples before it are answered as usual.
  const std::vector<double> small = answered(fast.run(batch, 1));
  CHECK(std::memcmp(y.data(), small.data(), 2 * k * d * sizeof(double)) == 0);
  // One sample alone: the per-sample entry point says so too.
  std::vector<double> scratch, one(k * d);
  CHECK_FALSE(fast.forward_dense(values.data() + 2 * k * d, k, one.data(), scratch));
  // The reference path answers the same sample with finite values.
  CHECK(forward_mpfr(layer, big.sample(2), 200).allFinite());
}

TEST_CASE("the fast path reports outputs that overflow with finite logits", "[forward][overflow]") {
  // Θ = 0 keeps every logit 0; W of 1e300 makes x W overflow for |x| ~ 1e10.
  Layer layer;
  layer.heads.push_back({MatD::Zero(2, 2), MatD::Constant(2, 2, 1e300)});
  const FastForward fast(layer);
  const std::vector<double> x = {1e10, 1e10, 1.0, 1.0};
  std::vector<double> scratch, y(4);
  CHECK_FALSE(fast.forward_dense(x.data(), 2, y.data(), scratch));
  CHECK(fast.answers_all_inputs(1.0));
  CHECK_FALSE(fast.answers_all_inputs(1e10));
}

TEST_CASE("answers_all_inputs is an a priori bound the fast path never breaks", "[forward][overflow]") {
  // Σ|Θ| = 2^992 and column sums of W of 2^991, against the limit 2^1024·2^-16:
  // a = 1 passes, a = 2^20 (a² Σ|Θ| = 2^1032) fails.
  Layer layer;
  layer.heads.push_back({MatD::Constant(2, 2, 0x1p990), MatD::Constant(2, 2, 0x1p990)});
  const FastForward fast(layer);
  CHECK(fast.answers_all_inputs(1.0));
  CHECK_FALSE(fast.answers_all_inputs(0x1p20));
  // Inputs at the bound are answered: the Boolean extremes, all signs.
  for (int pattern = 0; pattern < 16; ++pattern) {
    std::vector<double> x(4), y(4), scratch;
    for (int j = 0; j < 4; ++j) x[j] = (pattern >> j) & 1 ? 1.0 : -1.0;
    CHECK(fast.forward_dense(x.data(), 2, y.data(), scratch));
  }
}

TEST_CASE("the fast path reports a logit that overflows to −∞ even when every output stays finite", "[forward][overflow]") {
  // Θ = [[0, 10²⁰⁰], [0, 0]], W = I, X = [(1, 1), (1, −10²⁰⁰)]: L[a,b] = x_a[0]·10²⁰⁰·x_b[1],
  // so L[·,0] = 10²⁰⁰ and L[·,1] = −10⁴⁰⁰ = −∞ in double. Softmax puts all the weight on
  // token 0 either way, and F = A X W = rows (1, 1): finite. The fast path's contract
  // (forward_fast.hpp) is to answer only when every logit is finite too, because
  // an infinite logit can as well be +∞ − +∞ elsewhere; a fast path that checked
  // only its outputs would return this sample.
  Layer layer;
  MatD theta = MatD::Zero(2, 2);
  theta(0, 1) = 1e200;
  layer.heads.push_back({theta, MatD::Identity(2, 2)});
  const std::vector<double> x = {1.0, 1.0, 1.0, -1e200};
  const MatD xm = Eigen::Map<const MatD>(x.data(), 2, 2);
  // The case is the one described: some logit infinite, every output finite.
  const MatD logits = xm * theta * xm.transpose();
  REQUIRE(std::isinf(logits(0, 1)));
  REQUIRE(std::isfinite(logits(0, 0)));
  const MatD outputs = attention<double>(theta, xm) * xm;
  REQUIRE(outputs.allFinite());
  const FastForward fast(layer);
  std::vector<double> scratch, y(4);
  CHECK_FALSE(fast.forward_dense(x.data(), 2, y.data(), scratch));
  const InputBatch batch = dense_batch_from_values(x, 1, 2, 2);
  CHECK(fast.run(batch, 1).status.first_unanswered == 0);
  // The reference path answers it.
  CHECK(forward_mpfr(layer, xm, 200).allFinite());
}

TEST_CASE("forward_error_bound equals its formula on a hand-computed case, the logit term included", "[forward][tolerance]") {
  // d = 1, k = 2, one head Θ = fl(ln 3), W = 2, X = [1; −1] (proofs/forward_error_bound.md):
  // P = XΘ exact, e_p = γ_1 t, logit error δ = γ_1(t + 2γ_1 t) + γ_1 t (the second term is
  // the logit part's own error of P), span 2t + 4δ, then the softmax chain and
  // e_a z_max + ez_max + γ_2(1 + e_a) z_max, times the evaluation factor 1 + 10⁻⁹.
  // Expected: the formula in mpmath at 300 bits, rounded once. Without the logit
  // term the value is 3.684e-15 (11.7% lower): the pin tells them apart.
  Layer layer;
  layer.heads.push_back({MatD::Constant(1, 1, std::log(3.0)), MatD::Constant(1, 1, 2.0)});
  MatD x(2, 1);
  x << 1, -1;
  const MatD bound = forward_error_bound(layer, x);
  const double exact = 4.1719735062470508e-15;
  for (int a = 0; a < 2; ++a) CHECK(std::abs(bound(a, 0) - exact) <= tolerance::gamma(20) * exact);
}

TEST_CASE("design_route_error_bound equals its formula on the same hand-computed case", "[forward][tolerance][polish]") {
  // The case above through polishing's design route (proofs/forward_error_bound.md,
  // "The design route (polishing)"): the same ε_A, then (ε_A + γ_2(1 + ε_A) +
  // γ_1(1 + ε_A)(1 + γ_2))·max|X|·|W|, times bound_evaluation_factor(47) = 1 + γ_48.
  // Expected: the formula in mpmath at 300 bits, rounded once.
  Layer layer;
  layer.heads.push_back({MatD::Constant(1, 1, std::log(3.0)), MatD::Constant(1, 1, 2.0)});
  MatD x(2, 1);
  x << 1, -1;
  const MatD bound = design_route_error_bound(layer, x);
  const double exact = 4.1719735020750994e-15;
  for (int a = 0; a < 2; ++a) CHECK(std::abs(bound(a, 0) - exact) <= tolerance::gamma(20) * exact);
  // The design alone: (ε_A + γ_2(1 + ε_A))·max|X|·(1 + γ_48), in head 1's block.
  const MatD design = design_error_bound(layer, x);
  CHECK(design.rows() == 2);
  CHECK(design.cols() == 1);
  const double design_exact = 1.9749644485750333e-15;
  for (int a = 0; a < 2; ++a) CHECK(std::abs(design(a, 0) - design_exact) <= tolerance::gamma(20) * design_exact);
}
