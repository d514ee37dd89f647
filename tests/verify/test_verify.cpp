// `mhalearn verify`'s comparisons (verify/verify.hpp): the named bounds pinned to
// their formulas on hand-computed inputs, each comparison agreeing on correct
// fast paths, and each stage's row rejecting a deliberately wrong fast path
// after escalating its reference to the most precise arithmetic available.
#include "instances.hpp"
#include "numeric/tolerance.hpp"
#include "stages/stage2/certify_reference.hpp"
#include "stages/stage6/w_least_squares.hpp"
#include "verify/faults.hpp"
#include "stages/stage2/body_check.hpp"
#include "stages/stage3/selection_check.hpp"
#include "stages/stage6/net_check.hpp"
#include "verify/verify.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mha;
namespace tol = mha::tolerance;

namespace {
// A bound's double evaluation against its exact value (Python fractions, rounded
// once): the evaluation's own rounding is below γ_20 for these few operations.
void check_value(double computed, double exact) {
  CHECK(std::abs(computed - exact) <= tol::gamma(20) * exact);
}
}  // namespace

TEST_CASE("the named bounds equal their formulas on hand-computed inputs", "[verify][tolerance]") {
  check_value(tol::gamma(10), 1.1102230246251577e-15);
  CHECK(std::isinf(tol::gamma(1LL << 53)));
  // κ = 10, D: 100 × 4, ‖r‖/(‖D‖‖x‖) = 1/2: √4·γ_{6400}, then Wedin's factor (2 + 11/2).
  check_value(tol::qr_least_squares_relative_bound(10, 100, 4, 0.5), 1.0658141036560548e-10);
  CHECK(std::isinf(tol::qr_least_squares_relative_bound(1e13, 100, 4, 0.0)));  // κ ε ≥ 1: no bound
  check_value(tol::normal_equations_relative_bound(10, 100, 4, 128), 1.316553672920963e-34);
  // ‖B‖_F = 3, σ_min(B) = 1, ‖y‖ = 2, ‖v‖ = 1, k = 2, d = 4.
  check_value(tol::certification_solution_bound(3, 1, 2, 1, 2, 4), 1.3655743202889604e-14);
  CHECK(std::isinf(tol::certification_solution_bound(3, 1e-8, 2, 1, 2, 4)));
  check_value(tol::certification_residual_bound(3, 2, 1, 0.5, 1e-15, 2, 4), 4.942890293094036e-15);
}

TEST_CASE("the bounds of the body and of the selection equal their formulas on hand-computed inputs", "[verify][tolerance]") {
  // Expected values: the formulas in mpmath at 60 digits, rounded once.
  check_value(tol::logit_margin_bound(2, 0.5, 4), 3.608224830031768e-15);
  check_value(tol::slab_centre_difference_bound(0.25, 0.5, -0.75, 1e-3), 0.006020072273060548);
  CHECK(std::isinf(tol::slab_centre_difference_bound(0.25, 0.5, -0.75, 0.25)));  // Δv ≥ v_j: no bound
  check_value(tol::slab_width_difference_bound(0.25, 0.5, 0.01, 0.06, 1e-3, 1e-4), 0.0008343135946684904);
  CHECK(std::isinf(tol::slab_width_difference_bound(0.25, 0.5, 0.2, 0.06, 0.05, 0.0)));  // w − Δv ≤ δ + Δδ
  check_value(tol::slab_normal_difference_bound(10, 16), 3.3306690738754775e-15);
  check_value(tol::slab_membership_band(3, 0.5, 0.1, 16, 1e-12, 2e-12, 1e-13, 2), 3.2073940853440124e-12);
  check_value(tol::ball_membership_band(5, 20, 16), 1.2212453270876768e-14);
  check_value(tol::lp_value_difference_bound(1e-10, 2e-10, 3e-12, 5e-12), 3.050000000000002e-10);
  // κ = 10, ε = 10⁻⁶, ‖X‖_F = 3, ‖R‖_F = 0.5, ‖D‖₂ = 2.
  check_value(tol::least_squares_perturbation_bound(10, 1e-6, 3, 0.5, 2), 8.750087500875019e-05);
  CHECK(std::isinf(tol::least_squares_perturbation_bound(10, 0.1, 3, 0.5, 2)));  // κε ≥ 1
  check_value(tol::design_entry_relative_error(1e-14, 3), 1.0333066907387556e-14);
  // ρ = 2, δ = 10⁻⁶, ‖Y‖² = 8, M = 100 entries.
  check_value(tol::objective_from_residual_bound(2, 1e-6, 8, 100), 5.000001361577535e-07);
}

