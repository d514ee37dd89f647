// Bodies of the learner's token slabs and the measured cost of one least-squares
// centre, shared by the streamed centre's tests (tests/geometry/test_centre_streamed.cpp)
// and its benchmark (bench/centre_scale.cpp). Header-only: the benchmark links
// the library alone.
#pragma once

#include "geometry/convex_body.hpp"

#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace mha::test {

// N slabs a = vec(x_aᵀ(x_j − x_a)) of random ±1 tokens (the learner's slabs) in
// n = d² unknowns, b ~ N(0, 1), η ∈ [0.01, 0.1], R = 20.
inline ConvexBody token_body(int d, int64_t slabs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution coin;
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> width(0.01, 0.1);
  ConvexBody body(d * d, 20.0);
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

// A field of /proc/self/status in kB, −1 when it cannot be read.
inline long proc_status_kb(const char* field) {
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

struct CentreCost {
  double seconds = -1;            // wall time of the call alone
  double peak_growth_bytes = -1;  // VmHWM − VmRSS before the call; −1 when /proc cannot tell
};

// least_squares_centre(free, method) on `body` in a forked child: large blocks
// mmapped (so that what is freed leaves the resident set), the peak reset, then
// the call's wall time and peak resident growth.
inline CentreCost measure_centre_in_child(const ConvexBody& body, int free, ConvexBody::CentreMethod method) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    malloc_trim(0);
    if (FILE* f = std::fopen("/proc/self/clear_refs", "w")) {  // reset VmHWM (Linux ≥ 4.0); a fresh fork starts there anyway
      std::fputs("5", f);
      std::fclose(f);
    }
    const long before = proc_status_kb("VmRSS:");
    const auto start = std::chrono::steady_clock::now();
    const ConvexBody::Centre c = body.least_squares_centre(free, method);
    CentreCost cost;
    cost.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const long peak = proc_status_kb("VmHWM:");
    cost.peak_growth_bytes = before < 0 || peak < 0 || c.x0.size() != body.dim() ? -1.0 : 1024.0 * double(peak - before);
    if (write(fds[1], &cost, sizeof cost) != static_cast<ssize_t>(sizeof cost)) _exit(2);
    _exit(0);
  }
  close(fds[1]);
  CentreCost cost;
  if (pid < 0 || read(fds[0], &cost, sizeof cost) != static_cast<ssize_t>(sizeof cost)) cost = {};
  close(fds[0]);
  if (pid > 0) waitpid(pid, nullptr, 0);
  return cost;
}

}  // namespace mha::test
