#include "bodies.hpp"

#include <Eigen/QR>

#include <random>

namespace mha::test {

SyntheticBody synthetic_body(int d, int m, int slabs, double eta, int unconstrained, uint64_t seed) {
  const int n = d * d;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(-0.5, 0.5);
  auto gaussian = [&](int size) {
    Eigen::VectorXd v(size);
    for (int i = 0; i < size; ++i) v(i) = normal(rng);
    return v;
  };
  SyntheticBody out{ConvexBody(n, 20.0), {}, Eigen::MatrixXd(unconstrained, n)};
  for (int i = 0; i < m; ++i) out.points.push_back(3.0 * gaussian(n).normalized());
  // Orthonormal basis of the directions the slabs must not see.
  Eigen::MatrixXd blind(n, m - 1 + unconstrained);
  for (int i = 1; i < m; ++i) blind.col(i - 1) = out.points[i] - out.points[0];
  for (int e = 0; e < unconstrained; ++e) blind.col(m - 1 + e) = gaussian(n);
  Eigen::MatrixXd q(n, blind.cols());
  if (blind.cols() > 0) q = Eigen::HouseholderQR<Eigen::MatrixXd>(blind).householderQ() * Eigen::MatrixXd::Identity(n, blind.cols());
  out.unconstrained = q.rightCols(unconstrained).transpose();
  for (int r = 0; r < slabs; ++r) {
    Eigen::VectorXd a = gaussian(n);
    a -= q * (q.transpose() * a);
    out.body.add(Slab{std::vector<double>(a.data(), a.data() + n), a.dot(out.points[0]) + eta * uniform(rng), eta});
  }
  return out;
}

}  // namespace mha::test