TEST_CASE("side_of: the band's edge is undecided, one ulp beyond it decides", "[verify]") {
  CHECK(side_of(1.0, 0.5, 0.5) == BandSide::undecided);                          // exactly at the band
  CHECK(side_of(1.0, 0.5, std::nextafter(0.5, 1.0)) == BandSide::undecided);    // just inside
  CHECK(side_of(1.0, 0.5, std::nextafter(0.5, 0.0)) == BandSide::above);        // just outside
  CHECK(side_of(0.0, 0.5, std::nextafter(0.5, 0.0)) == BandSide::below);
  CHECK(side_of(std::nan(""), 0.5, 0.1) == BandSide::undecided);                // no value: never decided
}

TEST_CASE("selection: a row within its band of τ is undecided, one ulp outside it must be decided as the reference does", "[verify][stage3]") {
  const Instance inst = mha::test::generated_instance(6, 3, 2, 3.0, 5);
  const SampleOracle oracle(inst, 1, Stream::inputs);
  const MatD x = oracle.draw(0, 1, 1).x.sample(0);
  MatD proxy = (inst.layer.heads[0].theta + inst.layer.heads[1].theta) / 2;
  std::vector<ReferenceMargin> ref;
  for (int a = 0; a < x.rows(); ++a) ref.push_back(reference_margin(x, proxy, a, 128));
  const double mu = ref[0].margin, band = ref[0].band;
  REQUIRE(band > 0);
  REQUIRE(band < 1e-6 * std::abs(mu));
  // The thresholds at the band's edges: τ_low is the smallest τ with μ − τ ≤ band
  // (undecided, the edge itself), one ulp below it μ − τ > band (decided: keep);
  // τ_high likewise above μ (one ulp above it: decided, drop).
  const double inf = std::numeric_limits<double>::infinity();
  double low = mu - band;
  while (mu - low > band) low = std::nextafter(low, inf);
  while (!(mu - std::nextafter(low, -inf) > band)) low = std::nextafter(low, -inf);
  double high = mu + band;
  while (high - mu > band) high = std::nextafter(high, -inf);
  while (!(std::nextafter(high, inf) - mu > band)) high = std::nextafter(high, inf);
  const double keep_tau = std::nextafter(low, -inf), drop_tau = std::nextafter(high, inf);
  for (double tau : {keep_tau, low, mu, high, drop_tau})
    for (int a = 1; a < x.rows(); ++a) REQUIRE(std::abs(ref[a].margin - tau) > 2 * ref[a].band);  // the other rows decide
  // A fast selection of sample 0 at τ: keeps the other rows as the reference does,
  // row 0 as `keep_row0` says, with the reference's margins and argmaxes.
  auto run = [&](double tau, bool keep_row0) {
    MarginResult r;
    r.report.threshold = tau;
    r.report.samples = 1;
    for (int a = 0; a < x.rows(); ++a)
      if (a == 0 ? keep_row0 : ref[a].margin >= tau) r.selected.push_back({0, a, ref[a].argmax, ref[a].margin});
    return compare_selection(oracle, {proxy}, r, 0, 1, 128);
  };
  // One ulp outside below: decided "keep"; a fast path that drops it disagrees.
  CHECK(run(keep_tau, true).agree);
  CHECK(run(keep_tau, true).undecided == 0);
  CHECK_FALSE(run(keep_tau, false).agree);
  // At the edges and inside: undecided whatever the fast path did.
  for (double tau : {low, mu, high})
    for (bool keep : {true, false}) {
      const ComparisonPart p = run(tau, keep);
      CHECK(p.agree);
      CHECK(p.undecided == 1);
    }
  // One ulp outside above: decided "drop"; keeping it disagrees.
  CHECK(run(drop_tau, false).agree);
  CHECK(run(drop_tau, false).undecided == 0);
  CHECK_FALSE(run(drop_tau, true).agree);
  // A kept event whose fast margin is off by more than the band disagrees on the value.
  MarginResult moved;
  moved.report.threshold = keep_tau;
  moved.report.samples = 1;
  for (int a = 0; a < x.rows(); ++a)
    if (a == 0 || ref[a].margin >= keep_tau)
      moved.selected.push_back({0, a, ref[a].argmax, ref[a].margin + (a == 0 ? 2 * band : 0.0)});
  const ComparisonPart p = compare_selection(oracle, {proxy}, moved, 0, 1, 128);
  CHECK_FALSE(p.agree);
  CHECK(p.slack > 1.0);
}

