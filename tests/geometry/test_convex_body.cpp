// The convex body of stage 2: hand-made bodies with known answers, the exact
// reference on the same bodies, infeasibility, the least-squares centre of an
// exactly known affine subspace, and verifiers that reject wrong answers.
// Tolerances: every comparison of a fast value uses the value's own a posteriori
// error_bound (proofs/convex_body_programs.md); the LS-centre checks use the
// backward-error + Wedin bound derived in the test itself.
#include "numeric/tolerance.hpp"
#include "geometry/convex_body.hpp"
#include "geometry/exact_programs.hpp"

#include <catch2/catch.hpp>

#include <Eigen/Dense>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <random>
#include <stdexcept>

using namespace mha;

namespace {

Eigen::VectorXd vec(std::initializer_list<double> v) {
  Eigen::VectorXd out(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double x : v) out(i++) = x;
  return out;
}

// [0.5, 1.5] × [−2, 2] inside the box of radius 10.
ConvexBody rectangle() {
  ConvexBody b(2, 10.0);
  b.add({{1.0, 0.0}, 1.0, 0.5});
  b.add({{0.0, 1.0}, 0.0, 2.0});
  return b;
}

// |θ0 + θ1| ≤ 1, |θ0 − θ1| ≤ 1: the diamond with vertices (±1, 0), (0, ±1).
ConvexBody diamond() {
  ConvexBody b(2, 10.0);
  b.add({{1.0, 1.0}, 0.0, 1.0});
  b.add({{1.0, -1.0}, 0.0, 1.0});
  return b;
}

// The exact optimum lies in [lower, upper], and the value is within error_bound of it.
void check_lp(const ConvexBody::LpResult& r, double expected) {
  INFO(r.message);
  REQUIRE(r.status == ConvexBody::LpResult::optimal);
  CHECK(r.certified);
  CHECK(std::abs(r.value - expected) <= r.error_bound);
  CHECK(r.lower <= expected);
  CHECK(expected <= r.upper);
  // Usefulness, not correctness: a vacuous bound (say 1e300) would pass the checks
  // above. On these tiny well-conditioned bodies the certificate is a few ulps.
  CHECK(r.error_bound < 0x1p-40 * (1 + std::abs(expected)));
}

bool in_polytope_exactly(const ConvexBody& b, const Eigen::VectorXd& x) {
  if (exact_slab_violation(b, to_rational(x)) > 0) return false;
  return x.cwiseAbs().maxCoeff() <= b.radius();
}

}  // namespace

TEST_CASE("rectangle: optima and widths along the axes and a diagonal", "[geometry]") {
  const ConvexBody b = rectangle();
  check_lp(b.maximise(vec({1, 0})), 1.5);
  check_lp(b.minimise(vec({1, 0})), 0.5);
  check_lp(b.maximise(vec({1, 1})), 3.5);
  check_lp(b.minimise(vec({1, 1})), -1.5);
  const auto w0 = b.width(vec({1, 0}));
  CHECK(std::abs(w0.width - 1.0) <= w0.error_bound);
  const auto w1 = b.width(vec({0, 1}));
  CHECK(std::abs(w1.width - 4.0) <= w1.error_bound);
  const auto top = b.maximise(vec({1, 1}));
  CHECK(in_polytope_exactly(b, top.x));

  // The exact reference gives the same optima as rationals.
  CHECK(exact_maximise(b, vec({1, 0})).value == Rational(3, 2));
  CHECK(exact_minimise(b, vec({1, 1})).value == Rational(-3, 2));
  const ExactLpResult e = exact_maximise(b, vec({1, 1}));
  REQUIRE(e.status == ExactStatus::optimal);
  CHECK(e.x[0] == Rational(3, 2));
  CHECK(e.x[1] == Rational(2));
}

TEST_CASE("diamond: widths along an axis and a diagonal", "[geometry]") {
  const ConvexBody b = diamond();
  check_lp(b.maximise(vec({1, 0})), 1.0);
  check_lp(b.minimise(vec({0, 1})), -1.0);
  const auto w = b.width(vec({1, 1}));
  CHECK(std::abs(w.width - 2.0) <= w.error_bound);
  CHECK(exact_maximise(b, vec({3, 1})).value == Rational(3));
}

