// What the checks of stage 1 and of polishing compare, item by item, from real
// computations: stage 1's exact zeros (an exact 0 on both paths with a bound of 0
// is one agreeing decision; a nonzero difference against that bound disagrees; an
// exact 0 difference against a positive bound is an item kept with its bound), every
// entry of Ŵ compared; polishing's sample count max(32, ⌈2md/k⌉) at hand-computed
// values and used when none is given; the empty and the rank-deficient iteration;
// and the accepted step's band, the sum of the two objectives' bounds: a rise of
// E_ref between one bound and the sum is undecided, not a disagreement.
#include "instances.hpp"
#include "data/oracle.hpp"
#include "model/forward_error.hpp"
#include "stages/polish/check.hpp"
#include "stages/polish/reference.hpp"
#include "stages/stage1/check.hpp"
#include "stages/stage2/body_check.hpp"
#include "stages/stage2/check.hpp"
#include "stages/stage2/sculpt.hpp"
#include "numeric/precision.hpp"
#include "numeric/tolerance.hpp"
#include "geometry/convex_body.hpp"
#include "stages/stage1/reference.hpp"
#include "stages/stage6/check.hpp"
#include "stages/stage3/check.hpp"
#include "verify/verify.hpp"
#include "numeric/rng.hpp"

#include <catch2/catch.hpp>

#include <Eigen/QR>
#include <Eigen/SVD>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <regex>
#include <string>
#include <vector>

using namespace mha;
namespace tol = mha::tolerance;

namespace {

// An oracle's inputs with every label 0: stage 1's statistic and its bound are then exactly 0.
class ZeroLabels : public SampleSource {
 public:
  explicit ZeroLabels(const SampleSource& inner) : inner_(inner) {}
  int k() const override { return inner_.k(); }
  int d() const override { return inner_.d(); }
  int64_t available() const override { return inner_.available(); }
  LabelledBatch draw(uint64_t first, int64_t count, int threads) const override {
    LabelledBatch b = inner_.draw(first, count, threads);
    std::fill(b.y.begin(), b.y.end(), 0.0);
    return b;
  }

