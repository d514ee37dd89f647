// The body's least-squares centre against d (Google Benchmark): its time and
// working memory for the two methods of ConvexBody::least_squares_centre.
//
//  - BM_Centre/<method>/d:D   one centre of a body of N = min(8·d², 2¹⁴) token
//    slabs (the learner's final-round count, learn/options.cpp) in n = d²
//    unknowns, one free direction (m = 2): a = vec(x_aᵀ(x_j − x_a)) of random ±1
//    tokens, b ~ N(0, 1), η ∈ [0.01, 0.1]. Run in a forked child so that the peak
//    resident growth of the call alone can be read (VmHWM − VmRSS before the
//    call, large blocks mmapped so that freed memory leaves the resident set):
//    counters `seconds` (wall, the call alone) and `peak_growth_bytes`.
// One thread here (the learner shares the centre's fold, bidiagonalisation and
// QR over its threads; BM_CentreStep measures that).
//  - BM_CentreStep/<step>/n:N/threads:T   the streamed centre's dense steps 2 and 4
//    alone on an n × n matrix (src/geometry/threaded_factorisations.cpp):
//    `bidiagonalise` (of a random upper triangle, as R is) and `qr` (of a random
//    square, as R H is), on T threads. Counters `seconds` and `crc32`, the CRC-32 of
//    the factored matrix's bytes: the same on every T, as the unit test requires.
//  - BM_CentreCompare/d:D   today's method against the iterative one on one body of
//    N = min(8·d², 2¹⁴) token slabs around a known hull (token_hull_body: heads whose
//    logit differences agree within 0.05, widths their half-spread + 10⁻³, as stage 2
//    keeps them), one free direction, 2 threads, each method in its own forked child:
//    counters old_/new_seconds, _cpu_seconds, _peak_growth_bytes, and how far the two
//    centres are apart: sin_free (the free directions' angle), x0_relative
//    (‖x0_new − x0_old‖/‖x0_old‖), values_relative (largest relative difference of the
//    5 smallest singular values). Old: dense at d ≤ 32, streamed beyond (what
//    automatic took before the iterative method).
// scripts/bench-memory.sh runs BM_Centre and writes docs/bench/memory.md;
// scripts/bench-centre.sh runs BM_CentreCompare and writes docs/bench/centre.md.
#include "centre_bodies.hpp"  // tests/support: token_body, measure_centre_in_child
#include "geometry/centre_streamed.hpp"
#include "geometry/convex_body.hpp"

#include <benchmark/benchmark.h>
#include <boost/crc.hpp>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>

namespace {

using Method = mha::ConvexBody::CentreMethod;

void BM_Centre(benchmark::State& state, Method method, int d) {
  const int64_t slabs = std::min<int64_t>(8 * int64_t{d} * d, int64_t{1} << 14);
  const mha::ConvexBody body = mha::test::token_body(d, slabs, 1);
  mha::test::CentreCost m;
  for (auto _ : state) {
    m = mha::test::measure_centre_in_child(body, 1, method);
    state.SetIterationTime(m.seconds);
  }
  state.counters["seconds"] = m.seconds;
  state.counters["peak_growth_bytes"] = m.peak_growth_bytes;
  state.counters["slabs"] = static_cast<double>(slabs);
  state.counters["unknowns"] = static_cast<double>(d) * d;
  state.counters["dense_centre_bytes"] = mha::ConvexBody::dense_centre_bytes(slabs, int64_t{d} * d);
  state.counters["streamed_centre_bytes"] = mha::ConvexBody::streamed_centre_bytes(int64_t{d} * d);
}

void BM_CentreStep(benchmark::State& state, bool qr, Eigen::Index n, int threads) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd source = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n && (qr || i <= j); ++i) source(i, j) = normal(rng);
  double seconds = 0;
  boost::crc_32_type crc;
  for (auto _ : state) {
    Eigen::MatrixXd a = source;
    const auto start = std::chrono::steady_clock::now();
    if (qr) {
      Eigen::VectorXd coefficients;
      mha::centre_detail::householder_qr_in_place(a, coefficients, threads);
    } else {
      mha::centre_detail::UpperBidiagonal b(n, n);
      mha::centre_detail::bidiagonalise_in_place(a, b, threads);
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.SetIterationTime(seconds);
    crc.reset();
    crc.process_bytes(a.data(), static_cast<size_t>(a.size()) * sizeof(double));
  }
  state.counters["seconds"] = seconds;
  state.counters["crc32"] = crc.checksum();
}