TEST_CASE("the box bounds directions the slabs leave free", "[geometry]") {
  ConvexBody b(2, 3.0);
  b.add({{1.0, 0.0}, 0.0, 1.0});
  check_lp(b.maximise(vec({0, 1})), 3.0);
  check_lp(b.maximise(vec({1, 1})), 4.0);
  CHECK(exact_maximise(b, vec({1, 1})).value == Rational(4));
}

TEST_CASE("no slabs: the box alone, and the origin as minimum-norm point", "[geometry]") {
  ConvexBody b(3, 2.0);
  check_lp(b.maximise(vec({1, -2, 0.5})), 7.0);
  CHECK(exact_maximise(b, vec({1, -2, 0.5})).value == Rational(7));
  const auto q = b.min_norm_point();
  REQUIRE(q.status == ConvexBody::QpResult::optimal);
  CHECK(q.x.norm() == 0.0);
  CHECK(q.inside_ball);
}

TEST_CASE("minimum-norm point of one slab is the projection of 0 onto its near face", "[geometry]") {
  // a = (3,4), b = 10, η = 1: the near face is ⟨a,θ⟩ = 9, so x* = 9/25·(3,4) = (1.08, 1.44), ‖x*‖ = 1.8.
  ConvexBody b(2, 10.0);
  b.add({{3.0, 4.0}, 10.0, 1.0});
  const auto q = b.min_norm_point();
  INFO(q.message);
  REQUIRE(q.status == ConvexBody::QpResult::optimal);
  CHECK(q.certified);
  CHECK((q.x - vec({1.08, 1.44})).norm() <= q.error_bound);
  CHECK(std::abs(q.norm - 1.8) <= q.error_bound);
  CHECK(q.inside_ball);
  CHECK(b.contains(q.x));
  const ExactQpResult e = exact_min_norm_point(b);
  REQUIRE(e.status == ExactStatus::optimal);
  CHECK(e.x[0] == Rational(27, 25));
  CHECK(e.x[1] == Rational(36, 25));
  CHECK(e.norm_squared == Rational(81, 25));
  CHECK(squared_distance(to_rational(q.x), e.x) <= Rational(q.error_bound) * Rational(q.error_bound));

  // A slab through the origin: the minimum-norm point is 0.
  ConvexBody through(2, 1.0);
  through.add({{1.0, 1.0}, 0.5, 1.0});
  const auto z = through.min_norm_point();
  REQUIRE(z.status == ConvexBody::QpResult::optimal);
  CHECK(z.x.norm() <= z.error_bound);
}

TEST_CASE("a slab that misses the ball: K is empty, reported as such by every program", "[geometry]") {
  // Same slab, R = 1: every point of the slab has norm ≥ 1.8 > R, and over the box
  // |θ_c| ≤ 1 the largest ⟨a,θ⟩ is 7 < 9, so P is empty too.
  ConvexBody b(2, 1.0);
  b.add({{3.0, 4.0}, 10.0, 1.0});
  const auto lp = b.maximise(vec({1, 0}));
  INFO(lp.message);
  CHECK(lp.status == ConvexBody::LpResult::infeasible);
  CHECK(lp.certified);
  CHECK(std::isnan(lp.value));
  CHECK(exact_maximise(b, vec({1, 0})).status == ExactStatus::infeasible);
  const auto q = b.min_norm_point();
  INFO(q.message);
  CHECK(q.status == ConvexBody::QpResult::infeasible);
  CHECK(q.certified);
  CHECK(exact_min_norm_point(b).status == ExactStatus::infeasible);

  // R = 1.5: the box meets the slab (θ = (1.5, 1.5) gives 10.5) but the ball does not:
  // the minimum-norm point exists and lies outside the ball.
  ConvexBody c(2, 1.5);
  c.add({{3.0, 4.0}, 10.0, 1.0});
  const auto qc = c.min_norm_point();
  INFO(qc.message);
  REQUIRE(qc.status == ConvexBody::QpResult::optimal);
  CHECK_FALSE(qc.inside_ball);
  CHECK((qc.x - vec({1.08, 1.44})).norm() <= qc.error_bound);
  const ExactQpResult ec = exact_min_norm_point(c);
  REQUIRE(ec.status == ExactStatus::optimal);
  CHECK_FALSE(ec.inside_ball);
}

