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
// One thread: the centre does not use OpenMP (EIGEN_DONT_PARALLELIZE).
// scripts/bench-memory.sh runs them and writes docs/bench/memory.md.
#include "centre_bodies.hpp"  // tests/support: token_body, measure_centre_in_child
#include "geometry/convex_body.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
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

const bool registered = [] {
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