TEST_CASE("body membership: a point within its band of a slab's boundary is undecided, one ulp outside it is decided", "[verify][certify]") {
  // One slab |θ_0| ≤ 1 in R⁴, R = 20, its bounds zero (the band is the evaluation's alone).
  ConvexBody body(4, 20);
  body.add(Slab{{1, 0, 0, 0}, 0, 1});
  const ReferenceSlab exact_data;  // centre, width and normal bounds 0
  const std::vector<const ReferenceSlab*> bounds = {&exact_data};
  const double inf = std::numeric_limits<double>::infinity();
  auto band = [](double t) {
    return tol::slab_membership_band(std::abs(t), 0, 1, 4, 0, 0, 0, std::abs(t)) +
           tol::reference_relative_error(128, 8) * (std::abs(t) + 1);
  };
  auto side = [&](double t) { return reference_membership(body, bounds, Eigen::Vector4d(t, 0, 0, 0), 128); };
  // Outer edge: the largest t with t − 1 ≤ band(t) (t − 1 is exact here).
  double outer = 1 + band(1);
  while (outer - 1 > band(outer)) outer = std::nextafter(outer, 0.0);
  while (std::nextafter(outer, inf) - 1 <= band(std::nextafter(outer, inf))) outer = std::nextafter(outer, inf);
  CHECK(side(outer) == BandSide::undecided);                        // at the edge
  CHECK(side(std::nextafter(outer, 0.0)) == BandSide::undecided);   // just inside the band
  CHECK(side(std::nextafter(outer, inf)) == BandSide::above);       // one ulp outside: outside the body
  // Inner edge: the smallest t with 1 − t ≤ band(t).
  double inner = 1 - band(1);
  while (1 - inner > band(inner)) inner = std::nextafter(inner, inf);
  while (1 - std::nextafter(inner, 0.0) <= band(std::nextafter(inner, 0.0))) inner = std::nextafter(inner, 0.0);
  CHECK(side(inner) == BandSide::undecided);
  CHECK(side(std::nextafter(inner, 0.0)) == BandSide::below);       // one ulp outside the band: inside the body
  CHECK(side(0.5) == BandSide::below);
  CHECK(side(25) == BandSide::above);                               // outside the ball too
}

