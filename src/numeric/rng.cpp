#include "numeric/rng.hpp"

#include <Random123/boxmuller.hpp>

namespace mha {

std::array<double, 4> normal_block(uint64_t seed, Stream stream, uint64_t c0, uint64_t c1, uint64_t c2) {
  auto w = philox_block(seed, stream, c0, c1, c2);
  r123::double2 a = r123::boxmuller(w[0], w[1]);
  r123::double2 b = r123::boxmuller(w[2], w[3]);
  return {a.x, a.y, b.x, b.y};
}

Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> gaussian_matrix(uint64_t seed, Stream stream,
                                                                                       uint64_t c0, uint64_t c1, int d) {
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> a(d, d);
  for (int e0 = 0; e0 < d * d; e0 += 4) {
    const auto z = normal_block(seed, stream, c0, c1, static_cast<uint64_t>(e0 / 4));
    for (int q = 0; q < 4 && e0 + q < d * d; ++q) a((e0 + q) / d, (e0 + q) % d) = z[q];
  }
  return a;
}

}  // namespace mha
