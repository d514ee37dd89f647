// Convex bodies with a known answer, for stage 5's tests and properties.
#pragma once

#include "geometry/convex_body.hpp"

#include <Eigen/Core>

#include <cstdint>
#include <vector>

namespace mha::test {

// A body in R^n, n = d², whose slabs contain the affine hull of m Gaussian points
// p_i (‖p_i‖ = 3, like the generator's heads) exactly: every a_r has iid N(0,1)
// entries with the components along the hull directions — and along
// `unconstrained` further random directions — removed, b_r = ⟨a_r, p_1⟩ + ξ_r,
// ξ_r uniform in [−η/2, η/2]. R = 20.
struct SyntheticBody {
  ConvexBody body;
  std::vector<Eigen::VectorXd> points;
  Eigen::MatrixXd unconstrained;  // rows: the extra directions no slab sees
};

SyntheticBody synthetic_body(int d, int m, int slabs, double eta, int unconstrained, uint64_t seed);

}  // namespace mha::test