void BM_CentreCompare(benchmark::State& state, int d) {
  const int64_t slabs = std::min<int64_t>(8 * int64_t{d} * d, int64_t{1} << 14);
  const mha::test::TokenHullBody b = mha::test::token_hull_body(d, 2, slabs, 0.05, 1e-3, 1);
  const Method old_method = mha::ConvexBody::automatic_centre_method(slabs, int64_t{d} * d, 1, false);
  mha::ConvexBody::Centre old_centre, new_centre;
  mha::test::CentreCost old_cost, new_cost;
  for (auto _ : state) {
    old_cost = mha::test::measure_centre_in_child(b.body, 1, old_method, 2, &old_centre);
    new_cost = mha::test::measure_centre_in_child(b.body, 1, Method::iterative, 2, &new_centre);
    state.SetIterationTime(old_cost.seconds + new_cost.seconds);
  }
  state.counters["old_method"] = static_cast<double>(static_cast<int>(old_centre.method));
  state.counters["new_method"] = static_cast<double>(static_cast<int>(new_centre.method));
  state.counters["old_seconds"] = old_cost.seconds;
  state.counters["new_seconds"] = new_cost.seconds;
  state.counters["old_cpu_seconds"] = old_cost.cpu_seconds;
  state.counters["new_cpu_seconds"] = new_cost.cpu_seconds;
  state.counters["old_peak_growth_bytes"] = old_cost.peak_growth_bytes;
  state.counters["new_peak_growth_bytes"] = new_cost.peak_growth_bytes;
  state.counters["slabs"] = static_cast<double>(slabs);
  if (old_centre.x0.size() == new_centre.x0.size() && old_centre.free_basis.rows() == 1) {
    const Eigen::VectorXd f_old = old_centre.free_basis.row(0).transpose(), f_new = new_centre.free_basis.row(0).transpose();
    state.counters["sin_free"] = (f_new - f_old.dot(f_new) * f_old).norm();
    state.counters["x0_relative"] = (new_centre.x0 - old_centre.x0).norm() / old_centre.x0.norm();
    double values = 0;
    for (Eigen::Index j = 0; j < std::min<Eigen::Index>(5, new_centre.singular_values.size()); ++j)
      values = std::max(values, std::abs(new_centre.singular_values(j) - old_centre.singular_values(j)) /
                                    old_centre.singular_values(j));
    state.counters["values_relative"] = values;
    state.counters["gap"] = old_centre.singular_values(1) / old_centre.singular_values(0);
  }
}

const bool registered = [] {
  for (int d : {32, 48, 64})
    benchmark::RegisterBenchmark(("BM_CentreCompare/d:" + std::to_string(d)).c_str(), BM_CentreCompare, d)
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kSecond);
  for (const auto& [qr, name] : {std::pair{false, "bidiagonalise"}, std::pair{true, "qr"}})
    for (int n : {4096, 8192})
      for (int threads : {1, 2})
        benchmark::RegisterBenchmark(("BM_CentreStep/" + std::string(name) + "/n:" + std::to_string(n) +
                                      "/threads:" + std::to_string(threads)).c_str(),
                                     BM_CentreStep, qr, n, threads)
            ->UseManualTime()
            ->Iterations(1)
            ->Unit(benchmark::kSecond);
  for (const auto& [method, name] : {std::pair{Method::dense, "dense"}, std::pair{Method::streamed, "streamed"}})
    for (int d : {16, 24, 32, 48, 64}) {
      if (method == Method::dense && d > 48) continue;  // 2.2 GB at d = 64: the run measures it end to end
      benchmark::RegisterBenchmark(("BM_Centre/" + std::string(name) + "/d:" + std::to_string(d)).c_str(), BM_Centre,
                                   method, d)
          ->UseManualTime()
          ->Iterations(1)
          ->Unit(benchmark::kSecond);
    }
  return true;
}();

}  // namespace