TEST_CASE("net winner: another winner is a tie up to the sum of the two bounds (the edge included), beyond it a disagreement", "[verify][stage6]") {
  const std::vector<double> objectives = {0.5, 0.25, 1.0};
  CHECK(check_winner(1, objectives, {0.125, 0.125, 0.0}) == WinnerCheck::same);
  // E*_0 − E*_1 = 0.25 = B_0 + B_1 exactly: a tie.
  CHECK(check_winner(0, objectives, {0.125, 0.125, 0.0}) == WinnerCheck::tie);
  // E*_0 one ulp lower (gap 0.25 − 2⁻⁵⁴, exact): inside; one ulp higher (gap 0.25 + 2⁻⁵³, exact): outside.
  CHECK(check_winner(0, {std::nextafter(0.5, 0.0), 0.25, 1.0}, {0.125, 0.125, 0.0}) == WinnerCheck::tie);
  CHECK(check_winner(0, {std::nextafter(0.5, 1.0), 0.25, 1.0}, {0.125, 0.125, 0.0}) == WinnerCheck::different);
  CHECK(check_winner(2, objectives, {0.125, 0.125, 0.5}) == WinnerCheck::different);
  CHECK(check_winner(7, objectives, {0.125, 0.125, 0.5}) == WinnerCheck::different);  // no such tuple
  CHECK(check_winner(3, objectives, {0.125, 0.125, 0.5}) == WinnerCheck::different);  // one past the last
  // The reference's winner is the last tuple: the argmin runs over all of them.
  CHECK(check_winner(0, {1.0, 0.75, 0.25}, {0.0, 0.0, 0.0}) == WinnerCheck::different);
  CHECK(check_winner(0, {0.5, 0.75, 0.25}, {0.0, 0.0, 0.0}) == WinnerCheck::different);  // the least is the last alone
  CHECK(reference_winner(0, {0.5, 0.75, 0.25}) == 2);
  CHECK(reference_winner(1, {0.5, 0.5, 0.75}) == 1);  // a tie for the least: the fast winner
  CHECK(reference_winner(5, {0.5, 0.25}) == 1);       // no such tuple: the first least
  CHECK(reference_winner(2, {0.5, 0.25}) == 1);       // one past the last: the same
  CHECK(reference_winner(1, {0.25, 0.5}) == 0);       // the fast winner is not among the least
  CHECK(reference_winner(0, {0.5, 0.5}) == 0);
  CHECK(reference_winner(1, {0.5, 0.5}) == 1);
  // Equal objectives: the fast winner is a winner (the argmin keeps the first of equals, here the fast one).
  CHECK(check_winner(0, {0.5, 0.5}, {0.0, 0.0}) == WinnerCheck::same);
  // A NaN anywhere the decision reads it — the fast winner's objective, its bound, the best's bound — is a tie.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(check_winner(0, {nan, 0.5}, {0.0, 0.0}) == WinnerCheck::tie);
  CHECK(reference_winner(0, {nan, 0.75, 0.5}) == 2);  // NaN is no value
  CHECK(check_winner(1, {0.5, 0.25}, {0.0, nan}) == WinnerCheck::tie);
  CHECK(check_winner(1, {0.25, 0.5}, {nan, 0.0}) == WinnerCheck::tie);
  CHECK(check_winner(0, {0.25, 0.5}, {0.0, nan}) == WinnerCheck::same);  // a NaN the decision does not read
}

TEST_CASE("least squares: the fast QR agrees with MPFR and exact rationals, a wrong answer does not", "[verify][stage6]") {
  const Instance inst = mha::test::generated_instance(6, 2, 2, 2.0, 5);
  VerifyOptions o;
  o.w_samples = 64;
  const auto rows = verify_instance(inst, {"6"}, o);
  REQUIRE(rows.size() == 1);
  CHECK_FALSE(disagrees(rows[0]));
  CHECK(rows[0].compared == 6);
  CHECK(rows[0].precision == 128u);  // agreed at the first rung
  CHECK(rows[0].slack < 1.0);

  // The exact solution of the same double data agrees too.
  MatD design = MatD::Random(40, 5), labels = MatD::Random(40, 3);
  const MatD fast = *solve_w_stack(design, labels);
  const Comparison exact = compare_least_squares(design, labels, fast, kExactRationals);
  CHECK(exact.agree);
  // An answer off by 4× its column's bound is rejected at every precision.
  MatD wrong = fast;
  wrong.col(1) *= 1 + 4 * exact.bound;
  for (unsigned bits : {128u, 256u, kExactRationals}) CHECK_FALSE(compare_least_squares(design, labels, wrong, bits).agree);
}