TEST_CASE("disjoint parallel slabs: infeasible with a Farkas certificate, never a value", "[geometry]") {
  ConvexBody b(2, 10.0);
  b.add({{1.0, 0.0}, 0.0, 1.0});
  b.add({{1.0, 0.0}, 5.0, 1.0});
  const auto lp = b.maximise(vec({0.3, 1}));
  INFO(lp.message);
  CHECK(lp.status == ConvexBody::LpResult::infeasible);
  CHECK(lp.certified);
  CHECK(std::isnan(lp.value));
  const auto w = b.width(vec({1, 0}));
  CHECK(std::isnan(w.width));
  const auto q = b.min_norm_point();
  INFO(q.message);
  CHECK(q.status == ConvexBody::QpResult::infeasible);
  CHECK(q.certified);
  CHECK(exact_maximise(b, vec({0.3, 1})).status == ExactStatus::infeasible);
  CHECK(exact_min_norm_point(b).status == ExactStatus::infeasible);
}

TEST_CASE("a body empty by less than CLP's tolerance is never certified nonempty", "[geometry]") {
  // Two slabs 10⁻¹¹ apart: CLP's primal tolerance (10⁻⁷) cannot see the gap. Either
  // the program reports infeasible, or it reports an uncertified point.
  ConvexBody b(2, 10.0);
  b.add({{1.0, 0.0}, 0.0, 1.0});
  b.add({{1.0, 0.0}, 2.0 + 1e-11, 1.0});
  REQUIRE(exact_maximise(b, vec({0, 1})).status == ExactStatus::infeasible);
  const auto lp = b.maximise(vec({0, 1}));
  INFO(lp.message);
  CHECK_FALSE((lp.status == ConvexBody::LpResult::optimal && lp.certified));
  const auto q = b.min_norm_point();
  INFO(q.message);
  CHECK_FALSE((q.status == ConvexBody::QpResult::optimal && q.certified));
}

TEST_CASE("verifiers reject wrong answers", "[geometry]") {
  const ConvexBody b = rectangle();
  const auto top = b.maximise(vec({1, 0}));
  REQUIRE(top.status == ConvexBody::LpResult::optimal);
  CHECK(b.contains(top.x));
  CHECK(exact_contains(b, top.x));
  // Pushed outward by 10⁻⁹ the point leaves the slab |θ0 − 1| ≤ 0.5.
  Eigen::VectorXd out = top.x;
  out(0) += 1e-9;
  CHECK_FALSE(b.contains(out));
  CHECK(b.max_violation(out) > 0);
  CHECK_FALSE(exact_contains(b, out));
  CHECK(exact_slab_violation(b, to_rational(out)) > 0);
  // A point in every slab but outside the ball ‖θ‖ ≤ R.
  ConvexBody thin(2, 1.0);
  thin.add({{1.0, 0.0}, 0.0, 5.0});
  CHECK_FALSE(thin.contains(vec({0.9, 0.9})));
  CHECK_FALSE(exact_contains(thin, vec({0.9, 0.9})));
  CHECK(thin.contains(vec({0.6, 0.6})));
  // A wrong optimum is outside the certified bracket.
  CHECK_FALSE((top.lower <= 1.5 + 1e-9 && 1.5 + 1e-9 <= top.upper));
}

