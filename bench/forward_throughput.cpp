// Forward-pass throughput (Google Benchmark).
//
// Measures, for the shapes (k,d,m) in kShapes:
//  - BM_FastForward/(k,d,m)/threads:T  mha::FastForward::run on a batch of
//    65536 uniform Boolean samples, T = 1 and 2 OpenMP threads. The inputs and
//    the output buffer are prepared outside the timed loop; only run() is timed
//    (wall-clock time). Reports examples/s (items_per_second) and GFLOPs, the
//    useful FLOP rate of the dense formulation:
//        m * (4 k d^2 + 4 k^2 d) FLOPs per example
//    (X Θ: 2kd², logits: 2k²d, A X: 2k²d, (A X) W: 2kd²).
//  - BM_ReferenceForward/(k,d,m)  the MPFR reference path (forward_mpfr_batch,
//    200 bits) on 64 samples; reports examples/s.
//  - BM_GemmPeak  Eigen double GEMM 512×512×512 on one thread; its GFLOPs is
//    the measured achievable double-precision peak of one core, the
//    denominator of the "fraction of peak" column of docs/benchmarks.md.
//
// Run:   scripts/bench-forward.sh            (build, run, write docs/benchmarks.md)
// or:    build/release/mhalearn_bench --benchmark_filter=FastForward
#include "model/inputs.hpp"
#include "model/forward_fast.hpp"
#include "model/forward_reference.hpp"
#include "model/instance_gen.hpp"

#include <Eigen/Core>
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

struct Shape {
  int k, d, m;
};
constexpr Shape kShapes[] = {{2, 16, 2}, {4, 16, 2}, {2, 32, 2}, {4, 32, 3}, {2, 64, 2}, {4, 64, 3}};

constexpr int64_t kFastBatch = 65536;
constexpr int64_t kReferenceBatch = 64;
constexpr unsigned kReferenceBits = 200;
constexpr uint64_t kSeed = 1;

double useful_flops_per_example(const Shape& s) {
  const double k = s.k, d = s.d;
  return s.m * (4 * k * d * d + 4 * k * k * d);
}

std::string shape_name(const Shape& s) {
  char name[48];
  std::snprintf(name, sizeof name, "(%d,%d,%d)", s.k, s.d, s.m);
  return name;
}

// A generated instance; if generation fails, a layer drawn the same way
// (‖Θ_i‖_F = 6, W_i iid N(0, 1/d)) without the condition checks.
mha::Layer make_layer(const Shape& s) {
  mha::GenerateOptions options;
  options.d = s.d;
  options.k = s.k;
  options.m = s.m;
  options.seed = kSeed;
  mha::GenerateResult generated = mha::generate_instance(options);
  if (generated.ok) return generated.instance.layer;

  std::fprintf(stderr, "note: generate_instance failed for %s (%s); using an unchecked Gaussian layer\n",
               shape_name(s).c_str(), generated.error.c_str());
  std::mt19937_64 rng(kSeed);
  std::normal_distribution<double> normal;
  auto gaussian = [&] {
    mha::MatD a(s.d, s.d);
    for (int r = 0; r < s.d; ++r)
      for (int c = 0; c < s.d; ++c) a(r, c) = normal(rng);
    return a;
  };
  mha::Layer layer;
  for (int i = 0; i < s.m; ++i) {
    mha::MatD theta = gaussian();
    theta *= options.scale / theta.norm();
    mha::MatD w = gaussian() / std::sqrt(double(s.d));
    layer.heads.push_back({theta, w});
  }
  return layer;
}

mha::InputBatch boolean_batch(const Shape& s, int64_t count) {
  return mha::draw_inputs(kSeed, mha::Stream::inputs, mha::InputKind::boolean, s.k, s.d, 0, count, 2);
}

void BM_FastForward(benchmark::State& state, Shape s, int threads) {
  const mha::FastForward fast(make_layer(s));
  const mha::InputBatch batch = boolean_batch(s, kFastBatch);
  std::vector<double> y(static_cast<size_t>(kFastBatch) * s.k * s.d);
  if (!fast.run(batch, y.data(), threads).ok()) state.SkipWithError("the fast path cannot answer this batch");  // warm-up: tables and output pages touched

  for (auto _ : state) {
    benchmark::DoNotOptimize(fast.run(batch, y.data(), threads));
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kFastBatch);
  state.counters["GFLOPs"] = benchmark::Counter(kFastBatch * useful_flops_per_example(s) / 1e9,
                                                benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel("chunk_bits=" + std::to_string(fast.chunk_bits()));
}

void BM_ReferenceForward(benchmark::State& state, Shape s) {
  const mha::Layer layer = make_layer(s);
  const mha::InputBatch batch = boolean_batch(s, kReferenceBatch);
  for (auto _ : state) {
    std::vector<double> y = mha::forward_mpfr_batch(layer, batch, kReferenceBits);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * kReferenceBatch);
}

void BM_GemmPeak(benchmark::State& state) {
  constexpr int n = 512;
  Eigen::setNbThreads(1);
  const Eigen::MatrixXd a = Eigen::MatrixXd::Random(n, n);
  const Eigen::MatrixXd b = Eigen::MatrixXd::Random(n, n);
  Eigen::MatrixXd c(n, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPs"] =
      benchmark::Counter(2.0 * n * n * n / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::RegisterBenchmark("BM_GemmPeak", BM_GemmPeak)->Unit(benchmark::kMillisecond);
  for (const Shape& s : kShapes)
    for (int threads : {1, 2}) {
      const std::string name = "BM_FastForward/" + shape_name(s) + "/threads:" + std::to_string(threads);
      benchmark::RegisterBenchmark(name.c_str(), BM_FastForward, s, threads)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  for (const Shape& s : kShapes) {
    const std::string name = "BM_ReferenceForward/" + shape_name(s);
    benchmark::RegisterBenchmark(name.c_str(), BM_ReferenceForward, s)->Unit(benchmark::kMillisecond);
  }

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
