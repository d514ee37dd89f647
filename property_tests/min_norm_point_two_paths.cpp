// Stage 3's proxy on two paths (proofs/convex_body_programs.md, "The minimum-norm
// point on two paths"): on random bodies whose slabs contain a known hull
// (tests/support/bodies.hpp; d ∈ {4..8}, m ∈ {1, 2, 3}, 2n..4n slabs), the fast
// dual active-set method and the certified QP find the same minimum-norm point
// within the sum of their bounds, and the same verdict on K's emptiness (check_min_norm_point, as
// `mhalearn verify 3` and the learner's reference step run it). Tests of the
// tester: a point scaled by 1 + 10⁻⁶, and the minimum-norm point of the active
// equalities without the last active half-space (another face), are rejected.
#include "bodies.hpp"
#include "property.hpp"
#include "stages/stage3/check.hpp"

#include <Eigen/QR>

using namespace mha;

namespace {

auto min_norm_agrees(const MinNormFast& fast) {
  return [fast] {
    const int d = *rc::gen::inRange(4, 9).as("d");
    const int m = *rc::gen::inRange(1, 4).as("m");
    const int slabs = *rc::gen::inRange(2 * d * d, 4 * d * d).as("slabs");
    const double eta = *rc::gen::element(1e-3, 1e-2).as("eta");
    const uint64_t seed = *rc::gen::inRange<uint64_t>(1, 1u << 30).as("seed");
    const test::SyntheticBody b = test::synthetic_body(d, m, slabs, eta, 0, seed);
    const Comparison c = check_min_norm_point(b.body, fast);
    RC_LOG() << format_table({c});
    RC_PRE(c.compared > 0);  // the QP certified its answer
    RC_ASSERT(!disagrees(c));
  };
}

ActiveSetResult min_norm_scaled(const ConvexBody& body) {
  ActiveSetResult r = min_norm_point_active_set(body);
  if (r.status == ActiveSetResult::optimal) r.x *= 1 + 1e-6;
  return r;
}

// The minimum-norm solution of the active equalities without the last one: the
// point of another face (not in every slab, or not the shortest).
ActiveSetResult min_norm_one_active_dropped(const ConvexBody& body) {
  ActiveSetResult r = min_norm_point_active_set(body);
  if (r.status != ActiveSetResult::optimal || r.active.size() < 2) return r;
  r.active.pop_back();
  const int n = body.dim(), q = static_cast<int>(r.active.size());
  Eigen::MatrixXd c(q, n);
  Eigen::VectorXd e(q);
  for (int k = 0; k < q; ++k) {
    const Slab& s = body.slabs()[r.active[k] / 2];
    const double sign = r.active[k] % 2 == 0 ? 1 : -1;
    c.row(k) = sign * Eigen::Map<const Eigen::RowVectorXd>(s.a.data(), n);
    e(k) = r.active[k] % 2 == 0 ? s.b - s.eta : -(s.b + s.eta);
  }
  r.x = c.completeOrthogonalDecomposition().solve(e);
  return r;
}

}  // namespace

TEST_CASE("stage 3's proxy: the active-set method and the certified QP find the same minimum-norm point", "[property][stage3]") {
  mha::test::property("minimum-norm point, fast vs certified QP", 12, min_norm_agrees(min_norm_point_active_set));
}

TEST_CASE("the proxy's cross-check rejects a scaled point and another face", "[property][stage3]") {
  mha::test::property_rejects("point scaled by 1 + 1e-6", 8, min_norm_agrees(min_norm_scaled));
  mha::test::property_rejects("last active half-space dropped", 8, min_norm_agrees(min_norm_one_active_dropped));
}