TEST_CASE("certification: verdicts and v̂ agree with MPFR, and a wrong v̂ or verdict is caught", "[verify][certify]") {
  const Instance inst = mha::test::generated_instance(8, 2, 2, 3.0, 7);
  VerifyOptions o;
  o.certify_samples = 100;
  const auto rows = verify_instance(inst, {"2"}, o);
  REQUIRE(rows.size() == 1);
  CHECK_FALSE(disagrees(rows[0]));
  CHECK(rows[0].compared == 200);
  CHECK_THAT(rows[0].detail, Catch::Contains("certified"));  // the certified branch is reached

  // A verdict flipped on the same inputs is a disagreement, not undecided.
  FastPaths flip = FastPaths{};
  flip.certify = [](const MatD& x, const MatD& y, const MatD& b, int row, const CertifyOptions& co) {
    RowCertificate c = certify_row_fast(x, y, b, row, co);
    if (c.verdict == RowVerdict::certified) c.verdict = RowVerdict::too_uncertain;
    return c;
  };
  const auto flipped = verify_instance(inst, {"2"}, o, flip);
  CHECK(disagrees(flipped[0]));
  CHECK_THAT(flipped[0].detail, !Catch::Contains("verdict disagreements 0"));
}

TEST_CASE("the shared faults cover every verify stage, once each, in order", "[verify]") {
  REQUIRE(faults::stage_faults().size() == verify_stage_names().size());
  for (size_t i = 0; i < verify_stage_names().size(); ++i) {
    CHECK(faults::stage_faults()[i].stage == verify_stage_names()[i]);
    CHECK(faults::find_fault(verify_stage_names()[i]) == &faults::stage_faults()[i]);
  }
  CHECK(faults::find_fault("7") == nullptr);
  CHECK_THROWS_AS(faults::with_fault("all"), std::invalid_argument);
}

TEST_CASE("verify: every stage agrees on the fast paths and rejects a wrong one after escalating", "[verify]") {
  const Instance inst = mha::test::generated_instance(10, 2, 2, 3.0, 12);  // every stage compares on it (not so on every instance: stage 3's events can have rank < d, stage 5's body may not be thin)
  VerifyOptions o;
  o.forward_samples = 32;
  o.stage1_samples = 300;
  o.certify_samples = 60;
  o.w_samples = 64;
  o.polish_samples = 32;
  const auto good = verify_instance(inst, verify_stage_names(), o);
  REQUIRE(good.size() == verify_stage_names().size());
  for (const auto& c : good) {
    INFO("stage " << c.stage << ": " << c.detail);
    CHECK(c.compared > 0);
    CHECK_FALSE(disagrees(c));
    for (const auto& p : c.parts) {
      INFO("part " << p.name << ": " << p.detail);
      CHECK(p.agree);
      CHECK(p.compared > 0);
    }
  }
  // The parts: the body of 2 and 4 (slabs, membership, widths), stage 3's selection.
  auto row = [&](const std::vector<Comparison>& rows, const std::string& stage) {
    return *std::find_if(rows.begin(), rows.end(), [&](const Comparison& c) { return c.stage == stage; });
  };
  for (const std::string stage : {"2", "4"}) {
    const Comparison& c = row(good, stage);
    REQUIRE(c.parts.size() == 3);
    CHECK(c.parts[1].compared >= 3);   // the true Θ_i and the fast centre at least
    CHECK(c.parts[1].undecided >= 1);  // the points a quarter band from the boundary
  }
  REQUIRE(row(good, "3").parts.size() == 2);  // the selection, the proxy (minimum-norm point of K)
  // Stage 5's diagnostic names what body_widths measured on this instance's body: one wide
  // direction, thin (measured once; the detail says "not thin" when body_widths does).
  CHECK_THAT(row(good, "5").detail,
             Catch::Contains("diagnostic: the body is thin across the hull by LP widths (1 wide directions, m − 1 = 1)"));
  // Dimension, hull directions, hull point; then the paper variant's span by membership
  // queries: its optima, certificates, membership and span.
  REQUIRE(row(good, "5").parts.size() == 7);
  CHECK(row(good, "5").parts[3].name == "membership: optima");
  REQUIRE(row(good, "6").parts.size() == 1);
  CHECK(row(good, "6").parts[0].compared >= 20);
  CHECK_THAT(row(good, "6").parts[0].detail, Catch::Contains("the fast winner is the reference winner"));
  CHECK(row(good, "3").parts[0].compared >= 2 * 100);
  CHECK(verify_outcome(good) == VerifyOutcome::agree);
  for (const faults::Fault& fault : faults::stage_faults()) {
    const auto rows = verify_instance(inst, {fault.stage}, o, faults::with_fault(fault.stage));
    INFO("stage " << fault.stage << ": " << rows[0].detail);
    CHECK(rows[0].compared > 0);
    CHECK(disagrees(rows[0]));
    CHECK(rows[0].precision == fault.escalated_to);
    double slack = rows[0].slack;  // of the row or of the part that disagrees
    for (const auto& p : rows[0].parts) slack = std::max(slack, p.slack);
    CHECK(slack > 1.0);
    CHECK(verify_outcome(rows) == VerifyOutcome::disagree);  // `mhalearn verify` exits 4
  }
  // A row that cannot be compared makes the run incomplete (exit 1), never "agree".
  Comparison not_compared;
  CHECK(verify_outcome({good[0], not_compared}) == VerifyOutcome::incomplete);
}

