// Claim: the fast programs of the stage-2 convex body (CLP in double, plus the a
// posteriori certificates of proofs/convex_body_programs.md) agree with CGAL's exact
// solver within their own error bounds:
//   |value − OPT| ≤ error_bound and OPT ∈ [lower, upper]   (max/min ⟨u,θ⟩ over P),
//   |width − (OPT_max − OPT_min)| ≤ width.error_bound,
//   ‖x − x*‖ ≤ error_bound                                   (minimum-norm point),
// every comparison done exactly in rationals (no rounding of the exact side), and
// both paths report infeasibility on bodies made empty on purpose (the fast path
// with a verified Farkas certificate). A certified point is also checked to lie in
// the body exactly.
//
// Bodies: d = 2..4 (n = d² = 4..16), 5–40 slabs around a random point p (so p ∈ K),
// normals Gaussian or stage-2-shaped (vec(x_aᵀ(x_j − x_a)) for ±1 tokens, which
// includes zero normals), half-widths η_r = ‖a_r‖·10^{U(−4,0)}, or 10^{U(−10,−6)} for
// thin bodies.
//
// Test of the tester: a minimise whose bracket is left in the sign of the
// max ⟨−u,θ⟩ it solves (lower/upper not negated back), a feasible vertex returned
// as the minimum-norm point, and slabs whose lower sides are dropped (the empty
// bodies then look feasible) are each rejected.
#include "numeric/tolerance.hpp"
#include "geometry/convex_body.hpp"
#include "geometry/exact_programs.hpp"
#include "property.hpp"

#include <cmath>
#include <functional>
#include <random>
#include <string>

using namespace mha;

