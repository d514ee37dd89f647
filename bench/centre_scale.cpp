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
// scripts/bench-memory.sh runs BM_Centre and writes docs/bench/memory.md.
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

const bool registered = [] {
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
