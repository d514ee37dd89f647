// The body widths' bound of stages 2 and 4 (src/stages/stage2/body_check.hpp), piece by
// piece at hand-made LP results and slab bounds: the dual shift, the bracket gap, the
// certification of the four LPs, and |w_fast − w_ref|'s bound with its rounding for a
// CLP and for an exact reference width. Each expected value is written out term by term,
// in the code's order of summation, so that a dropped term, a moved factor or a loop one
// short changes the double result. (proofs/certification.md, "The body on two paths".)
#include "instances.hpp"
#include "numeric/tolerance.hpp"
#include "stages/stage2/body_check.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <optional>
#include <vector>

using namespace mha;
namespace tol = mha::tolerance;

namespace {

// Three slabs' a priori bounds (Δb, Δη, ‖Δa‖₁), each term of a different size.
std::vector<ReferenceSlab> width_test_slabs() {
  std::vector<ReferenceSlab> slabs(3);
  slabs[0].centre_bound = 1e-3, slabs[0].width_bound = 2e-3, slabs[0].normal_bound = 1e-4;
  slabs[1].centre_bound = 3e-5, slabs[1].width_bound = 5e-6, slabs[1].normal_bound = 7e-7;
  slabs[2].centre_bound = 2e-2, slabs[2].width_bound = 1e-2, slabs[2].normal_bound = 4e-3;
  return slabs;
}

std::vector<const ReferenceSlab*> width_test_pointers(const std::vector<ReferenceSlab>& slabs) {
  std::vector<const ReferenceSlab*> p;
  for (const ReferenceSlab& s : slabs) p.push_back(&s);
  return p;
}

ConvexBody::LpResult width_test_lp(double lower, double value, double upper, Eigen::VectorXd dual) {
  ConvexBody::LpResult r;
  r.status = ConvexBody::LpResult::optimal;
  r.certified = true;
  r.lower = lower, r.value = value, r.upper = upper;
  r.dual = std::move(dual);
  return r;
}

}  // namespace

TEST_CASE("body widths: the dual shift is Σ|y_r|(Δb_r + Δη_r + R‖Δa_r‖₁) rounded upward", "[verify][stage2]") {
  const std::vector<ReferenceSlab> slabs = width_test_slabs();
  const auto bounds = width_test_pointers(slabs);
  const double radius = 20;
  const Eigen::Vector3d y(3.0, -2.0, 0.5);
  const auto term = [&](int r) {
    return std::abs(y(r)) * (slabs[r].centre_bound + slabs[r].width_bound + radius * slabs[r].normal_bound);
  };
  const double expected = ((term(0) + term(1)) + term(2)) * tol::bound_evaluation_factor(4 * 3 + 4);
  CHECK(dual_shift(y, bounds, radius) == expected);
  // Each term shows: without the last slab, without the factor, with y's sign kept.
  CHECK(dual_shift(y, bounds, radius) != (term(0) + term(1)) * tol::bound_evaluation_factor(16));
  CHECK(dual_shift(y, bounds, radius) != (term(0) + term(1)) + term(2));
  CHECK(dual_shift(Eigen::VectorXd(), bounds, radius) == 0.0);
  // Only the slabs y names are read (a shorter y, the first slabs).
  CHECK(dual_shift(Eigen::Vector2d(3.0, -2.0), bounds, radius) == (term(0) + term(1)) * tol::bound_evaluation_factor(12));
}

TEST_CASE("body widths: a bracket's gap includes the value", "[verify][stage2]") {
  CHECK(bracket_gap(width_test_lp(1.0, 2.0, 3.0, {})) == 2.0);
  CHECK(bracket_gap(width_test_lp(1.0, 4.0, 3.0, {})) == 3.0);   // a value above the bracket
  CHECK(bracket_gap(width_test_lp(1.0, -0.5, 3.0, {})) == 3.5);  // and below it
}

TEST_CASE("body widths: certified only when all four LPs are optimal and certified", "[verify][stage2]") {
  ConvexBody::Width f, r;
  f.max = f.min = r.max = r.min = width_test_lp(0, 1, 2, {});
  CHECK(widths_certified(f, r));
  for (ConvexBody::LpResult* lp : {&f.max, &f.min, &r.max, &r.min}) {
    lp->certified = false;
    CHECK_FALSE(widths_certified(f, r));
    lp->certified = true;
    lp->status = ConvexBody::LpResult::failed;
    CHECK_FALSE(widths_certified(f, r));
    lp->status = ConvexBody::LpResult::optimal;
  }
  CHECK(widths_certified(f, r));
}

