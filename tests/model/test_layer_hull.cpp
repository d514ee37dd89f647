// The heads' affine hull directions (model/layer.hpp, head_hull_directions): the
// learner's hull oracle and `mhalearn verify`'s stage 6 read the true hull from it.
#include "model/layer.hpp"

#include <catch2/catch.hpp>

using namespace mha;

namespace {
Layer layer_of(const std::vector<MatD>& thetas) {
  Layer layer;
  for (const MatD& t : thetas) layer.heads.push_back({t, MatD::Zero(t.rows(), t.cols())});
  return layer;
}
MatD unit(int d, int r, int c, double scale) {
  MatD t = MatD::Zero(d, d);
  t(r, c) = scale;
  return t;
}
}  // namespace

// Differences along coordinate axes: every Householder reflection is exact (v = x ± ‖x‖e,
// one nonzero), so the directions are the axes themselves, up to sign, with no rounding.
TEST_CASE("the heads' hull directions: one orthonormal row per further head, exactly on axis-aligned differences",
          "[model][hull]") {
  const int d = 3;
  const Layer three = layer_of({MatD::Zero(d, d), unit(d, 0, 0, 2.0), unit(d, 1, 1, 3.0)});
  const Eigen::MatrixXd v = head_hull_directions(three);
  REQUIRE(v.rows() == 2);
  REQUIRE(v.cols() == d * d);
  CHECK(v.row(0).cwiseAbs() == Eigen::RowVectorXd::Unit(d * d, 0));      // vec(Θ) index of (0, 0)
  CHECK(v.row(1).cwiseAbs() == Eigen::RowVectorXd::Unit(d * d, 1 + d));  // and of (1, 1), column-major
  // From another first head the hull is the same, its directions the same axes.
  const Layer shifted = layer_of({unit(d, 2, 2, 5.0), unit(d, 2, 2, 5.0) + unit(d, 0, 0, 2.0),
                                  unit(d, 2, 2, 5.0) + unit(d, 1, 1, -1.0)});
  CHECK(head_hull_directions(shifted).cwiseAbs() == v.cwiseAbs());
  // One head: no direction (0 rows over d² columns); two: one.
  const Eigen::MatrixXd none = head_hull_directions(layer_of({unit(d, 0, 1, 1.0)}));
  CHECK(none.rows() == 0);
  CHECK(none.cols() == d * d);
  CHECK(head_hull_directions(layer_of({MatD::Zero(d, d), unit(d, 0, 1, 4.0)})).rows() == 1);
}
