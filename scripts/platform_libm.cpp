// The libm probe of scripts/platform_check.py: every libm function src/ calls,
// Eigen's vectorised exp and log, and the project's correctly rounded hypot and
// cbrt (src/numeric/correctly_rounded.cpp, which replace glibc's), on
// kArguments pseudo-random arguments each, written as raw little-endian doubles
// (function after function, in the order of platform_check.py's LIBM_NAMES) to
// the file named by argv[1]. Built for x86-64-v3 and for aarch64, the two files
// are compared value by value.
// `platform_libm --speed` prints the time of one call of glibc's hypot and cbrt
// and of the correctly rounded ones instead (docs/bench/arithmetic.md).
#include "numeric/correctly_rounded.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

namespace {
constexpr int kArguments = 200000;
uint64_t state = 12345;
double uniform() {  // a 64-bit LCG (Knuth's MMIX constants): the same sequence everywhere
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return double(state >> 11) * 0x1.0p-53;
}

// Nanoseconds per call of F over the arguments, the best of five passes.
template <class F>
double nanoseconds_per_call(const std::vector<double>& a, const std::vector<double>& b, F f) {
  double best = 1e300, sink = 0;
  for (int pass = 0; pass < 5; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < a.size(); ++i) sink += f(a[i], b[i]);
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / double(a.size()));
  }
  if (sink == 42) std::puts("");  // keeps the calls
  return best;
}

int speed() {
  std::vector<double> a(kArguments), b(kArguments);
  for (int i = 0; i < kArguments; ++i) a[i] = (uniform() - 0.5) * 60, b[i] = (uniform() - 0.5) * 40;
  const auto glibc_hypot = [](double x, double y) { return std::hypot(x, y); };
  const auto pinned_hypot = [](double x, double y) { return mha::correctly_rounded_hypot(x, y); };
  const auto glibc_cbrt = [](double x, double) { return std::cbrt(x); };
  const auto pinned_cbrt = [](double x, double) { return mha::correctly_rounded_cbrt(x); };
  std::printf("hypot: glibc %.1f ns, correctly rounded %.1f ns per call\n", nanoseconds_per_call(a, b, glibc_hypot),
              nanoseconds_per_call(a, b, pinned_hypot));
  std::printf("cbrt: glibc %.1f ns, correctly rounded %.1f ns per call\n", nanoseconds_per_call(a, b, glibc_cbrt),
              nanoseconds_per_call(a, b, pinned_cbrt));
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--speed") == 0) return speed();
  if (argc != 2) return 2;
  // The names scripts/platform_check.py prints, in this order.
  const std::vector<std::function<double(double, double)>> functions = {
      [](double u, double) { return std::exp((u - 0.5) * 60); },
      [](double u, double) { return std::log(u * 100 + 1e-300); },
      [](double u, double v) { return std::pow(u * 10, (v - 0.5) * 20); },
      [](double u, double) { return std::sin((u - 0.5) * 40); },
      [](double u, double) { return std::cos((u - 0.5) * 40); },
      [](double u, double) { return std::acos(u * 2 - 1); },
      [](double u, double) { return std::cbrt((u - 0.5) * 40); },
      [](double u, double) { return std::exp2((u - 0.5) * 20); },
      [](double u, double) { return std::expm1(u * 2 - 1); },
      [](double u, double) { return std::log1p(u); },
      [](double u, double) { return std::log2(u * 100 + 1e-300); },
      [](double u, double v) { return std::hypot((u - 0.5) * 60, (v - 0.5) * 40); },
      [](double u, double) { return std::tanh((u - 0.5) * 10); },
      [](double u, double v) { return mha::correctly_rounded_hypot((u - 0.5) * 60, (v - 0.5) * 40); },
      [](double u, double) { return mha::correctly_rounded_cbrt((u - 0.5) * 40); },
  };
  std::FILE* out = std::fopen(argv[1], "wb");
  if (!out) return 1;
  std::vector<double> values(kArguments);
  for (const auto& f : functions) {
    for (double& y : values) {
      const double u = uniform(), v = uniform();
      y = f(u, v);
    }
    std::fwrite(values.data(), sizeof(double), values.size(), out);
  }
  Eigen::ArrayXd x(kArguments);
  for (double& y : x) y = (uniform() - 0.5) * 60;
  const Eigen::ArrayXd e = x.exp(), l = (x.abs() + 1e-3).log();
  std::fwrite(e.data(), sizeof(double), kArguments, out);
  std::fwrite(l.data(), sizeof(double), kArguments, out);
  return std::fclose(out) == 0 ? 0 : 1;
}
