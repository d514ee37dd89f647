// Fast vs reference speed of the stages' cross-checked kernels (Google
// Benchmark), on the default instance shape (k,d,m) = (2,16,2), logit scale 6:
//  - BM_CertifyRow/fast|reference  stage 2: one row's certificate, double
//    normal equations vs Householder QR in MPFR (200 bits), per sample;
//  - BM_WStack/fast|reference      stages 6 and polishing: the W least squares
//    of 64 samples, column-pivoting QR in double vs exact Gauss–Jordan in
//    rationals (GMP);
//  - BM_LossGradient/fast|reference  the Adam baseline's gradient of one
//    sample, double vs MPFR (200 bits).
// Stages 1, 3 and 5 time their reference paths inside `mhalearn stage1
// --reference` and `mhalearn learn` (docs/results.md reads them from there).
#include "baseline/squared_loss_gradient.hpp"
#include "model/inputs.hpp"
#include "model/forward_reference.hpp"
#include "model/instance_gen.hpp"
#include "model/reference.hpp"
#include "numeric/multiprecision.hpp"
#include "numeric/precision.hpp"
#include "stages/stage2/certify.hpp"
#include "stages/stage2/certify_reference.hpp"
#include "stages/stage6/w_least_squares.hpp"

#include <benchmark/benchmark.h>

namespace {

using namespace mha;

const Instance& default_instance() {
  static const Instance inst = [] {
    GenerateOptions o;  // (16,2,2), scale 6, seed 1: the demo's instance
    return generate_instance(o).instance;
  }();
  return inst;
}

MatD sample_x(int n) {
  const Instance& inst = default_instance();
  return draw_inputs(1, Stream::inputs, inst.inputs, inst.k, inst.d(), n, 1, 1).sample(0);
}

void BM_CertifyRow_fast(benchmark::State& state) {
  const Instance& inst = default_instance();
  const MatD x = sample_x(0), w_hat = inst.layer.w_sum();
  const MatD y = forward_reference<double>(inst.layer, x), b = x * w_hat;
  CertifyOptions o;
  for (auto _ : state) benchmark::DoNotOptimize(certify_row_fast(x, y, b, 0, o));
}

void BM_CertifyRow_reference(benchmark::State& state) {
  const Instance& inst = default_instance();
  const MatD x = sample_x(0), w_hat = inst.layer.w_sum();
  for (auto _ : state) benchmark::DoNotOptimize(certify_row_reference(inst.layer, x, w_hat, 0, 200));
}

struct WProblem {
  MatD design, labels;
};

const WProblem& w_problem() {
  static const WProblem p = [] {
    const Instance& inst = default_instance();
    const int n = 64, k = inst.k, d = inst.d(), m = inst.m();
    WProblem w{MatD(n * k, m * d), MatD(n * k, d)};
    for (int t = 0; t < n; ++t) {
      const MatD x = sample_x(t);
      std::vector<MatD> a;
      for (const auto& h : inst.layer.heads) a.push_back(attention<double>(h.theta, x));
      w.design.middleRows(t * k, k) = w_design_rows<double>(a, x);
      w.labels.middleRows(t * k, k) = forward_reference<double>(inst.layer, x);
    }
    return w;
  }();
  return p;
}

void BM_WStack_fast(benchmark::State& state) {
  const WProblem& w = w_problem();
  for (auto _ : state) benchmark::DoNotOptimize(solve_w_stack(w.design, w.labels));
}

void BM_WStack_reference(benchmark::State& state) {
  const WProblem& w = w_problem();
  const Mat<Rational> design = cast_matrix<Rational>(w.design), labels = cast_matrix<Rational>(w.labels);
  for (auto _ : state) benchmark::DoNotOptimize(solve_w_stack_reference<Rational>(design, labels));
}

void BM_LossGradient_fast(benchmark::State& state) {
  const Instance& inst = default_instance();
  const MatD x = sample_x(0), y = sample_x(1);
  for (auto _ : state) benchmark::DoNotOptimize(squared_loss_gradient<double>(inst.layer, x, y));
}

void BM_LossGradient_reference(benchmark::State& state) {
  ScopedPrecision precision(200);
  const Instance& inst = default_instance();
  const LayerT<Mpfr> layer = convert_layer<Mpfr>(inst.layer);
  const Mat<Mpfr> x = cast_matrix<Mpfr>(sample_x(0)), y = cast_matrix<Mpfr>(sample_x(1));
  for (auto _ : state) benchmark::DoNotOptimize(squared_loss_gradient<Mpfr>(layer, x, y));
}

}  // namespace

BENCHMARK(BM_CertifyRow_fast);
BENCHMARK(BM_CertifyRow_reference)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_WStack_fast)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_WStack_reference)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LossGradient_fast);
BENCHMARK(BM_LossGradient_reference)->Unit(benchmark::kMicrosecond);