namespace {

enum class Normals { gaussian, boolean_tokens, thin };

struct Spec {
  int d = 2;
  int slabs = 5;
  Normals normals = Normals::gaussian;
  uint64_t seed = 0;
  bool infeasible = false;
};

ConvexBody make_body(const Spec& s) {
  const int n = s.d * s.d;
  const double radius = 2.0;
  std::mt19937_64 rng(s.seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  Eigen::VectorXd p(n);
  for (int i = 0; i < n; ++i) p(i) = normal(rng) * radius / (3.0 * std::sqrt(static_cast<double>(n)));
  ConvexBody body(n, radius);
  for (int r = 0; r < s.slabs; ++r) {
    Eigen::VectorXd a(n);
    if (s.normals == Normals::boolean_tokens) {
      Eigen::VectorXd xa(s.d), xj(s.d);
      for (int i = 0; i < s.d; ++i) {
        xa(i) = (rng() & 1) ? 1.0 : -1.0;
        xj(i) = (rng() & 1) ? 1.0 : -1.0;
      }
      for (int i = 0; i < s.d; ++i)
        for (int j = 0; j < s.d; ++j) a(i * s.d + j) = xa(i) * (xj(j) - xa(j));
    } else {
      for (int i = 0; i < n; ++i) a(i) = normal(rng);
    }
    const double lo = s.normals == Normals::thin ? -10.0 : -4.0;
    const double hi = s.normals == Normals::thin ? -6.0 : 0.0;
    const double eta = a.norm() * std::pow(10.0, lo + (hi - lo) * 0.5 * (1.0 + unit(rng)));
    const double b = a.dot(p) + 0.9 * eta * unit(rng);
    body.add({std::vector<double>(a.data(), a.data() + n), b, eta});
  }
  if (s.infeasible) {
    // A copy of a slab with a nonzero normal, shifted past its far side by a positive
    // gap: the two bands are disjoint. (Token normals can be zero; if all are, use e_0.)
    Slab base{std::vector<double>(n, 0.0), 0.0, 0.1};
    base.a[0] = 1.0;
    for (const Slab& sl : body.slabs())
      if (Eigen::Map<const Eigen::VectorXd>(sl.a.data(), n).norm() > 0) {
        base = sl;
        break;
      }
    body.add(base);
    const double scale = base.eta + Eigen::Map<const Eigen::VectorXd>(base.a.data(), n).norm() * radius;
    const double gap = scale * std::pow(10.0, -4.0 + 4.0 * 0.5 * (1.0 + unit(rng)));
    body.add({base.a, base.b + 2.0 * base.eta + gap, base.eta});
  }
  return body;
}

Spec gen_spec(bool infeasible) {
  Spec s;
  s.d = *rc::gen::inRange(2, 5).as("d");
  s.slabs = *rc::gen::inRange(5, 41).as("slabs");
  s.normals = static_cast<Normals>(*rc::gen::inRange(0, 3).as("normals (0 gaussian, 1 boolean tokens, 2 thin)"));
  s.seed = *rc::gen::arbitrary<uint64_t>().as("seed");
  s.infeasible = infeasible;
  return s;
}

Eigen::VectorXd direction(uint64_t seed, int n) {
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  std::normal_distribution<double> normal;
  Eigen::VectorXd u(n);
  for (int i = 0; i < n; ++i) u(i) = normal(rng);
  return u;
}

bool in_polytope_exactly(const ConvexBody& b, const Eigen::VectorXd& x) {
  return exact_slab_violation(b, to_rational(x)) <= 0 && x.cwiseAbs().maxCoeff() <= b.radius();
}

void check_lp(const ConvexBody& body, const ConvexBody::LpResult& fast, const ExactLpResult& exact) {
  RC_ASSERT(fast.status == ConvexBody::LpResult::optimal);
  RC_ASSERT(exact.status == ExactStatus::optimal);
  RC_ASSERT(abs(Rational(fast.value) - exact.value) <= Rational(fast.error_bound));
  RC_ASSERT(Rational(fast.lower) <= exact.value);
  RC_ASSERT(exact.value <= Rational(fast.upper));
  if (fast.certified) RC_ASSERT(in_polytope_exactly(body, fast.x));
}

using WidthOf = std::function<ConvexBody::Width(const ConvexBody&, const Eigen::VectorXd&)>;

// The LP property for the width (both optima) computed by `width_of`.
auto widths_agree(const WidthOf& width_of) {
  return [width_of] {
    const Spec s = gen_spec(false);
    const ConvexBody body = make_body(s);
    const Eigen::VectorXd u = direction(s.seed, body.dim());
    const ConvexBody::Width w = width_of(body, u);
    const ExactLpResult emax = exact_maximise(body, u);
    const ExactLpResult emin = exact_minimise(body, u);
    check_lp(body, w.max, emax);
    check_lp(body, w.min, emin);
    RC_ASSERT(abs(Rational(w.width) - (emax.value - emin.value)) <= Rational(w.error_bound));
    RC_CLASSIFY(w.max.certified && w.min.certified, "both LPs certified");
  };
}

// Mistake: minimise returns the bracket [lower, upper] of max ⟨−u,θ⟩ without negating it back.
ConvexBody::Width width_with_unflipped_min_bracket(const ConvexBody& body, const Eigen::VectorXd& u) {
  ConvexBody::Width w = body.width(u);
  const double lower = w.min.lower;
  w.min.lower = -w.min.upper;
  w.min.upper = -lower;
  return w;
}

using MinNormOf = std::function<ConvexBody::QpResult(const ConvexBody&)>;

// The QP property for the minimum-norm point computed by `min_norm_of`.
auto min_norm_agrees(const MinNormOf& min_norm_of) {
  return [min_norm_of] {
    const Spec s = gen_spec(false);
    const ConvexBody body = make_body(s);
    const ConvexBody::QpResult fast = min_norm_of(body);
    const ExactQpResult exact = exact_min_norm_point(body);
    RC_ASSERT(fast.status == ConvexBody::QpResult::optimal);
    RC_ASSERT(exact.status == ExactStatus::optimal);
    const Rational bound(fast.error_bound);
    RC_ASSERT(squared_distance(to_rational(fast.x), exact.x) <= bound * bound);
    if (fast.certified) {
      RC_ASSERT(exact_slab_violation(body, to_rational(fast.x)) <= 0);
      // A certified point of the slabs inside the ball proves K ≠ ∅.
      if (fast.inside_ball) RC_ASSERT(exact.inside_ball);
    }
    // The other way round they may differ only when ‖x*‖ is within the bound of R:
    // ‖x‖ ≤ ‖x*‖ + bound ≤ R + bound, and the computed norm adds a relative (n+4)u.
    if (exact.inside_ball && !fast.inside_ball) {
      const double slack = (body.radius() + fast.error_bound) * tolerance::gamma(body.dim() + 4);
      RC_ASSERT(fast.norm - body.radius() <= fast.error_bound + slack);
    }
    RC_CLASSIFY(fast.certified, "QP certified");
  };
}

// Mistake: a feasible vertex (an LP optimum) returned as the minimum-norm point, with the QP's bound.
ConvexBody::QpResult vertex_as_min_norm_point(const ConvexBody& body) {
  ConvexBody::QpResult r = body.min_norm_point();
  r.x = body.maximise(Eigen::VectorXd::Ones(body.dim())).x;
  r.norm = r.x.norm();
  return r;
}

using BodyAsSolved = std::function<ConvexBody(const ConvexBody&)>;

// The infeasibility property, with the programs solved on `solved_body(body)`.
auto empty_bodies_reported(const BodyAsSolved& solved_body) {
  return [solved_body] {
    const Spec s = gen_spec(true);
    const ConvexBody body = make_body(s);
    const Eigen::VectorXd u = direction(s.seed, body.dim());
    const ConvexBody solved = solved_body(body);
    const ConvexBody::LpResult lp = solved.maximise(u);
    const ConvexBody::QpResult qp = solved.min_norm_point();
    RC_ASSERT(exact_maximise(body, u).status == ExactStatus::infeasible);
    RC_ASSERT(exact_min_norm_point(body).status == ExactStatus::infeasible);
    RC_ASSERT(lp.status == ConvexBody::LpResult::infeasible);
    RC_ASSERT(lp.certified);
    RC_ASSERT(qp.status == ConvexBody::QpResult::infeasible);
    RC_ASSERT(qp.certified);
  };
}

// Mistake: each slab's lower side dropped (only a·θ ≤ b + η kept, as a slab 10⁶ wider below).
ConvexBody upper_sides_only(const ConvexBody& body) {
  ConvexBody one_sided(body.dim(), body.radius());
  for (const Slab& sl : body.slabs()) one_sided.add({sl.a, sl.b - 1e6, sl.eta + 1e6});
  return one_sided;
}

}  // namespace

TEST_CASE("convex body programs: CLP with certificates vs CGAL exact", "[property][geometry]") {
  mha::test::property("LP optima and widths within their a posteriori bounds", 40,
                      widths_agree([](const ConvexBody& body, const Eigen::VectorXd& u) { return body.width(u); }));

  mha::test::property("minimum-norm point within its a posteriori bound", 40,
                      min_norm_agrees([](const ConvexBody& body) { return body.min_norm_point(); }));
  mha::test::property("bodies made empty on purpose: both paths say infeasible", 30,
                      empty_bodies_reported([](const ConvexBody& body) { return body; }));
}

TEST_CASE("test of the tester: the convex body LP property rejects an unflipped minimum bracket",
          "[property][geometry][tester]") {
  mha::test::property_rejects("minimise's bracket not negated back", 4, widths_agree(width_with_unflipped_min_bracket));
}

TEST_CASE("test of the tester: the minimum-norm and infeasibility properties reject a vertex and one-sided slabs",
          "[property][geometry][tester]") {
  mha::test::property_rejects("a feasible vertex returned as the minimum-norm point", 6,
                              min_norm_agrees(vertex_as_min_norm_point));
  mha::test::property_rejects("slabs with their lower sides dropped", 4, empty_bodies_reported(upper_sides_only));
}
