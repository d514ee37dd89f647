// Bodies of the learner's token slabs and the measured cost of one least-squares
// centre, shared by the streamed centre's tests (tests/geometry/test_centre_streamed.cpp)
// and its benchmark (bench/centre_scale.cpp). Header-only: the benchmark links
// the library alone.
#pragma once

#include "geometry/convex_body.hpp"

#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
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

// A body of token slabs around a known hull, as stage 2 sculpts one: heads Θ_1..Θ_m
// (Gaussian, ‖Θ_i‖_F = 3; the hull directions Θ_i − Θ_1 of norm about 1), token pairs
// drawn at random and kept when every head's logit difference ⟨a, Θ_i⟩ lies within
// `accept` of head 1's (a certified row: the heads attend alike), b the heads' mean
// and η their half-spread plus `margin`. Every Θ_i lies in every slab; the free
// directions are the hull's, with a gap set by `accept` over the spread of ⟨a, H⟩.
// Tokens ±1, or standard Gaussian with `gaussian_tokens` (MATH.md §3.10).
struct TokenHullBody {
  ConvexBody body;
  std::vector<Eigen::VectorXd> heads;
};

inline TokenHullBody token_hull_body(int d, int m, int64_t slabs, double accept, double margin, uint64_t seed,
                                     bool gaussian_tokens = false) {
  const int n = d * d;
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution coin;
  std::normal_distribution<double> normal;
  TokenHullBody out{ConvexBody(n, 20.0), {}};
  Eigen::VectorXd base(n);
  for (int c = 0; c < n; ++c) base(c) = normal(rng);
  base *= 3.0 / base.norm();
  out.heads.push_back(base);
  for (int i = 1; i < m; ++i) {
    Eigen::VectorXd h(n);
    for (int c = 0; c < n; ++c) h(c) = normal(rng);
    out.heads.push_back(base + h / h.norm());
  }
  Eigen::VectorXd xa(d), xj(d);
  std::vector<double> logits(static_cast<size_t>(m));
  while (static_cast<int64_t>(out.body.size()) < slabs) {
    for (int i = 0; i < d; ++i) {
      xa(i) = gaussian_tokens ? normal(rng) : coin(rng) ? 1.0 : -1.0;
      xj(i) = gaussian_tokens ? normal(rng) : coin(rng) ? 1.0 : -1.0;
    }
    if (xa == xj) continue;
    const Eigen::VectorXd delta = xj - xa;
    bool alike = true;
    for (int i = 0; i < m; ++i) {
      const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> theta(
          out.heads[static_cast<size_t>(i)].data(), d, d);
      logits[static_cast<size_t>(i)] = xa.dot(theta * delta);
      alike = alike && std::abs(logits[static_cast<size_t>(i)] - logits[0]) <= accept;
    }
    if (!alike) continue;
    const auto [lo, hi] = std::minmax_element(logits.begin(), logits.end());
    std::vector<double> a(static_cast<size_t>(n));
    for (int p = 0; p < d; ++p)
      for (int q = 0; q < d; ++q) a[static_cast<size_t>(p) * d + q] = xa(p) * delta(q);
    out.body.add({std::move(a), 0.5 * (*lo + *hi), 0.5 * (*hi - *lo) + margin});
  }
  return out;
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
  double cpu_seconds = -1;        // the child's user + system CPU time during the call
};

inline double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// Whole doubles through a pipe (false on a short read or write).
inline bool pipe_doubles(int fd, double* data, size_t count, bool writing) {
  const size_t bytes = count * sizeof(double);
  size_t done = 0;
  char* p = reinterpret_cast<char*>(data);
  while (done < bytes) {
    const ssize_t k = writing ? write(fd, p + done, bytes - done) : read(fd, p + done, bytes - done);
    if (k <= 0) return false;
    done += static_cast<size_t>(k);
  }
  return true;
}

// least_squares_centre(free, method) on `body` in a forked child: large blocks
// mmapped (so that what is freed leaves the resident set), the peak reset, then
// the call's wall time and peak resident growth.
// With `result`, the child's centre comes back too (x0, free basis, singular values, method).
inline CentreCost measure_centre_in_child(const ConvexBody& body, int free, ConvexBody::CentreMethod method,
                                          int threads = 1, ConvexBody::Centre* result = nullptr) {
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
    const double cpu = process_cpu_seconds();
    const ConvexBody::Centre c = body.least_squares_centre(free, method, threads);
    CentreCost cost;
    cost.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    cost.cpu_seconds = process_cpu_seconds() - cpu;
    const long peak = proc_status_kb("VmHWM:");
    cost.peak_growth_bytes = before < 0 || peak < 0 || c.x0.size() != body.dim() ? -1.0 : 1024.0 * double(peak - before);
    if (write(fds[1], &cost, sizeof cost) != static_cast<ssize_t>(sizeof cost)) _exit(2);
    if (result) {
      double header[4] = {double(c.x0.size()), double(c.free_basis.rows()), double(c.singular_values.size()),
                          double(static_cast<int>(c.method))};
      Eigen::VectorXd x0 = c.x0, values = c.singular_values;
      Eigen::MatrixXd basis = c.free_basis;
      if (!pipe_doubles(fds[1], header, 4, true) || !pipe_doubles(fds[1], x0.data(), x0.size(), true) ||
          !pipe_doubles(fds[1], basis.data(), basis.size(), true) ||
          !pipe_doubles(fds[1], values.data(), values.size(), true))
        _exit(2);
    }
    _exit(0);
  }
  close(fds[1]);
  CentreCost cost;
  if (pid < 0 || read(fds[0], &cost, sizeof cost) != static_cast<ssize_t>(sizeof cost)) cost = {};
  if (result && cost.seconds >= 0) {
    double header[4];
    if (pipe_doubles(fds[0], header, 4, false)) {
      const auto n = static_cast<Eigen::Index>(header[0]), rows = static_cast<Eigen::Index>(header[1]),
                 values = static_cast<Eigen::Index>(header[2]);
      result->x0.resize(n);
      result->free_basis.resize(rows, n);
      result->singular_values.resize(values);
      result->method = static_cast<ConvexBody::CentreMethod>(static_cast<int>(header[3]));
      if (!pipe_doubles(fds[0], result->x0.data(), n, false) ||
          !pipe_doubles(fds[0], result->free_basis.data(), rows * n, false) ||
          !pipe_doubles(fds[0], result->singular_values.data(), values, false))
        cost = {};
    }
  }
  close(fds[0]);
  if (pid > 0) waitpid(pid, nullptr, 0);
  return cost;
}

}  // namespace mha::test
