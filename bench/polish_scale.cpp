// Polishing alone (stages/polish/polish.hpp) at (d, k, m) = (d, 2, 2), logit scale 6,
// from the truth with Θ moved by a relative 10⁻³ and W scaled by 1 + 10⁻³ —
// a start near the truth, independent of the paper's stages
// (docs/benchmarks.md, "Polishing"). One iteration per size (seconds, not
// microseconds); counters: the max relative parameter error after polishing,
// Levenberg–Marquardt iterations, conjugate-gradient iterations (0: dense).
//
//   build/release/mhalearn_bench --benchmark_filter=BM_Polish
//
// Arguments: d, solver (0 automatic, 1 dense, 2 matrix-free), threads, the most
// Levenberg–Marquardt iterations (0: the default), and the training samples the
// preconditioner's head blocks are formed from (0: the default,
// polish_preconditioner_samples; else exactly that many, as before its floor).
// d = 128 is registered with one iteration (a quarter of an hour; a whole
// polishing is longer), with the default preconditioner (from all 16384 training
// samples there) and with the earlier one from 4096 (Z square: 16384 × 16384):
// --benchmark_filter='BM_PolishNearTruth/d:128/.*/preconditioner_samples:0'.
#include "data/oracle.hpp"
#include "model/instance_gen.hpp"
#include "stages/polish/polish.hpp"

#include <benchmark/benchmark.h>

#include <random>

namespace {

using namespace mha;

double max_relative_error(const Layer& a, const Layer& truth) {
  double e = 0;
  for (int i = 0; i < truth.m(); ++i) {
    e = std::max(e, (a.heads[i].theta - truth.heads[i].theta).norm() / truth.heads[i].theta.norm());
    e = std::max(e, (a.heads[i].w - truth.heads[i].w).norm() / truth.heads[i].w.norm());
  }
  return e;
}

void BM_PolishNearTruth(benchmark::State& state) {
  const int d = static_cast<int>(state.range(0));
  GenerateOptions g;
  g.d = d;
  g.k = 2;
  g.m = 2;
  g.scale = 6.0;
  g.seed = 1;
  const GenerateResult generated = generate_instance(g);
  if (!generated.ok) {
    state.SkipWithError("instance generation failed");
    return;
  }
  const Instance& inst = generated.instance;
  Layer start = inst.layer;
  std::mt19937_64 rng(9);
  std::normal_distribution<double> normal;
  for (auto& h : start.heads) {
    const MatD noise = MatD::NullaryExpr(d, d, [&] { return normal(rng); });
    h.theta += 1e-3 * h.theta.norm() / noise.norm() * noise;
    h.w *= 1.001;
  }
  const SampleOracle oracle(inst, 7);
  PolishOptions o;
  o.linear_solver = state.range(1) == 1   ? PolishSolver::dense
                    : state.range(1) == 2 ? PolishSolver::matrix_free
                                          : PolishSolver::automatic;
  o.threads = static_cast<int>(state.range(2));
  if (state.range(3) > 0) o.max_iterations = static_cast<int>(state.range(3));
  if (state.range(4) > 0) {  // the blocks from exactly this many samples, as before the floor
    o.preconditioner_samples = state.range(4);
    o.preconditioner_rows_per_column = 0;
  }
  PolishResult result;
  for (auto _ : state) result = polish_layer(oracle, start, o);
  int64_t cg = 0;
  for (int64_t c : result.report.cg_iterations) cg += c;
  state.counters["start_error"] = max_relative_error(start, inst.layer);
  state.counters["max_rel_error"] = max_relative_error(result.layer, inst.layer);
  state.counters["lm_iterations"] = result.report.iterations;
  state.counters["cg_iterations"] = static_cast<double>(cg);
  state.counters["validation_error"] = result.report.validation_error_after;
  state.SetLabel(result.report.linear_solver + "; " + result.report.stop_reason);
}

BENCHMARK(BM_PolishNearTruth)
    ->ArgNames({"d", "solver", "threads", "max_iterations", "preconditioner_samples"})
    ->Args({16, 0, 2, 0, 0})
    ->Args({16, 2, 2, 0, 0})
    ->Args({32, 1, 2, 0, 0})
    ->Args({32, 2, 2, 0, 0})
    ->Args({64, 2, 2, 0, 0})
    ->Args({128, 2, 2, 1, 0})
    ->Args({128, 2, 2, 1, 4096})
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

}  // namespace
