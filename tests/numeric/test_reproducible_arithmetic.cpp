// The reproducible build (CMake MHALEARN_ARCH=reproducible, the default) pins
// what decides the bytes of a result on a given ISA level: Eigen's product
// blocking (cache sizes, thread count). docs/reproducibility.md has the rest
// (ISA level, FP contraction) and the cross-build measurements.
#include "numeric/tolerance.hpp"
#include "version.hpp"

#include <Eigen/Dense>
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace {
bool same_bytes(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(double) * a.size()) == 0;
}

// A 16×3000 by 3000×16 product: deep enough that Eigen blocks the depth.
Eigen::MatrixXd factor_a() {
  return Eigen::MatrixXd::NullaryExpr(16, 3000, [](Eigen::Index i, Eigen::Index j) {
    return std::sin(1.0 + 0.37 * double(i) + 0.011 * double(j)) * 1e3;
  });
}
Eigen::MatrixXd factor_b() {
  return Eigen::MatrixXd::NullaryExpr(3000, 16, [](Eigen::Index i, Eigen::Index j) {
    return std::cos(2.0 + 0.013 * double(i) - 0.29 * double(j));
  });
}

Eigen::MatrixXd product_with_cache_sizes(std::ptrdiff_t l1, std::ptrdiff_t l2, std::ptrdiff_t l3) {
  Eigen::setCpuCacheSizes(l1, l2, l3);
  Eigen::MatrixXd c = factor_a() * factor_b();
  return c;
}

// |A|·|B|, the scale of each entry's rounding error.
Eigen::MatrixXd pinned_abs_a_times_abs_b() {
  Eigen::MatrixXd c = factor_a().cwiseAbs() * factor_b().cwiseAbs();
  return c;
}
}  // namespace

TEST_CASE("Eigen's product blocking changes the bytes of a product, so the reproducible build pins it",
          "[numeric][reproducibility]") {
  // Eigen's default sizes (what EIGEN_NO_CPUID gives) against an Ice Lake server's L1/L2/L3.
  const Eigen::MatrixXd pinned = product_with_cache_sizes(32 * 1024, 256 * 1024, 2 * 1024 * 1024);
  const Eigen::MatrixXd icelake = product_with_cache_sizes(48 * 1024, 1280 * 1024, 48 * 1024 * 1024);
  Eigen::setCpuCacheSizes(32 * 1024, 256 * 1024, 2 * 1024 * 1024);
  // The same value up to rounding: each entry is a 3000-term dot product, and
  // any summation order is within γ_n·Σ|a_ik||b_kj| of the exact value
  // (Higham, Accuracy and Stability, §3.1, γ_n = n·u/(1 − n·u)), so two orders
  // differ by at most twice that...
  const double gamma_n = mha::tolerance::gamma(3000);
  const Eigen::MatrixXd abs_product = pinned_abs_a_times_abs_b();
  CHECK(((pinned - icelake).cwiseAbs().array() <= 2 * gamma_n * abs_product.array()).all());
  // ...and other bytes: the depth is summed in blocks of another size.
  CHECK_FALSE(same_bytes(pinned, icelake));
}

TEST_CASE("the reproducible build uses fixed cache sizes and no threads inside Eigen", "[numeric][reproducibility]") {
  if (std::string(mha::kArithmetic) != "reproducible") {
    WARN("native build: Eigen reads this machine's caches; nothing to check");
    return;
  }
#ifndef EIGEN_NO_CPUID
  FAIL("the reproducible build must define EIGEN_NO_CPUID");
#endif
  // A fresh process starts from these (ctest runs each test case in its own process).
  CHECK(Eigen::l1CacheSize() == 32 * 1024);
  CHECK(Eigen::l2CacheSize() == 256 * 1024);
  CHECK(Eigen::l3CacheSize() == 2 * 1024 * 1024);
  CHECK(Eigen::nbThreads() == 1);
}