 private:
  const SampleSource& inner_;
};

const ComparisonPart& part_of_row(const Comparison& row, const std::string& name) {
  const auto it = std::find_if(row.parts.begin(), row.parts.end(), [&](const ComparisonPart& p) { return p.name == name; });
  REQUIRE(it != row.parts.end());
  return *it;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("stage 1: exact zeros are decisions, a difference against a zero bound disagrees, every entry compared", "[verify][stage1][branches]") {
  const Instance inst = mha::test::generated_instance(4, 2, 2, 3.0, 4);
  const SampleOracle oracle(inst, 3);
  const ZeroLabels zero(oracle);
  const Stage1SameSampleCheck exact = stage1_same_sample_check(zero, nullptr, 0, 40, 128);
  REQUIRE(exact.bound.maxCoeff() == 0.0);  // zero labels: the statistic and its bound are exact zeros
  const Comparison zeros = check_stage1(zero, nullptr, 0, 40);
  CHECK(zeros.compared == 16);  // every entry of the 4 × 4 Ŵ
  CHECK(zeros.agree);
  CHECK(zeros.slack == 0.0);  // decided as exact zeros, not recorded as 0/0
  CHECK(zeros.bound == 0.0);
  CHECK(zeros.undecided == 0);
  CHECK(contains(zeros.detail, "40 samples, labels as the source has them"));

  auto off_at_corner = [](double by) {
    return [by](const SampleSource& s, const Stage1Options& o) {
      Stage1Result r = stage1_estimate_wsum(s, o);
      r.w_hat(3, 3) += by;
      return r;
    };
  };
  const Comparison off = check_stage1(zero, nullptr, 0, 40, off_at_corner(std::numeric_limits<double>::denorm_min()));
  CHECK(disagrees(off));  // the smallest difference is beyond a bound of 0 (the last entry)
  CHECK(off.compared == 16);

  // The fast path giving the reference's own values: every difference an exact 0
  // against a positive bound, kept as items (the first entry's bound, slack 0).
  const Stage1SameSampleCheck clean = stage1_same_sample_check(oracle, nullptr, 0, 40, 128);
  REQUIRE(clean.bound.minCoeff() > 0);
  const Comparison same = check_stage1(oracle, nullptr, 0, 40, [&clean](const SampleSource& s, const Stage1Options& o) {
    Stage1Result r = stage1_estimate_wsum(s, o);
    r.w_hat = clean.reference;
    return r;
  });
  CHECK(same.agree);
  CHECK(same.compared == 16);
  CHECK(same.max_difference == 0.0);
  CHECK(same.bound == clean.bound(0, 0));
  CHECK(same.slack == 0.0);
  const Comparison layered = check_stage1(oracle, &inst.layer, 0, 10);
  CHECK(contains(layered.detail, "10 samples, labels recomputed in MPFR"));
}

TEST_CASE("polishing's check samples: max(32, ⌈2md/k⌉) at hand-computed values", "[verify][polish]") {
  CHECK(polish_check_samples(4, 2, 2) == 32);    // ⌈16/2⌉ = 8 → 32
  CHECK(polish_check_samples(16, 2, 2) == 32);   // ⌈64/2⌉ = 32
  CHECK(polish_check_samples(17, 2, 2) == 34);   // ⌈68/2⌉
  CHECK(polish_check_samples(50, 3, 2) == 67);   // ⌈200/3⌉ = 66.67 → 67
  CHECK(polish_check_samples(48, 3, 2) == 64);   // ⌈192/3⌉ = 64 exactly
  CHECK(polish_check_samples(48, 3, 3) == 96);   // ⌈288/3⌉
  CHECK(polish_check_samples(100, 7, 1) == 32);  // ⌈200/7⌉ = 29 → 32
  CHECK(polish_check_samples(100, 5, 1) == 40);  // ⌈200/5⌉
}

TEST_CASE("polishing's check: its own sample count when none is given, no samples and a rank-deficient design not compared", "[verify][polish][branches]") {
  const Instance inst = mha::test::generated_instance(6, 2, 2, 3.0, 5);
  const SampleOracle oracle(inst, 1);
  const Comparison row = check_polish(inst.layer, oracle, 0, 0);  // 0: polish_check_samples(6, 2, 2) = 32
  INFO(row.detail);
  CHECK(contains(row.detail, "on 32 samples"));
  CHECK(row.compared >= 1);
  const Comparison given = check_polish(inst.layer, oracle, 0, 33);
  CHECK(contains(given.detail, "on 33 samples"));

  // The gradient part names the linear model the iteration used.
  PolishOptions single;
  single.threads = 1;
  PolishIteration model = polish_iteration(oracle.draw(0, 32, 1), inst.layer, single);
  for (const bool dense : {true, false}) {
    model.dense = dense;
    const Comparison by_model = check_polish_iteration(model);
    INFO(part_of_row(by_model, "gradient").detail);
    CHECK(contains(part_of_row(by_model, "gradient").detail, dense ? "(dense model" : "(matrix-free model"));
  }

  PolishIteration empty;  // no samples, a finite objective
  empty.objective = 0.5;
  const Comparison none = check_polish_iteration(empty);
  CHECK(none.compared == 0);
  CHECK(none.detail == "no samples");
  CHECK(std::string(verdict(none)) == "not compared");

  PolishOptions o;
  o.threads = 1;
  PolishIteration deficient = polish_iteration(oracle.draw(0, 32, 1), inst.layer, o);
  deficient.objective = std::numeric_limits<double>::infinity();
  const Comparison rank = check_polish_iteration(deficient);
  CHECK(rank.compared == 0);
  CHECK(contains(rank.detail, "rank-deficient"));
  CHECK(std::string(verdict(rank)) == "not compared");
}

TEST_CASE("polishing's accepted step: a rise of E_ref beyond each bound but within their sum is undecided", "[verify][polish][branches]") {
  const Instance inst = mha::test::generated_instance(6, 2, 2, 3.0, 5);
  const SampleOracle oracle(inst, 1);
  Layer start = inst.layer;
  for (auto& h : start.heads) h.theta *= 1 + 1e-6;
  PolishOptions o;
  o.threads = 1;
  const PolishIteration base = polish_iteration(oracle.draw(0, 32, 1), start, o);
  const ObjectiveReference at_start = objective_reference(base.start, base.xs, base.ys, 128, design_route_bound);
  auto step = [&](double t) {
    PolishIteration it = base;
    it.accepted = true;
    it.next = it.start;
    for (auto& h : it.next.heads) h.theta *= 1 + t;
    return it;
  };
  auto at = [&](double t) {
    const PolishIteration it = step(t);
    return objective_reference(it.next, it.xs, it.ys, 128, design_route_bound);
  };
  // Aim at a rise of 1.5 times the start's bound (E is linear in t this close): the two
  // bounds are nearly equal, so the rise lies beyond each of them and within their sum.
  const double probe = 1e-7;
  const double slope = (at(probe).objective - at(-probe).objective) / (2 * probe);
  REQUIRE(slope != 0);
  double t = 1.5 * at_start.bound / slope;
  for (int i = 0; i < 3; ++i) t *= 1.5 * at_start.bound / (at(t).objective - at_start.objective);
  const ObjectiveReference at_next = at(t);
  const double rise = at_next.objective - at_start.objective;
  INFO("rise " << rise << ", bounds " << at_start.bound << " and " << at_next.bound);
  REQUIRE(rise > 1.1 * std::max(at_start.bound, at_next.bound));
  REQUIRE(rise < 0.9 * (at_start.bound + at_next.bound));

  PolishIteration it = step(t);
  it.next_objective = at_next.objective;  // the fast objective as the reference rounds it: the row agrees
  const Comparison c = check_polish_iteration(it);
  INFO(c.detail);
  CHECK(c.agree);
  const ComparisonPart& decision = part_of_row(c, "accepted step");
  CHECK(decision.compared == 1);
  CHECK(decision.undecided == 1);  // within the band of the two bounds' sum: not decided
  CHECK(decision.agree);
  CHECK_FALSE(disagrees(c));
  // Test of the tester: a band of one bound (a term of the sum dropped) decides this
  // rise as a rise, so the step above would disagree.
  CHECK(side_of(at_next.objective, at_start.objective, at_start.bound) == BandSide::above);
  CHECK(side_of(at_next.objective, at_start.objective, at_next.bound) == BandSide::above);
}

namespace {

// Stage 2's rows, τ and body as verify uses them, on d = 8, k = 2, m = 2.
struct CertificationSetup {
  Instance inst = mha::test::generated_instance(8, 2, 2, 3.0, 7);
  SampleOracle oracle{inst, 1};
  std::vector<CertificationRow> rows = certification_rows(oracle, inst.layer.w_sum(), 0, 100);
  CertifyOptions options;
  BodyOptions body;
  CertificationSetup() {
    options.sigma_min = default_sigma_min(8, 2, 2);
    body.radius = SculptOptions{}.radius;
  }
  // The relative residuals of the rows that pass every test but τ's, ascending.
  std::vector<double> eligible_residuals() const {
    CertifyOptions open = options;
    open.tau = std::numeric_limits<double>::infinity();
    std::vector<double> out;
    for (const CertificationRow& r : rows) {
      const RowCertificate c = certify_row_fast(r.x, r.y, r.b, r.row, open);
      if (c.verdict == RowVerdict::certified) out.push_back(c.relative_residual);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  Comparison check(const CertifyOptions& o, const CertifyFast& fast = certify_row_fast) const {
    return check_certification("2", rows, o, 2, &inst.layer, body, fast);
  }
};

}  // namespace

TEST_CASE("certification: a row at τ is counted undecided, the bound kept is a row's own, the detail's counts", "[verify][certify][branches]") {
  const CertificationSetup s;
  const std::vector<double> residuals = s.eligible_residuals();
  REQUIRE(residuals.size() >= 3);
  CertifyOptions between = s.options;
  between.tau = 0.5 * (residuals[1] + residuals[2]);  // no row on τ: every verdict decided
  const Comparison decided = s.check(between);
  INFO(decided.detail);
  CHECK_FALSE(disagrees(decided));
  CHECK(decided.compared == 200);
  CHECK(decided.bound > 0);
  CHECK(decided.bound < 1e-6);  // a row's derived bound on ‖v̂ − v*‖, not the exact zero's placeholder 1
  // Each reference verdict with its count, separated by commas; no row's own item undecided
  // (the row's undecided count adds its body parts').
  CHECK(std::regex_search(decided.detail, std::regex("reference verdicts: [a-z_]+ [0-9]+(, [a-z_]+ [0-9]+)+; ")));
  CHECK(contains(decided.detail, "certified "));
  CHECK(contains(decided.detail, "verdict disagreements 0, undecided 0"));

  CertifyOptions on_row = s.options;
  on_row.tau = residuals[1];  // a row's relative residual exactly on τ: within the band, undecided
  const Comparison at_tau = s.check(on_row);
  INFO(at_tau.detail);
  CHECK_FALSE(disagrees(at_tau));
  CHECK(at_tau.undecided >= 1);
  CHECK(contains(at_tau.detail, "verdict disagreements 0, undecided 1"));  // the row on τ, counted once

  // v̂ wrong by 10⁻⁶ of itself, every verdict the same: the rows disagree on v̂ and
  // no verdict disagrees.
  const Comparison wrong_v = s.check(between, [](const MatD& x, const MatD& y, const MatD& b, int row, const CertifyOptions& co) {
    RowCertificate c = certify_row_fast(x, y, b, row, co);
    c.v *= 1 + 1e-6;
    return c;
  });
  INFO(wrong_v.detail);
  CHECK(disagrees(wrong_v));
  CHECK(contains(wrong_v.detail, "verdict disagreements 0,"));
}

TEST_CASE("body membership decides a slab along the last coordinate and a slab across all of them", "[verify][certify]") {
  const ReferenceSlab exact_data;  // centre, width and normal bounds 0
  const std::vector<const ReferenceSlab*> bounds = {&exact_data};
  ConvexBody last(4, 20);
  last.add(Slab{{0, 0, 0, 1}, 0, 1});  // |θ_3| ≤ 1
  CHECK(reference_membership(last, bounds, Eigen::Vector4d(0, 0, 0, 0.5), 128) == BandSide::below);
  CHECK(reference_membership(last, bounds, Eigen::Vector4d(0, 0, 0, 1.5), 128) == BandSide::above);
  CHECK(reference_membership(last, bounds, Eigen::Vector4d(5, 5, 5, -0.5), 128) == BandSide::below);
  ConvexBody across(4, 20);
  across.add(Slab{{0.5, 0.5, 0.5, 0.5}, 1, 1});  // |Σθ/2 − 1| ≤ 1
  CHECK(reference_membership(across, bounds, Eigen::Vector4d(1, 1, 1, 0), 128) == BandSide::below);    // |1.5 − 1| < 1
  CHECK(reference_membership(across, bounds, Eigen::Vector4d(1, 1, 1, 2.5), 128) == BandSide::above);  // |2.75 − 1| > 1
  CHECK(reference_membership(across, bounds, Eigen::Vector4d(1, 1, 1, -2.5), 128) == BandSide::below); // |0.25 − 1| < 1
}

TEST_CASE("body membership: the band's Σ|a_c θ_c| is the slab's own, not ‖a‖₁ or ‖θ‖₁", "[verify][certify]") {
  // |θ_0 + θ_1| ≤ 1 in R⁴ at θ = (t, 0, 5, 0): the band's Σ|a_c θ_c| is |t|, while
  // ‖a‖₁ = 2 and ‖θ‖₁ = |t| + 5 would widen it past the edge found below.
  ConvexBody body(4, 20);
  body.add(Slab{{1, 1, 0, 0}, 0, 1});
  const ReferenceSlab exact_data;
  const std::vector<const ReferenceSlab*> bounds = {&exact_data};
  const double inf = std::numeric_limits<double>::infinity();
  auto band = [](double t) {
    return tol::slab_membership_band(std::abs(t), 0, 1, 4, 0, 0, 0, 5.0) +
           tol::reference_relative_error(128, 8) * (std::abs(t) + 1);
  };
  auto side = [&](double t) { return reference_membership(body, bounds, Eigen::Vector4d(t, 0, 5, 0), 128); };
  double outer = 1 + band(1);  // the largest t with t − 1 ≤ band(t) (t − 1 exact here)
  while (outer - 1 > band(outer)) outer = std::nextafter(outer, 0.0);
  while (std::nextafter(outer, inf) - 1 <= band(std::nextafter(outer, inf))) outer = std::nextafter(outer, inf);
  CHECK(side(outer) == BandSide::undecided);
  CHECK(side(std::nextafter(outer, inf)) == BandSide::above);
  // Test of the tester: the band with ‖a‖₁ or ‖θ‖₁ in its place covers the point one ulp out.
  const double beyond = std::nextafter(outer, inf);
  CHECK(beyond - 1 <= tol::slab_membership_band(2, 0, 1, 4, 0, 0, 0, 5.0));
  CHECK(beyond - 1 <= tol::slab_membership_band(beyond + 5, 0, 1, 4, 0, 0, 0, 5.0));
}

TEST_CASE("body membership: a point inside every slab is decided by the ball, undecided at its edge", "[verify][certify]") {
  ConvexBody body(4, 20);
  body.add(Slab{{1, 0, 0, 0}, 0, 1});  // |θ_0| ≤ 1, R = 20
  const ReferenceSlab exact_data;
  const std::vector<const ReferenceSlab*> bounds = {&exact_data};
  auto side = [&](double t) { return reference_membership(body, bounds, Eigen::Vector4d(0, t, 0, 0), 128); };
  CHECK(side(19) == BandSide::below);
  CHECK(side(21) == BandSide::above);  // outside the ball alone
  CHECK(side(-21) == BandSide::above);
  CHECK(side(20) == BandSide::undecided);  // ‖θ‖ = R: within the ball's band
  const double band = tol::ball_membership_band(20, 20, 4);
  CHECK(side(20 + band / 2) == BandSide::undecided);  // within the double evaluation's band, not only the MPFR's
  CHECK(side(20 - band / 2) == BandSide::undecided);
  CHECK(side(20 + 4 * band) == BandSide::above);  // a few bands out: decided
  CHECK(side(20 - 4 * band) == BandSide::below);
}

TEST_CASE("body membership at low precision: the reference's own term is (n + 4)·ε·(Σ|a_c θ_c| + |b| + η) and (n + 2)·ε·‖θ‖", "[verify][certify]") {
  // At the least precision the reference accepts (53 bits asked, ε = 2^-bits for the bits
  // MPFR then carries) and n = 1024 unknowns, the reference's own term spans many steps of
  // the double grid of the point, so a point between the band with and without the
  // factor S (or ‖θ‖) shows that factor. The points lie on the double grid, so the
  // reference's value is exact: θ_0 − 1 = j·2^-52 and ‖θ‖ − 20 = j·2^-48.
  unsigned bits = 0;
  {
    ScopedPrecision precision(53);
    bits = current_precision_bits();
  }
  const int n = 1024;
  const ReferenceSlab exact_data;
  const std::vector<const ReferenceSlab*> bounds = {&exact_data};
  auto first_beyond = [](double base, double step, double below) {  // the first grid point beyond base + below
    int j = 0;
    while (j * step <= below) ++j;
    return base + j * step;
  };
  auto point = [&](int coordinate, double value) {
    Eigen::VectorXd theta = Eigen::VectorXd::Zero(n);
    theta(coordinate) = value;
    return theta;
  };
  std::vector<double> e0(n, 0.0);
  e0[0] = 1;
  ConvexBody slab(n, 20);
  slab.add(Slab{e0, 0, 1});  // |θ_0| ≤ 1, S = θ_0 + |b| + η ≈ 2
  const double e_slab = tol::reference_relative_error(bits, n + 4);
  const double t = first_beyond(1, 0x1p-52, tol::slab_membership_band(1, 0, 1, n, 0, 0, 0, 1) + e_slab);  // beyond the band without S
  const double with_s = tol::slab_membership_band(t, 0, 1, n, 0, 0, 0, t) + e_slab * (t + 1);
  INFO("bits " << bits << ", θ_0 − 1 = " << t - 1 << ", band " << with_s);
  REQUIRE(t - 1 < with_s);
  CHECK(reference_membership(slab, bounds, point(0, t), 53) == BandSide::undecided);
  CHECK(reference_membership(slab, bounds, point(0, first_beyond(1, 0x1p-52, with_s)), 53) == BandSide::above);
  // The ball, R = 20, at θ = r e_1: band(‖θ‖) + (n + 2)·ε·‖θ‖.
  const double e_ball = tol::reference_relative_error(bits, n + 2);
  const double r = first_beyond(20, 0x1p-48, tol::ball_membership_band(20, 20, n) + e_ball);  // beyond the band without ‖θ‖
  const double ball = tol::ball_membership_band(r, 20, n) + e_ball * r;
  INFO("‖θ‖ − 20 = " << r - 20 << ", band " << ball);
  REQUIRE(r - 20 < ball);
  CHECK(reference_membership(slab, bounds, point(1, r), 53) == BandSide::undecided);
  CHECK(reference_membership(slab, bounds, point(1, first_beyond(20, 0x1p-48, ball)), 53) == BandSide::above);
}

TEST_CASE("the body's parts: test points at ∓4 bands decided and at ∓¼ undecided, widths along every direction named", "[verify][certify][branches]") {
  // Along each of the 4 rays to the fast body's boundary the points at −4 and +4
  // bands are decided (inside, outside), those at ∓¼ band undecided; the true Θ_1,
  // Θ_2 and the fast centre are inside. Widths: min(4, slabs) slab normals, the true
  // hull direction and 3 Gaussian directions.
  const CertificationSetup s;
  const std::vector<double> residuals = s.eligible_residuals();
  REQUIRE(residuals.size() >= 3);
  for (const double tau : {0.5 * (residuals[1] + residuals[2]), 0.5 * (residuals[residuals.size() - 2] + residuals.back())}) {
    CertifyOptions o = s.options;
    o.tau = tau;
    const Comparison c = s.check(o);
    INFO(c.detail);
    CHECK_FALSE(disagrees(c));
    const ComparisonPart& slabs = part_of_row(c, "body slabs");
    const int slab_count = slabs.compared / 3;  // centre, width and normal per slab
    REQUIRE(slab_count >= 1);
    CHECK(contains(slabs.detail, std::to_string(slab_count) + " slabs of " + std::to_string(slab_count) +
                                     " rows both paths certify; 0 rows certified on one path only or undecided"));
    CHECK_FALSE(contains(slabs.detail, "different number"));
    const ComparisonPart& membership = part_of_row(c, "body membership");
    INFO(membership.detail);
    CHECK(membership.compared == 2 + 1 + 4 * 4);
    CHECK(membership.undecided == 2 * 4);
    CHECK(contains(membership.detail, "19 points (the true Θ_i, the fast centre, 4 rays × 4 offsets around the boundary): "
                                      "reference inside 7, outside 4, undecided 8; disagreements 0"));
    const ComparisonPart& widths = part_of_row(c, "body widths");
    INFO(widths.detail);
    CHECK(widths.compared == std::min(4, slab_count) + 1 + 3);
    CHECK(contains(widths.detail, std::to_string(std::min(4, slab_count)) + " slab normals, the true hull direction, 3 random"));
    CHECK(contains(widths.detail, "reference widths by CLP's certified brackets"));  // n = 64 > 36: no exact programs
    CHECK_FALSE(contains(widths.detail, "not certified"));
  }
}

TEST_CASE("stage 6's design: each sample's rows [A_1 X, …, A_m X] beside its own labels, so the true W fits them", "[verify][stage6]") {
  const Instance inst = mha::test::generated_instance(5, 3, 2, 2.0, 9);
  const SampleOracle oracle(inst, 2);
  std::vector<MatD> thetas;
  for (const auto& h : inst.layer.heads) thetas.push_back(h.theta);
  const WDesign w = w_design(oracle, thetas, 4, 6);  // samples 4 .. 9
  REQUIRE(w.design.rows() == 6 * 3);
  REQUIRE(w.design.cols() == 2 * 5);
  REQUIRE(w.labels.rows() == 6 * 3);
  MatD stacked(2 * 5, 5);
  stacked << inst.layer.heads[0].w, inst.layer.heads[1].w;
  // F(X) = Σ_i A_i X W_i on both routes: the design route fl(D̂ W) and the oracle's fast
  // forward pass are each within their a-priori bound of the exact F(X) (model/forward_error.hpp,
  // proofs/forward_error_bound.md), so they differ by at most the sum, entrywise.
  const MatD residual = w.design * stacked - w.labels;
  const LabelledBatch batch = oracle.draw(4, 6, 1);
  for (int s = 0; s < 6; ++s) {
    const MatD x = batch.x.sample(s);
    const MatD bound = design_route_error_bound(inst.layer, x) + forward_error_bound(inst.layer, x);
    CHECK((residual.middleRows(s * 3, 3).cwiseAbs().array() <= bound.array()).all());
  }
  // The bound's tester: W_1 off by one part in 10⁶ leaves some row beyond it.
  MatD off = stacked;
  off.topRows(5) *= 1 + 1e-6;
  const MatD off_residual = w.design * off - w.labels;
  bool beyond = false;
  for (int s = 0; s < 6; ++s) {
    const MatD bound = design_route_error_bound(inst.layer, batch.x.sample(s)) + forward_error_bound(inst.layer, batch.x.sample(s));
    beyond = beyond || (off_residual.middleRows(s * 3, 3).cwiseAbs().array() > bound.array()).any();
  }
  CHECK(beyond);
  for (int s = 0; s < 6; ++s)
    for (int t = 0; t < 3; ++t)
      for (int c = 0; c < 5; ++c) CHECK(w.labels(s * 3 + t, c) == batch.y[(s * 3 + t) * 5 + c]);  // sample s, token t, column c
}

namespace {

// A body row certified on both paths with one slab |⟨a, θ⟩ − b| ≤ η, the fast slab
// given and the reference slab exact (bounds `normal_bound` on ‖â − a*‖₁, 0 otherwise).
struct HandRow {
  CertificationCheck check;
  std::vector<SlabConstraint> fast;
  HandRow(std::vector<double> a_fast, std::vector<double> a_ref, double b, double eta, double normal_bound = 0) {
    ReferenceSlab r;
    r.slab = SlabConstraint{std::move(a_ref), b, eta, 0, 1};
    r.normal_bound = normal_bound;
    check.reference_slabs = {r};
    fast = {SlabConstraint{std::move(a_fast), b, eta, 0, 1}};
  }
};

std::vector<ComparisonPart> hand_body(const std::vector<const HandRow*>& rows, int rays = 4) {
  std::vector<BodyRow> body;
  for (const HandRow* r : rows) body.push_back({r->fast, &r->check});
  BodyOptions o;
  o.boundary_rays = rays;
  return compare_body(body, 2, 2, nullptr, o, 128);  // θ ∈ R⁴, R = 20
}

std::string counts(int rays) {
  return "reference inside " + std::to_string(1 + rays) + ", outside " + std::to_string(rays) + ", undecided " +
         std::to_string(2 * rays) + "; disagreements 0";
}

}  // namespace

TEST_CASE("the body of hand-made slabs: rays that leave through the ball, a normal wrong in its last entry, a NaN normal", "[verify][certify][branches]") {
  // Two slabs of half-width 100 > R centred off the origin (the centre at (3, −2, 0, 0)):
  // every ray from the centre leaves through the ball, its test points placed by the
  // ball's band; 8 rays, in directions of both signs.
  const HandRow wide0({1, 0, 0, 0}, {1, 0, 0, 0}, 3, 100), wide1({0, 1, 0, 0}, {0, 1, 0, 0}, -2, 100);
  const std::vector<ComparisonPart> ball = hand_body({&wide0, &wide1}, 8);
  REQUIRE(ball.size() == 3);
  INFO(ball[1].detail);
  CHECK(ball[0].agree);
  CHECK(ball[1].name == "body membership");
  CHECK(contains(ball[1].detail, counts(8)));  // the centre and 8 points inside, 8 outside, 16 undecided
  CHECK(contains(ball[1].detail, "33 points (the fast centre, 8 rays × 4 offsets"));  // no true Θ_i given

  // â differs from a* only in its last entry: beyond a normal bound of 10⁻⁶ it disagrees, within it not.
  const HandRow last_off({1, 0, 0, 1e-3}, {1, 0, 0, 0}, 0, 1, 1e-6), last_close({1, 0, 0, 1e-9}, {1, 0, 0, 0}, 0, 1, 1e-6);
  const std::vector<ComparisonPart> off = hand_body({&last_off});
  CHECK_FALSE(off[0].agree);
  CHECK(off[0].max_difference == 1e-3 * tol::bound_evaluation_factor(4));  // the normal's ‖â − a*‖₁, kept after the exact zeros
  CHECK(hand_body({&last_close})[0].agree);

  // Two parallel slabs with different centres: the fast centre lies on neither mid-plane,
  // and the test points still sit at ∓4 and ∓¼ bands of the boundary each ray leaves by.
  const HandRow left({1, 0, 0, 0}, {1, 0, 0, 0}, 0, 1), right({1, 0, 0, 0}, {1, 0, 0, 0}, 0.5, 1);
  const std::vector<ComparisonPart> offset = hand_body({&left, &right}, 8);
  REQUIRE(offset.size() == 3);
  INFO(offset[1].detail);
  CHECK(contains(offset[1].detail, counts(8)));

  // A row certified on both paths with two fast slabs against one reference slab: decided, and wrong.
  HandRow two({1, 0, 0, 0}, {1, 0, 0, 0}, 0, 1);
  two.fast.push_back(two.fast.front());
  const std::vector<ComparisonPart> mismatch = hand_body({&wide0, &two});
  CHECK_FALSE(mismatch[0].agree);
  CHECK(contains(mismatch[0].detail, "; 1 rows with a different number of slabs"));

  // A fast slab 10 % wider than the reference's: the points just inside the fast boundary
  // are outside the reference body, and the membership part disagrees on its own.
  HandRow wider({1, 0, 0, 0}, {1, 0, 0, 0}, 0, 1);
  wider.fast.front().eta = 1.1;
  const std::vector<ComparisonPart> widened = hand_body({&wider});
  REQUIRE(widened.size() == 3);
  INFO(widened[1].detail);
  CHECK_FALSE(widened[0].agree);
  CHECK_FALSE(widened[1].agree);
  CHECK_FALSE(contains(widened[1].detail, "disagreements 0"));

  // A fast slab wider than the reference's by 10 of its membership bands: the points 4 bands
  // inside the fast boundary lie 6 outside the reference's, so the membership part disagrees
  // (points 40 bands away would straddle both boundaries and see nothing).
  HandRow ten_bands({1, 0, 0, 0}, {1, 0, 0, 0}, 0, 1);
  const double band_at_edge = tol::slab_membership_band(1, 0, 1, 4, 0, 0, 0, 20);  // the largest |θ_c| a ray's point has is below R = 20
  ten_bands.fast.front().eta = 1 + 10 * band_at_edge;
  const std::vector<ComparisonPart> slightly = hand_body({&ten_bands});
  REQUIRE(slightly.size() == 3);
  INFO(slightly[1].detail);
  CHECK_FALSE(slightly[1].agree);
  CHECK_FALSE(contains(slightly[1].detail, "disagreements 0"));

  // The same fault on one of two crossing slabs: the rays go in different directions, so
  // some leave through the faulty slab and see it and some leave through the other and do
  // not (4 rays in one direction would make it all or none).
  HandRow crossing({0, 1, 0, 0}, {0, 1, 0, 0}, 0, 1);
  const std::vector<ComparisonPart> partly = hand_body({&ten_bands, &crossing}, 8);
  REQUIRE(partly.size() == 3);
  INFO(partly[1].detail);
  CHECK_FALSE(partly[1].agree);
  CHECK_FALSE(contains(partly[1].detail, "disagreements 0"));
  CHECK_FALSE(contains(partly[1].detail, "disagreements 16"));  // 2 points per ray that sees the fault

  // One true head (m = 1): no hull direction among the widths, and the head is a test point.
  Layer one_head;
  one_head.heads.push_back({MatD::Identity(2, 2) * 0.25, MatD::Identity(2, 2)});
  std::vector<BodyRow> rows = {{wide0.fast, &wide0.check}, {wide1.fast, &wide1.check}};
  BodyOptions o;
  o.boundary_rays = 4;
  const std::vector<ComparisonPart> single = compare_body(rows, 2, 1, &one_head, o, 128);
  REQUIRE(single.size() == 3);
  INFO(single[1].detail);
  INFO(single[2].detail);
  CHECK(single[2].compared == 2 + 3);
  CHECK(contains(single[2].detail, "5 directions (2 slab normals, 3 random)"));
  CHECK(contains(single[1].detail, "18 points (the true Θ_i, the fast centre, 4 rays × 4 offsets"));

  // The exact programs (CGAL) give the reference widths up to n = 36 unknowns and 100 slabs.
  CHECK(contains(ball[2].detail, "5 directions (2 slab normals, 3 random); reference widths exact (CGAL) for 5"));
  std::vector<HandRow> many;
  many.reserve(101);
  for (int r = 0; r < 101; ++r) {
    const double angle = 0.01 * r;  // normals in the (θ_0, θ_1) plane and along θ_2, θ_3, none parallel
    std::vector<double> a = r % 3 == 0 ? std::vector<double>{std::cos(angle), std::sin(angle), 0, 0}
                          : r % 3 == 1 ? std::vector<double>{0, 0, std::cos(angle), std::sin(angle)}
                                       : std::vector<double>{std::cos(angle), 0, std::sin(angle), 0};
    many.emplace_back(a, a, 0, 5);
  }
  auto first = [&](int count) {
    std::vector<const HandRow*> rows;
    for (int r = 0; r < count; ++r) rows.push_back(&many[r]);
    return hand_body(rows);
  };
  CHECK(contains(first(12)[2].detail, "reference widths exact (CGAL) for 7"));
  CHECK(contains(first(100)[2].detail, "reference widths exact (CGAL) for 7"));
  CHECK(contains(first(101)[2].detail, "reference widths by CLP's certified brackets"));

  // A row the fast path certifies and the reference does not: left out of both bodies, counted.
  HandRow fast_only({0, 0, 1, 0}, {0, 0, 1, 0}, 0, 1);
  fast_only.check.reference_slabs.clear();
  const std::vector<ComparisonPart> one_path = hand_body({&wide0, &fast_only});
  CHECK(contains(one_path[0].detail, "1 slabs of 1 rows both paths certify; 1 rows certified on one path only"));

  // A NaN in a fast normal: the slab part disagrees, and no body is compared.
  const HandRow nan_normal({std::numeric_limits<double>::quiet_NaN(), 0, 0, 0}, {1, 0, 0, 0}, 0, 1);
  const std::vector<ComparisonPart> nan = hand_body({&nan_normal});
  REQUIRE(nan.size() == 1);
  CHECK_FALSE(nan[0].agree);
  CHECK(contains(nan[0].detail, "a fast slab is not finite"));
}

TEST_CASE("stage 3's proxy: a fast point just inside its derived bound agrees, just outside disagrees", "[verify][stage3][branches]") {
  // Minimum-norm points off the origin: (1, 1, 0, 0) with one active half-space
  // (θ_0 ∈ [1, 3], θ_0 + θ_1 ∈ [2, 4]), and the vertex (1, 1.5, 0, 0) of two non-orthogonal
  // ones (θ_0 ∈ [1, 3], θ_0 + 2θ_1 ∈ [4, 8]; κ₂ of their normals ≈ 2.6).
  ConvexBody one(4, 20), two(4, 20);
  one.add(Slab{{1, 0, 0, 0}, 2, 1});
  one.add(Slab{{1, 1, 0, 0}, 3, 1});
  two.add(Slab{{1, 0, 0, 0}, 2, 1});
  two.add(Slab{{1, 2, 0, 0}, 6, 2});
  for (const ConvexBody* body : {&one, &two}) {
    const Comparison exact = check_min_norm_point(*body);
    INFO(exact.detail);
    REQUIRE(exact.compared == 2);  // the point, and the ball's decision
    REQUIRE(exact.agree);
    CHECK(exact.undecided == 0);  // ‖θ_ref‖ ≈ 1.4 or 1.8, far inside R = 20: decided
    // The bound from its formula (check.cpp): (ε_QP + min_norm_solution_bound(κ, iterations·n,
    // q, ‖θ̂‖ + ε_QP) + u‖θ̂‖)·(1 + 4u-type factor), κ₂ of the q active normals with
    // σ_min lowered and σ_max raised by JacobiSVD's own error bound.
    const ActiveSetResult f = min_norm_point_active_set(*body);
    const ConvexBody::QpResult ref = body->min_norm_point();
    const auto q = static_cast<Eigen::Index>(f.active.size());
    REQUIRE(q >= 1);
    Eigen::MatrixXd normals(q, 4);
    for (Eigen::Index i = 0; i < q; ++i)
      normals.row(i) = Eigen::Map<const Eigen::RowVectorXd>(body->slabs()[f.active[i] / 2].a.data(), 4);
    const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(normals).singularValues();
    const double shift = tol::jacobi_singular_value_bound(4, q) * sv(0);
    const double kappa = (sv(0) + shift) / (sv(q - 1) - shift);
    const double bound = (ref.error_bound +
                          tol::min_norm_solution_bound(kappa, static_cast<long long>(f.iterations) * 4, q, f.x.norm() + ref.error_bound) +
                          tol::kDoubleUnitRoundoff * f.x.norm()) * tol::bound_evaluation_factor(4);
    CHECK(exact.bound == bound);
    REQUIRE(bound > 0);
    REQUIRE(bound < 1e-6);
    // The fast point moved along (0, 0, 1, 0) by 1 ∓ 10⁻¹¹ of the bound: the bound itself
    // moves by far less with the point (‖θ̂‖ changes by ~10⁻¹⁵), and every term of the bound
    // above 10⁻¹¹ of it (the certified QP's, the active-set solution's with its κ, u‖θ̂‖) decides.
    auto moved_by = [](double distance) {
      return [distance](const ConvexBody& b) {
        ActiveSetResult r = min_norm_point_active_set(b);
        r.x(2) += distance;
        return r;
      };
    };
    const Comparison inside = check_min_norm_point(*body, moved_by(bound * (1 - 1e-11)));
    CHECK(inside.agree);
    CHECK(inside.slack <= 1.0);
    CHECK(inside.slack > 1 - 1e-10);
    const Comparison outside = check_min_norm_point(*body, moved_by(bound * (1 + 1e-11)));
    CHECK_FALSE(outside.agree);
    CHECK(disagrees(outside));
  }
  CHECK(contains(check_min_norm_point(two).detail, "2 active half-spaces"));
  // K's emptiness against R: with R 10⁻⁹ beyond ‖θ_ref‖ = √2 (within the point's bound,
  // ~6·10⁻⁸) undecided, with R 10⁻⁶ beyond it decided (inside).
  for (const auto& [beyond, undecided] : {std::pair{1e-9, 1}, std::pair{1e-6, 0}}) {
    ConvexBody near(4, std::sqrt(2.0) + beyond);
    near.add(Slab{{1, 0, 0, 0}, 2, 1});
    near.add(Slab{{1, 1, 0, 0}, 3, 1});
    const Comparison c = check_min_norm_point(near);
    INFO(c.detail);
    CHECK(c.compared == 2);
    CHECK(c.undecided == undecided);
    CHECK(c.agree);
  }
}

TEST_CASE("verify 2: τ midway between the two middle residuals of the rows that pass every other test", "[verify][certify]") {
  const CertificationSetup s;  // verify's own rows for this instance: seed 1, 100 samples
  const std::vector<double> r = s.eligible_residuals();
  REQUIRE(r.size() >= 2);
  const size_t i = r.size() / 2;
  const double tau = 0.5 * (r[i - 1] + r[i]);
  VerifyOptions o;
  o.certify_samples = 100;
  const Comparison row = verify_instance(s.inst, {"2"}, o)[0];
  INFO(row.detail);
  char expected[64];
  std::snprintf(expected, sizeof expected, "τ = %.3g; ", tau);
  CHECK(contains(row.detail, expected));
  CHECK(row.compared == 200);
  // One sample (two rows), none of them eligible: τ stays the option's 10⁻³.
  o.certify_samples = 1;
  const Comparison one = verify_instance(s.inst, {"2"}, o)[0];
  INFO(one.detail);
  CHECK(one.compared == 2);
  CHECK(contains(one.detail, "τ = 0.001; "));
}

TEST_CASE("verify polish: the start is the truth with every Θ_i and W_i moved by polish_perturbation of its norm", "[verify][polish]") {
  // The stated start, built here: Θ_i += ε‖Θ_i‖ G/‖G‖ and W_i += ε‖W_i‖ H/‖H‖ with G, H the
  // Gaussian matrices of (seed, verify stream, i, 0) and (…, i, 1); verify's row from its own
  // start must be the row check_polish gives from this one.
  const Instance inst = mha::test::generated_instance(6, 2, 2, 3.0, 5);
  VerifyOptions o;
  o.polish_samples = 32;
  o.polish_perturbation = 1e-3;
  Layer start = inst.layer;
  for (size_t i = 0; i < start.heads.size(); ++i) {
    auto& h = start.heads[i];
    const MatD g = gaussian_matrix(o.seed, Stream::verify, i, 0, inst.d());
    const MatD w = gaussian_matrix(o.seed, Stream::verify, i, 1, inst.d());
    h.theta += o.polish_perturbation * h.theta.norm() / g.norm() * g;
    h.w += o.polish_perturbation * h.w.norm() / w.norm() * w;
  }
  const Comparison row = verify_instance(inst, {"polish"}, o)[0];
  const SampleOracle oracle(inst, o.seed, Stream::inputs);
  const Comparison expected = check_polish(start, oracle, 0, 32);
  INFO(row.detail);
  CHECK(row.detail == expected.detail);  // E (fast and reference) at the start and after the step
  CHECK(row.max_difference == expected.max_difference);
  // Test of the tester: the details tell starts apart (the truth itself gives another row).
  CHECK(check_polish(inst.layer, oracle, 0, 32).detail != expected.detail);
}

TEST_CASE("verify 6: the net's domain is the true hull, the mean of the Θ_i and the orthonormalised Θ_i − Θ_1", "[verify][stage6]") {
  const Instance inst = mha::test::generated_instance(5, 2, 3, 2.0, 5);  // m = 3: a two-dimensional hull
  VerifyOptions o;
  o.w_samples = 64;
  o.net_samples = 64;
  o.net_max_tuples = 50;
  const int m = inst.layer.m(), n = inst.d() * inst.d();
  auto flat = [](const MatD& t) { return Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(t.data(), t.size())); };
  Eigen::VectorXd point = Eigen::VectorXd::Zero(n);
  std::vector<MatD> thetas;
  for (const auto& h : inst.layer.heads) {
    thetas.push_back(h.theta);
    point += flat(h.theta / double(m));
  }
  Eigen::MatrixXd spread(n, m - 1);
  for (int i = 1; i < m; ++i) spread.col(i - 1) = flat(thetas[i]) - flat(thetas[0]);
  const Eigen::MatrixXd directions =
      (Eigen::HouseholderQR<Eigen::MatrixXd>(spread).householderQ() * Eigen::MatrixXd::Identity(n, m - 1)).transpose();
  NetOptions no;
  no.train_samples = no.validation_samples = o.net_samples;
  no.max_tuples = o.net_max_tuples;
  const SampleOracle oracle(inst, o.seed, Stream::inputs);
  const Comparison expected = check_stage6(oracle, thetas, 0, o.w_samples, point, directions, no);
  const Comparison row = verify_instance(inst, {"6"}, o)[0];
  INFO(row.detail);
  REQUIRE(row.parts.size() == expected.parts.size());
  for (size_t i = 0; i < row.parts.size(); ++i) {
    INFO(row.parts[i].name << ": " << row.parts[i].detail);
    CHECK(row.parts[i].detail == expected.parts[i].detail);
    CHECK(row.parts[i].compared == expected.parts[i].compared);
  }
  // Test of the tester: another domain (the hull's first direction alone) gives another net.
  const Comparison other = check_stage6(oracle, thetas, 0, o.w_samples, point, directions.topRows(1), no);
  CHECK(other.parts.back().detail != expected.parts.back().detail);
}
