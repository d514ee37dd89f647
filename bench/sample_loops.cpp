// The sample loop of stages 2 and 4 against its floor (Google Benchmark).
//
// Every sample the learner certifies costs at least its label: one fast forward
// pass (BM_FastForward in forward_throughput.cpp, same shapes). Measured here,
// for the shapes (k,d,m) in kLoopShapes and T = 1 and 2 OpenMP threads:
//  - BM_OracleDraw/(k,d,m)/threads:T  SampleOracle::draw_into of 65536 samples
//    into a reused batch: the inputs drawn from their counter-based stream and
//    labelled by the fast forward pass. Examples/s.
//  - BM_SculptLoop/(k,d,m)/threads:T  stage 4's sample loop (sculpt_slabs) as
//    the learner's final round runs it (sculpt_round_options of the default
//    LearnOptions at round 1: best rows, pairwise v_min, distinct slabs, its
//    σ_min; assumed ‖W_Σ − Ŵ‖ 1e−3) with Ŵ the instance's exact W_Σ, over
//    2^21 samples (32 of its batches; the learner's final round draws 3.2·10⁷).
//    The body's least-squares centre that follows the loop is not timed (at
//    d = 64 it alone takes tens of seconds). Examples/s.
// scripts/bench-sample-loops.sh runs them beside BM_FastForward in one run and
// writes docs/bench/sample_loops.md (the ratio to the floor, the profile).
#include "data/oracle.hpp"
#include "learn/learner.hpp"
#include "model/instance_gen.hpp"
#include "stages/stage2/sculpt.hpp"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

namespace {

struct LoopShape {
  int k, d, m;
};
constexpr LoopShape kLoopShapes[] = {{2, 16, 2}, {2, 32, 2}, {2, 64, 2}};
constexpr int64_t kDrawBatch = 65536;
constexpr int64_t kLoopSamples = 32 * 65536;
constexpr uint64_t kSeed = 1;

std::string loop_shape_name(const LoopShape& s) {
  char name[48];
  std::snprintf(name, sizeof name, "(%d,%d,%d)", s.k, s.d, s.m);
  return name;
}

mha::Instance make_instance(const LoopShape& s) {
  mha::GenerateOptions options;
  options.d = s.d;
  options.k = s.k;
  options.m = s.m;
  options.seed = kSeed;
  return mha::generate_instance(options).instance;
}

void BM_OracleDraw(benchmark::State& state, LoopShape s, int threads) {
  const mha::Instance instance = make_instance(s);
  const mha::SampleOracle oracle(instance, kSeed);
  mha::LabelledBatch batch;
  oracle.draw_into(0, kDrawBatch, threads, batch);  // warm-up: pages touched
  uint64_t first = 0;
  for (auto _ : state) {
    oracle.draw_into(first, kDrawBatch, threads, batch);
    first += kDrawBatch;
    benchmark::DoNotOptimize(batch.y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kDrawBatch);
}

void BM_SculptLoop(benchmark::State& state, LoopShape s, int threads) {
  const mha::Instance instance = make_instance(s);
  const mha::SampleOracle oracle(instance, kSeed);
  mha::LearnOptions learn;
  learn.m = s.m;
  learn.threads = threads;
  mha::SculptOptions o = mha::sculpt_round_options(learn, 1, s.d, s.k, 1e-3).sculpt;
  o.max_samples = kLoopSamples;
  const mha::MatD w_sum = instance.layer.w_sum();
  int64_t certified = 0;
  for (auto _ : state) {
    const mha::SculptResult r = mha::sculpt_slabs(oracle, w_sum, o);
    certified = r.report.rows_certified;
    benchmark::DoNotOptimize(r.body.size());
  }
  state.SetItemsProcessed(state.iterations() * kLoopSamples);
  state.counters["rows_certified"] = static_cast<double>(certified);
}

const bool registered = [] {
  for (const LoopShape& s : kLoopShapes)
    for (int threads : {1, 2}) {
      const std::string suffix = loop_shape_name(s) + "/threads:" + std::to_string(threads);
      benchmark::RegisterBenchmark(("BM_OracleDraw/" + suffix).c_str(), BM_OracleDraw, s, threads)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("BM_SculptLoop/" + suffix).c_str(), BM_SculptLoop, s, threads)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  return true;
}();

}  // namespace
