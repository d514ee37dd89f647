// The libm probe of scripts/platform_check.py: every libm function src/ calls,
// and Eigen's vectorised exp and log, on kArguments pseudo-random arguments
// each, written as raw little-endian doubles (function after function, in the
// order of kNames) to the file named by argv[1]. Built for x86-64-v3 and for
// aarch64, the two files are compared value by value.
#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

namespace {
constexpr int kArguments = 200000;
uint64_t state = 12345;
double uniform() {  // a 64-bit LCG (Knuth's MMIX constants): the same sequence everywhere
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return double(state >> 11) * 0x1.0p-53;
}
}  // namespace

int main(int argc, char** argv) {
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