TEST_CASE("escalate stops at the first agreeing rung and reports it; precision names", "[verify][hardening]") {
  std::vector<unsigned> calls;
  auto agree_from = [&](unsigned first_agreeing) {
    return [&calls, first_agreeing](unsigned bits) {
      calls.push_back(bits);
      Comparison c;
      c.compared = 1;
      c.agree = bits == first_agreeing;
      return c;
    };
  };
  CHECK(escalate(agree_from(128)).precision == 128u);
  CHECK((calls == std::vector<unsigned>{128}));
  calls.clear();
  const Comparison at256 = escalate(agree_from(256));
  CHECK((!disagrees(at256) && at256.precision == 256u));
  CHECK((calls == std::vector<unsigned>{128, 256}));
  calls.clear();
  const Comparison never = escalate(agree_from(1), kLeastSquaresLadder);  // stage 3's and stage 6's ladder
  CHECK((disagrees(never) && never.precision == kExactRationals));
  CHECK((calls == std::vector<unsigned>{128, 256, kExactRationals}));
  CHECK(precision_name(kExactRationals) == "exact rationals");
  CHECK(precision_name(kCertifiedDouble) == "double, certified");
  CHECK(precision_name(256) == "MPFR 256");
  Comparison c;
  CHECK(std::string(verdict(c)) == "not compared");
  c.compared = 1;
  CHECK(std::string(verdict(c)) == "agree");
  c.agree = false;
  CHECK(std::string(verdict(c)) == "DISAGREE");
  // A row that compared nothing itself disagrees through a part that did.
  Comparison row;
  ComparisonPart part;
  part.record(2.0, 1.0);
  add_part(row, part);
  CHECK(disagrees(row));
  CHECK(std::string(verdict(row)) == "DISAGREE");
  // Undecided items never disagree, and never agree: a row that decided nothing says so.
  Comparison undecided;
  undecided.record_undecided();
  CHECK_FALSE(disagrees(undecided));
  CHECK(std::string(verdict(undecided)) == "undecided");
  CHECK(verify_outcome({undecided}) == VerifyOutcome::incomplete);
}

TEST_CASE("verify 2 on a small instance: the reference body's widths exact (CGAL), and a widened slab rejected", "[verify][certify]") {
  const Instance inst = mha::test::generated_instance(6, 2, 2, 3.0, 3);  // n = d² = 36: the exact programs' range
  VerifyOptions o;
  o.certify_samples = 100;
  const auto good = verify_instance(inst, {"2"}, o);
  INFO(good[0].detail);
  REQUIRE(good[0].parts.size() == 3);
  const ComparisonPart& widths = good[0].parts[2];
  INFO(widths.detail);
  CHECK_FALSE(disagrees(good[0]));
  CHECK(widths.compared > 0);
  CHECK_THAT(widths.detail, Catch::Contains("exact (CGAL)"));
  FastPaths wide = FastPaths{};
  const FastPaths ok = FastPaths{};
  wide.slabs = [ok](const MatD& x, int row, const RowCertificate& cert) {
    auto slabs = ok.slabs(x, row, cert);
    for (auto& s : slabs) s.eta *= 1 + 1e-6;
    return slabs;
  };
  const auto bad = verify_instance(inst, {"2"}, o, wide);
  REQUIRE(bad[0].parts.size() == 3);
  CHECK_FALSE(bad[0].parts[2].agree);
}

