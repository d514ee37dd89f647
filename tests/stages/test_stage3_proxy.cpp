// The paper variant's stage-3 proxy when K is empty (stages/stage3/proxy.hpp): the least
// common factor of the slabs' widths that makes them meet.
#include "geometry/min_norm_active_set.hpp"
#include "stages/stage3/proxy.hpp"

#include <catch2/catch.hpp>

using namespace mha;

TEST_CASE("the least consistent widening: |θ| ≤ t and |θ − 3| ≤ t meet from t = 1.5", "[stage3]") {
  ConvexBody body(1, 10.0);
  body.add(Slab{{1.0}, 0.0, 1.0});
  body.add(Slab{{1.0}, 3.0, 1.0});
  CHECK(min_norm_point_active_set(body).status == ActiveSetResult::infeasible);
  std::string message;
  const double t = least_consistent_factor(body, message);
  INFO(message);
  CHECK(t == Approx(1.5).epsilon(1e-12));
  // Its tester: a little more widening meets, a little less does not.
  const ActiveSetResult wider = min_norm_point_active_set(widened(body, t * (1 + 1e-9)));
  CHECK(wider.status == ActiveSetResult::optimal);
  CHECK(wider.x(0) == Approx(1.5).epsilon(1e-6));
  CHECK(min_norm_point_active_set(widened(body, t * (1 - 1e-3))).status == ActiveSetResult::infeasible);
}

TEST_CASE("the least consistent widening of consistent slabs is at most 1, and a width-0 slab has none", "[stage3]") {
  ConvexBody body(2, 10.0);
  body.add(Slab{{1.0, 0.0}, 1.0, 0.5});
  body.add(Slab{{0.0, 1.0}, -1.0, 0.5});
  std::string message;
  CHECK(least_consistent_factor(body, message) == Approx(0.0).margin(1e-12));  // the two slabs are independent
  body.add(Slab{{1.0, 1.0}, 0.0, 0.0});
  CHECK(std::isnan(least_consistent_factor(body, message)));
  CHECK(message == "a slab of width 0: no common factor widens it");
}