TEST_CASE("bad input is rejected with an exception naming the problem", "[geometry]") {
  CHECK_THROWS_AS(ConvexBody(0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(ConvexBody(2, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(ConvexBody(2, std::numeric_limits<double>::infinity()), std::invalid_argument);
  ConvexBody b(2, 1.0);
  CHECK_THROWS_AS(b.add({{1.0}, 0.0, 1.0}), std::invalid_argument);
  CHECK_THROWS_AS(b.add({{1.0, std::nan("")}, 0.0, 1.0}), std::invalid_argument);
  CHECK_THROWS_AS(b.add({{1.0, 0.0}, 0.0, -1.0}), std::invalid_argument);
  CHECK_THROWS_AS(b.maximise(vec({1, 0, 0})), std::invalid_argument);
  CHECK_THROWS_AS(b.least_squares_centre(3), std::invalid_argument);
  CHECK(b.size() == 0);
}

TEST_CASE("least-squares centre recovers an affine subspace from exact constraints", "[geometry]") {
  // H = p0 + span(V), V ∈ R^{n×free} orthonormal; constraints a_r ⊥ span(V), b_r = ⟨a_r, p0⟩
  // (rounded), η_r = 10⁻¹² (all equal, so the weights are a common scale).
  //
  // Tolerance. The computed SVD (Householder QR, then BDCSVD of R) is the exact SVD
  // of M + E with ‖E‖₂ ≤ ε‖M‖_F, ε := γ_{4Nn} (the standard backward error of
  // Householder QR, Higham Thm 19.4, with the constant taken as 4; the n×n SVD adds
  // a smaller term of the same form). The free singular values of M are 0 (up to the
  // rounding of b, which only moves x0), so by Weyl s_{free−1} ≤ ‖E‖ and by Wedin's
  // sin Θ theorem the computed free basis is within angle ‖E‖/(s_free − ‖E‖) of span(V).
  const int n = 16, N = 40;
  std::mt19937_64 rng(20261121);
  std::normal_distribution<double> normal;
  for (int free : {1, 3, 6}) {
    Eigen::MatrixXd g(n, free);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < free; ++j) g(i, j) = normal(rng);
    const Eigen::MatrixXd v = Eigen::HouseholderQR<Eigen::MatrixXd>(g).householderQ() * Eigen::MatrixXd::Identity(n, free);
    const Eigen::MatrixXd proj = Eigen::MatrixXd::Identity(n, n) - v * v.transpose();
    Eigen::VectorXd p0(n);
    for (int i = 0; i < n; ++i) p0(i) = normal(rng);
    ConvexBody body(n, 10.0);
    for (int r = 0; r < N; ++r) {
      Eigen::VectorXd a(n);
      for (int i = 0; i < n; ++i) a(i) = normal(rng);
      a = proj * a;
      body.add({std::vector<double>(a.data(), a.data() + n), a.dot(p0), 1e-12});
    }
    const ConvexBody::Centre c = body.least_squares_centre(free);
    const Eigen::VectorXd& s = c.singular_values;
    const double eps = tolerance::gamma(4LL * N * n);
    const double e_norm = eps * s.norm();  // ‖M‖_F = sqrt(Σ s_i²)
    const double s_free = s(free);
    REQUIRE(s_free > 2 * e_norm);
    const double angle_bound = e_norm / (s_free - e_norm);
    INFO("free = " << free << ", s_free = " << s_free << ", ‖E‖ ≤ " << e_norm);
    CHECK(c.rank == n - free);
    CHECK(s(free - 1) <= e_norm);
    CHECK(c.gap >= s_free / e_norm);
    // sin of the largest principal angle between span(free_basis) and span(V).
    const double sin_angle = (proj * c.free_basis.transpose()).norm();
    CHECK(sin_angle <= angle_bound);
    CHECK((c.free_basis * c.free_basis.transpose() - Eigen::MatrixXd::Identity(free, free)).norm() <= angle_bound);
    // x0 is the point of H nearest the origin, (I − VVᵀ)p0: the constrained part of the
    // minimum-norm LS solution moves by at most ‖δx‖ ≤ 2·(‖E‖/(s_free − ‖E‖))·‖x*‖
    // plus the effect of the rounded b (|δb_r| ≤ u|b_r|, scaled by 1/s_free).
    const Eigen::VectorXd x_star = proj * p0;
    double db = 0;
    for (const Slab& sl : body.slabs()) db += std::pow(tolerance::kDoubleUnitRoundoff * std::abs(sl.b) / sl.eta, 2);
    const double x_bound = 2 * angle_bound * x_star.norm() + std::sqrt(db) / (s_free - e_norm);
    CHECK((c.x0 - x_star).norm() <= x_bound);
    CHECK(body.contains(c.x0) == (body.max_violation(c.x0) <= 0));
  }
}

TEST_CASE("least-squares centre: degenerate sizes", "[geometry]") {
  ConvexBody b(4, 1.0);
  b.add({{1.0, 0.0, 0.0, 0.0}, 0.5, 0.1});  // N < n: zero rows are padded
  const auto c = b.least_squares_centre(3);
  CHECK(c.rank == 1);
  CHECK(std::isinf(c.gap));
  // x0 = (c/s)·v with one nonzero singular value: a few roundings of 0.5.
  CHECK(std::abs(c.x0(0) - 0.5) <= 4 * 0x1p-53);
  CHECK(c.x0.tail(3).norm() <= 4 * 0x1p-53);
  const auto all_free = b.least_squares_centre(4);
  CHECK(all_free.x0.norm() == 0.0);
  const auto none_free = b.least_squares_centre(0);
  CHECK(std::isinf(none_free.gap));
}

TEST_CASE("exact programs: optimum, optimal point, minimum-norm point and violation equal hand-computed rationals", "[geometry][hardening]") {
  // One slab 1/4 ≤ θ₁ + θ₂ ≤ 3/4 in the box |θ_c| ≤ 1 (R = 1).
  ConvexBody b(2, 1.0);
  b.add(Slab{{1.0, 1.0}, 0.5, 0.25});
  const ExactLpResult top = exact_maximise(b, vec({1, 1}));
  REQUIRE(top.status == ExactStatus::optimal);
  CHECK(top.value == Rational(3, 4));
  CHECK((top.x[0] + top.x[1] == Rational(3, 4)));  // an optimal point lies on the upper face
  CHECK(exact_minimise(b, vec({1, 1})).value == Rational(1, 4));
  // Along θ₁ alone the box binds: θ₁ = 1, θ₂ ∈ [−3/4, −1/4].
  const ExactLpResult right = exact_maximise(b, vec({1, 0}));
  CHECK(right.value == Rational(1));
  CHECK(right.x[0] == Rational(1));
  CHECK((right.x[1] >= Rational(-3, 4) && right.x[1] <= Rational(-1, 4)));
  // The minimum-norm point: the projection of 0 onto the near face, (1/8, 1/8).
  const ExactQpResult q = exact_min_norm_point(b);
  REQUIRE(q.status == ExactStatus::optimal);
  CHECK(q.x[0] == Rational(1, 8));
  CHECK(q.x[1] == Rational(1, 8));
  CHECK(q.norm_squared == Rational(1, 32));
  CHECK(q.inside_ball);
  // The fast QP's point within its own error bound of it.
  const ConvexBody::QpResult fq = b.min_norm_point();
  REQUIRE(fq.status == ConvexBody::QpResult::optimal);
  CHECK((fq.x - vec({0.125, 0.125})).norm() <= fq.error_bound);
  CHECK(std::abs(fq.norm - std::sqrt(1.0 / 32)) <= fq.error_bound);
  // Violations: at (1, 1), |2 − 1/2| − 1/4 = 5/4; on the face, 0; inside, 0 (not negative).
  CHECK(exact_slab_violation(b, {Rational(1), Rational(1)}) == Rational(5, 4));
  CHECK(exact_slab_violation(b, {Rational(3, 4), Rational(0)}) == Rational(0));
  CHECK(exact_slab_violation(b, {Rational(1, 4), Rational(1, 4)}) == Rational(0));
  CHECK(exact_contains(b, std::vector<Rational>{Rational(3, 4), Rational(0)}));
  CHECK_FALSE(exact_contains(b, std::vector<Rational>{Rational(3, 4), Rational(1, 1000000)}));
}

TEST_CASE("the ball's test at the edge: R < ‖x*‖² ≤ R² is inside, exactly and on the fast path", "[geometry][hardening]") {
  // One slab a = (3, 4), b = 10, η = 1: x* = (27/25, 36/25), ‖x*‖² = 81/25 = 3.24. A ball
  // test that compared ‖x‖² with R instead of R² would call it outside for R = 2
  // (3.24 > 2 but ≤ 4): the exact path must say inside, and the fast path the same.
  for (double radius : {2.0, 1.85, 1.8, 1.75}) {
    ConvexBody b(2, radius);
    b.add({{3.0, 4.0}, 10.0, 1.0});
    const ExactQpResult exact = exact_min_norm_point(b);
    REQUIRE(exact.status == ExactStatus::optimal);
    const bool inside = Rational(81, 25) <= Rational(radius) * Rational(radius);
    INFO("R = " << radius);
    CHECK(exact.inside_ball == inside);
    // The fast path inflates ‖x‖ by (n + 4)u before comparing: it may call a point
    // within that of the sphere outside (R = 1.8 is exactly on it), never the reverse.
    const ConvexBody::QpResult fast = b.min_norm_point();
    REQUIRE(fast.status == ConvexBody::QpResult::optimal);
    if (radius != 1.8) CHECK(fast.inside_ball == exact.inside_ball);
    else CHECK((!fast.inside_ball || exact.inside_ball));
  }
}

TEST_CASE("a slab tight at the optimum: the LP's point verified in P lies in P exactly", "[geometry][hardening]") {
  // Normals with entries 1/3 and 1/7 (not representable): the optimum along a slab's
  // own normal lies on its face, and CLP's vertex sits on it only to rounding. The
  // certificate must verify the point with that rounding counted in the right
  // direction (a violation is |⟨a,x⟩ − b| − η, rounded upward): whenever it says
  // "certified", the point satisfies every slab and the box in exact arithmetic, and
  // the bracket holds the exact optimum.
  ConvexBody b(3, 2.0);
  b.add({{1.0, 1.0 / 3, 1.0 / 7}, 0.5, 0.125});
  b.add({{1.0 / 7, 1.0, -1.0 / 3}, -0.25, 0.0625});
  b.add({{-1.0 / 3, 1.0 / 7, 1.0}, 0.125, 0.25});
  for (int s = 0; s < 3; ++s)
    for (double sense : {1.0, -1.0}) {
      const Eigen::VectorXd u = sense * Eigen::Map<const Eigen::VectorXd>(b.slabs()[s].a.data(), 3);
      const ConvexBody::LpResult lp = b.maximise(u);
      const ExactLpResult exact = exact_maximise(b, u);
      INFO("slab " << s << ", sense " << sense << ": " << lp.message);
      REQUIRE(lp.status == ConvexBody::LpResult::optimal);
      REQUIRE(exact.status == ExactStatus::optimal);
      CHECK(lp.certified);
      if (!lp.certified) continue;
      const std::vector<Rational> x = to_rational(lp.x);
      CHECK(exact_slab_violation(b, x) == Rational(0));
      for (const Rational& v : x) CHECK(abs(v) <= Rational(2));
      CHECK(Rational(lp.lower) <= exact.value);
      CHECK(exact.value <= Rational(lp.upper));
      // In double each slab's violation is within its evaluation band of the exact one (≤ 0).
      for (const Slab& slab : b.slabs()) {
        const Eigen::Map<const Eigen::VectorXd> a(slab.a.data(), 3);
        const double value = std::abs(a.dot(lp.x) - slab.b) - slab.eta;
        CHECK(value <= tolerance::slab_membership_band(a.cwiseAbs().dot(lp.x.cwiseAbs()), std::abs(slab.b), slab.eta, 3,
                                                       0, 0, 0, lp.x.cwiseAbs().maxCoeff()));
      }
    }
}