TEST_CASE("verify 2 and 3: a widened or shifted slab and a lowered threshold are rejected by their parts", "[verify]") {
  const Instance inst = mha::test::generated_instance(10, 2, 2, 3.0, 12);
  VerifyOptions o;
  o.certify_samples = 60;
  const FastPaths ok = FastPaths{};
  auto part = [](const Comparison& c, const std::string& name) {
    return *std::find_if(c.parts.begin(), c.parts.end(), [&](const ComparisonPart& p) { return p.name == name; });
  };
  SECTION("every slab widened by a relative 10⁻⁶") {
    FastPaths f = ok;
    f.slabs = [ok](const MatD& x, int row, const RowCertificate& cert) {
      auto slabs = ok.slabs(x, row, cert);
      for (auto& s : slabs) s.eta *= 1 + 1e-6;
      return slabs;
    };
    const auto rows = verify_instance(inst, {"2"}, o, f);
    CHECK(disagrees(rows[0]));
    CHECK(verify_outcome(rows) == VerifyOutcome::disagree);
    CHECK(rows[0].precision == 256u);  // confirmed after escalation
    CHECK_FALSE(part(rows[0], "body slabs").agree);
    CHECK(part(rows[0], "body slabs").slack > 1.0);
    CHECK_FALSE(part(rows[0], "body widths").agree);  // along the slab normals the widths grow by 2·10⁻⁶ η/‖a‖
  }
  SECTION("every slab's centre moved by 10⁻⁹") {
    FastPaths f = ok;
    f.slabs = [ok](const MatD& x, int row, const RowCertificate& cert) {
      auto slabs = ok.slabs(x, row, cert);
      for (auto& s : slabs) s.b += 1e-9;
      return slabs;
    };
    const auto rows = verify_instance(inst, {"2"}, o, f);
    CHECK(disagrees(rows[0]));
    CHECK_FALSE(part(rows[0], "body slabs").agree);
  }
  SECTION("stage 6's net with the winner's validation error raised above the runner-up's") {
    FastPaths f = ok;
    f.net = [ok](const SampleSource& s, const Eigen::VectorXd& x0, const Eigen::MatrixXd& dirs, int m, const NetOptions& no) {
      NetCandidates c = ok.net(s, x0, dirs, m, no);
      std::vector<double> sorted = c.errors;
      std::sort(sorted.begin(), sorted.end());
      c.errors[c.winner] = 1.5 * sorted[1];  // ranked behind the runner-up, which now wins
      c.winner = static_cast<size_t>(std::min_element(c.errors.begin(), c.errors.end()) - c.errors.begin());
      return c;
    };
    const auto rows = verify_instance(inst, {"6"}, o, f);
    CHECK(disagrees(rows[0]));
    CHECK(verify_outcome(rows) == VerifyOutcome::disagree);
    const ComparisonPart net = part(rows[0], "net");
    CHECK_FALSE(net.agree);
    CHECK(net.slack > 1.0);
    CHECK(net.precision == 256u);
    CHECK_THAT(net.detail, Catch::Contains("is not the reference winner"));
  }
  SECTION("stage 3 selecting at a lowered threshold while reporting the original one") {
    FastPaths f = ok;
    f.margin = [ok](const SampleSource& s, const std::vector<MatD>& p, const MarginOptions& mo, const Layer* truth) {
      MarginResult claimed = ok.margin(s, p, mo, truth);
      MarginOptions lowered = mo;
      lowered.accept_fraction *= 2;  // the pilot's quantile moves down
      MarginResult r = ok.margin(s, p, lowered, truth);
      r.report.threshold = claimed.report.threshold;
      return r;
    };
    const auto rows = verify_instance(inst, {"3"}, o, f);
    CHECK(disagrees(rows[0]));
    CHECK(verify_outcome(rows) == VerifyOutcome::disagree);
    CHECK_FALSE(part(rows[0], "selection").agree);
    CHECK_THAT(part(rows[0], "selection").detail, !Catch::Contains(" 0 disagree"));
  }
}
