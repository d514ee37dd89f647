// Stage 5 by membership queries on two paths (proofs/span_by_membership.md): the fast
// span (cutting planes through the separation oracle along random directions, then the
// SVD of the optimisers' differences) and its references — each optimum by the full LP
// over every slab, the optimisers' excesses over every slab in MPFR, the SVD in MPFR —
// agree within the derived bounds (check_span_membership), on
//   * synthetic bodies whose slabs contain a known hull (tests/support/bodies.hpp):
//     m ∈ {1, 2, 3}, d ∈ {4, 5, 6}, 2n..4n slabs;
//   * bodies sculpted from random instances with Ŵ = W_Σ, as `mhalearn verify 5` builds
//     them (d ∈ {8, 10}, m = 2): its parts "membership: …".
// Tests of the tester, on the synthetic bodies: an optimiser moved by 10⁻⁶ of R along its
// direction after the cutting planes, a fast certificate lowered below its optimum, a
// hull direction turned by 10⁻⁴ rad and a hull point moved by 10⁻⁵ of its norm are
// rejected; and the oracle itself: a point outside one slab is separated by that slab.
#include "bodies.hpp"
#include "generators.hpp"
#include "property.hpp"
#include "stages/stage5/span_membership_reference.hpp"
#include "verify/verify.hpp"

#include <cmath>

using namespace mha;

namespace {

using MembershipPath = std::function<MembershipSpan(const ConvexBody&, int, const ActiveSetResult&,
                                                    const MembershipSpanOptions&)>;

MembershipPath optimiser_moved(double relative) {
  return [relative](const ConvexBody& body, int m, const ActiveSetResult& base, const MembershipSpanOptions& o) {
    MembershipSpan s = span_by_membership(body, m, base, o);
    if (!s.optima.empty()) s.optima[0].x_max += relative * body.radius() * s.optima[0].direction;
    return s;
  };
}

MembershipPath certificate_lowered() {
  return [](const ConvexBody& body, int m, const ActiveSetResult& base, const MembershipSpanOptions& o) {
    MembershipSpan s = span_by_membership(body, m, base, o);
    if (!s.optima.empty()) s.optima[0].upper_max = s.optima[0].value_max - 1e-6 * body.radius();
    return s;
  };
}

MembershipPath hull_turned(double angle) {
  return [angle](const ConvexBody& body, int m, const ActiveSetResult& base, const MembershipSpanOptions& o) {
    MembershipSpan s = span_by_membership(body, m, base, o);
    if (s.hull_directions.rows() > 0) {
      const Eigen::VectorXd h = s.hull_directions.row(0).transpose();
      Eigen::VectorXd e = Eigen::VectorXd::Unit(h.size(), 0);
      e -= e.dot(h) * h;
      e.normalize();
      s.hull_directions.row(0) = (std::cos(angle) * h + std::sin(angle) * e).transpose();
    }
    return s;
  };
}

MembershipPath hull_point_moved(double relative) {
  return [relative](const ConvexBody& body, int m, const ActiveSetResult& base, const MembershipSpanOptions& o) {
    MembershipSpan s = span_by_membership(body, m, base, o);
    if (s.hull_point.size() > 0) s.hull_point(0) += relative * s.hull_point.norm();
    return s;
  };
}

// `min_m`: the smallest m drawn (a tester that changes hull directions needs m ≥ 2).
auto synthetic_bodies_agree(const MembershipPath& fast, int min_m = 1) {
  return [fast, min_m] {
    const int d = *rc::gen::inRange(4, 7).as("d");
    const int m = *rc::gen::inRange(min_m, 4).as("m");
    const int slabs = *rc::gen::inRange(2 * d * d, 4 * d * d).as("slabs");
    const double eta = *rc::gen::element(1e-3, 1e-2).as("eta");
    const uint64_t seed = *rc::gen::inRange<uint64_t>(1, 1u << 30).as("seed");
    const test::SyntheticBody b = test::synthetic_body(d, m, slabs, eta, 0, seed);
    MembershipSpanOptions o;
    o.seed = seed;
    const MembershipSpan s = fast(b.body, m, min_norm_point_active_set(b.body), o);
    RC_ASSERT(s.ok());
    const Comparison c = check_span_membership(b.body, s, m);
    RC_LOG() << format_table({c});
    RC_ASSERT(!disagrees(c));
  };
}

auto sculpted_bodies_agree(int* compared) {
  return [compared] {
    const Instance instance = test::draw_generated_instance({8, 10}, {2}, {3.0, 6.0});
    const std::vector<Comparison> rows = verify_instance(instance, {"5"}, VerifyOptions{});
    RC_PRE(rows[0].compared > 0);  // stage 2 certified some row: there is a body
    RC_LOG() << format_table(rows);
    for (const ComparisonPart& p : rows[0].parts) *compared += p.name == "membership: optima" && p.compared > 0;
    RC_ASSERT(!disagrees(rows[0]));
  };
}

}  // namespace

TEST_CASE("stage 5 by membership queries: the cutting-plane optima and span agree with the full LPs and MPFR",
          "[property][stage5]") {
  mha::test::property("membership span vs references on synthetic bodies", 10, synthetic_bodies_agree(span_by_membership));
  int compared = 0;
  mha::test::property("membership span vs references on sculpted bodies", 3, sculpted_bodies_agree(&compared));
  CHECK(compared > 0);  // the sculpted bodies had a point of K, so the membership part ran
}

TEST_CASE("stage 5 by membership queries: the cross-check rejects a moved optimiser, a lowered certificate, a turned "
          "hull and a moved hull point", "[property][stage5]") {
  mha::test::property_rejects("an optimiser moved by 1e-6·R along its direction", 6,
                              synthetic_bodies_agree(optimiser_moved(1e-6), 2));
  mha::test::property_rejects("a certificate below its optimum", 6, synthetic_bodies_agree(certificate_lowered(), 2));
  mha::test::property_rejects("a hull direction turned by 1e-4 rad", 6, synthetic_bodies_agree(hull_turned(1e-4), 2));
  mha::test::property_rejects("a hull point moved by 1e-5 of its norm", 6,
                              synthetic_bodies_agree(hull_point_moved(1e-5), 2));
}

TEST_CASE("the separation oracle returns the violated slabs, most violated first, and none inside", "[stage5]") {
  ConvexBody body(2, 10.0);
  body.add(Slab{{1.0, 0.0}, 0.0, 1.0});  // |θ_0| ≤ 1
  body.add(Slab{{0.0, 2.0}, 0.0, 2.0});  // |θ_1| ≤ 1, a normal of length 2
  CHECK(separating_slabs(body, Eigen::Vector2d(0.5, 0.5), 4).empty());
  CHECK(separating_slabs(body, Eigen::Vector2d(3.0, 0.5), 4) == std::vector<int>{0});
  // Violations over ‖a_r‖: slab 0 by 2, slab 1 by (2·4 − 2)/2 = 3.
  CHECK(separating_slabs(body, Eigen::Vector2d(3.0, 4.0), 4) == std::vector<int>{1, 0});
  CHECK(separating_slabs(body, Eigen::Vector2d(3.0, 4.0), 1) == std::vector<int>{1});
  CHECK(separating_slabs(body, Eigen::Vector2d(3.0, 4.0), 4, {0, 1}) == std::vector<int>{0});
}