TEST_CASE("body widths: |w_fast − w_ref|'s bound is its formula, for a CLP and an exact reference width",
          "[verify][stage2]") {
  const std::vector<ReferenceSlab> slabs = width_test_slabs();
  const auto bounds = width_test_pointers(slabs);
  const double radius = 20, u = tol::kDoubleUnitRoundoff;
  ConvexBody::Width f, r;
  f.max = width_test_lp(4.0, 4.25, 4.5, Eigen::Vector3d(1.0, 0.0, 0.25));
  r.max = width_test_lp(4.125, 4.25, 4.25, Eigen::Vector3d(0.5, 2.0, 0.0));
  f.min = width_test_lp(-1.0, -0.75, -0.5, Eigen::Vector3d(0.0, 0.0, 4.0));
  r.min = width_test_lp(-0.875, -0.75, -0.75, Eigen::Vector3d(2.0, 1.0, 1.0));
  f.width = 5.0, r.width = 5.125;
  const double lp_max = tol::lp_value_difference_bound(0.5, 0.125, dual_shift(f.max.dual, bounds, radius),
                                                       dual_shift(r.max.dual, bounds, radius));
  const double lp_min = tol::lp_value_difference_bound(0.5, 0.125, dual_shift(f.min.dual, bounds, radius),
                                                       dual_shift(r.min.dual, bounds, radius));
  REQUIRE(lp_max != lp_min);  // the max's and the min's duals differ
  const double lp = lp_max + lp_min;

  // A CLP reference width: u(|w_fast| + |w_ref|).
  CHECK(width_difference_bound(f, r, std::nullopt, bounds, radius) ==
        (lp + u * (5.0 + 5.125)) * tol::bound_evaluation_factor(3));
  // An exact one: u(|w_fast| + 2|w_exact|), r.width no longer read.
  CHECK(width_difference_bound(f, r, 5.0625, bounds, radius) ==
        (lp + u * (5.0 + 2.0 * 5.0625)) * tol::bound_evaluation_factor(3));

  // The rounding alone (no gap, no duals), where it is the whole bound: each width counts.
  ConvexBody::Width f0 = f, r0 = r;
  for (ConvexBody::LpResult* x : {&f0.max, &f0.min, &r0.max, &r0.min}) *x = width_test_lp(1, 1, 1, {});
  CHECK(width_difference_bound(f0, r0, std::nullopt, bounds, radius) ==
        (0.0 + u * (5.0 + 5.125)) * tol::bound_evaluation_factor(3));
  CHECK(width_difference_bound(f0, r0, -5.0625, bounds, radius) ==
        (0.0 + u * (5.0 + 2.0 * 5.0625)) * tol::bound_evaluation_factor(3));
  f0.width = -5.0;  // |w| of a negative width
  CHECK(width_difference_bound(f0, r0, std::nullopt, bounds, radius) ==
        (0.0 + u * (5.0 + 5.125)) * tol::bound_evaluation_factor(3));
}

TEST_CASE("body widths: along the first slab normals, the true hull direction and distinct random directions",
          "[verify][stage2]") {
  const Instance inst = mha::test::generated_instance(3, 2, 2, 3.0, 5);
  ConvexBody reference(9, 20.0);
  for (int r = 0; r < 6; ++r) {
    std::vector<double> a(9, 0.0);
    a[static_cast<size_t>(r)] = 2.0;
    a[8] = 1.0;
    reference.add({a, 0.0, 1.0});
  }
  BodyOptions o;
  const std::vector<Eigen::VectorXd> directions = width_directions(reference, 3, &inst.layer, o);
  REQUIRE(directions.size() == static_cast<size_t>(o.slab_directions + 1 + o.random_directions));
  for (int r = 0; r < o.slab_directions; ++r) {  // the slab normals, normalised, in the body's order
    Eigen::VectorXd a = Eigen::VectorXd::Zero(9);
    a(r) = 2.0, a(8) = 1.0;
    CHECK((directions[static_cast<size_t>(r)] - a.normalized()).norm() == 0.0);
  }
  const MatD spread = inst.layer.heads[0].theta - inst.layer.heads[1].theta;
  CHECK((directions[4] - Eigen::Map<const Eigen::VectorXd>(spread.data(), 9).normalized()).norm() == 0.0);
  for (size_t i = 0; i < directions.size(); ++i) {
    // Normalised (n squares, a root, a division) and measured again (n squares, a root): γ_{2n+3}.
    CHECK(std::abs(directions[i].norm() - 1.0) <= tol::gamma(2 * 9 + 3));
    for (size_t j = 0; j < i; ++j) CHECK(directions[i] != directions[j]);  // no direction twice
  }
  // No truth, fewer slabs than slab_directions: every slab, then the random ones.
  ConvexBody two(9, 20.0);
  two.add({std::vector<double>(9, 1.0), 0.0, 1.0});
  two.add({std::vector<double>(9, -1.0), 0.5, 1.0});
  CHECK(width_directions(two, 3, nullptr, o).size() == static_cast<size_t>(2 + o.random_directions));
}
