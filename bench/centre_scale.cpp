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
#include "geometry/convex_body.hpp"

#include <benchmark/benchmark.h>

#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using Method = mha::ConvexBody::CentreMethod;

mha::ConvexBody token_body(int d, int64_t slabs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution coin;
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> width(0.01, 0.1);
  mha::ConvexBody body(d * d, 20.0);
  std::vector<double> xa(d), xj(d);
  for (int64_t r = 0; r < slabs; ++r) {
    for (int i = 0; i < d; ++i) {
      xa[i] = coin(rng) ? 1.0 : -1.0;
      xj[i] = coin(rng) ? 1.0 : -1.0;
    }
    std::vector<double> a(static_cast<size_t>(d) * d);
    for (int i = 0; i < d; ++i)
      for (int c = 0; c < d; ++c) a[static_cast<size_t>(i) * d + c] = xa[i] * (xj[c] - xa[c]);
    body.add({std::move(a), normal(rng), width(rng)});
  }
  return body;
}

long status_kb(const char* field) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long value = -1;
  const size_t len = std::strlen(field);
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, field, len) == 0) value = std::atol(line + len);
  std::fclose(f);
  return value;
}

struct Measured {
  double seconds = -1, peak_growth_bytes = -1;
};

// The call in a forked child: its wall time and peak resident growth.
Measured measure_centre(const mha::ConvexBody& body, Method method) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    malloc_trim(0);
    if (FILE* f = std::fopen("/proc/self/clear_refs", "w")) {  // reset VmHWM
      std::fputs("5", f);
      std::fclose(f);
    }
    const long before = status_kb("VmRSS:");
    const auto start = std::chrono::steady_clock::now();
    const mha::ConvexBody::Centre c = body.least_squares_centre(1, method);
    Measured m;
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const long peak = status_kb("VmHWM:");
    m.peak_growth_bytes = before < 0 || peak < 0 || c.x0.size() != body.dim() ? -1.0 : 1024.0 * double(peak - before);
    if (write(fds[1], &m, sizeof m) != static_cast<ssize_t>(sizeof m)) _exit(2);
    _exit(0);
  }
  close(fds[1]);
  Measured m;
  if (pid < 0 || read(fds[0], &m, sizeof m) != static_cast<ssize_t>(sizeof m)) m = {};
  close(fds[0]);
  if (pid > 0) waitpid(pid, nullptr, 0);
  return m;
}

void BM_Centre(benchmark::State& state, Method method, int d) {
  const int64_t slabs = std::min<int64_t>(8 * int64_t{d} * d, int64_t{1} << 14);
  const mha::ConvexBody body = token_body(d, slabs, 1);
  Measured m;
  for (auto _ : state) {
    m = measure_centre(body, method);
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
