// Every decision branch of the checks reached by a fault from a real computation,
// so that moving a threshold or swapping a branch fails a test (issue "The checker
// checked", item 3): polishing's accepted step that raises the reference objective
// (disagree) or leaves it unchanged (undecided); stage 3's empty body with a fast
// point 1.5, 5 and 40 tolerances outside a slab (undecided, disagree, disagree: the
// contract's threshold is 2); the learner's gate of the large references at
// d² = --reference-max-unknowns, not d.
#include "centre_bodies.hpp"
#include "instances.hpp"
#include "learn/learner.hpp"
#include "learn/reference_checks.hpp"
#include "numeric/tolerance.hpp"
#include "stages/polish/reference.hpp"
#include "stages/stage3/check.hpp"
#include "stages/stage3/margin.hpp"
#include "verify/verify.hpp"

#include <catch2/catch.hpp>

#include <Eigen/LU>
#include <Eigen/QR>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

using namespace mha;

namespace {

const ComparisonPart& part_named(const Comparison& row, const std::string& name) {
  const auto it = std::find_if(row.parts.begin(), row.parts.end(), [&](const ComparisonPart& p) { return p.name == name; });
  REQUIRE(it != row.parts.end());
  return *it;
}

// Polishing's iteration with its accepted step replaced by `step` of the start,
// the step's objective evaluated as the fast path would report it (the reference
// value rounded to double: the objective row agrees, only the decision is wrong).
PolishIterationFast with_step(double theta_scale) {
  return [theta_scale](const LabelledBatch& b, const Layer& l, const PolishOptions& o) {
    PolishIteration it = polish_iteration(b, l, o);
    it.accepted = true;
    it.next = it.start;
    for (auto& h : it.next.heads) h.theta *= theta_scale;
    it.next_objective = objective_reference(it.next, it.xs, it.ys, 128, design_route_bound).objective;
    return it;
  };
}

}  // namespace

TEST_CASE("polish: a step that raises the reference objective disagrees, a step that keeps it is undecided", "[verify][polish][branches]") {
  const Instance inst = mha::test::generated_instance(6, 2, 2, 3.0, 5);
  VerifyOptions o;
  o.polish_samples = 32;
  const Comparison good = verify_instance(inst, {"polish"}, o)[0];
  INFO(good.detail);
  const ComparisonPart& taken = part_named(good, "accepted step");
  REQUIRE(taken.compared == 1);
  CHECK(taken.agree);  // the real step lowers E beyond both bounds: decided, and the same
  CHECK(taken.undecided == 0);

  FastPaths rise;
  rise.polish_iteration = with_step(1 + 1e-2);  // Θ moved away from the truth: E rises
  const Comparison raised = verify_instance(inst, {"polish"}, o, rise)[0];
  INFO(raised.detail);
  CHECK(raised.agree);  // the objectives themselves agree: only the decision is wrong
  const ComparisonPart& step = part_named(raised, "accepted step");
  CHECK(step.compared == 1);
  CHECK(step.undecided == 0);
  CHECK_FALSE(step.agree);
  CHECK(disagrees(raised));
  CHECK(raised.precision == 256u);  // confirmed after escalation

  FastPaths same;
  same.polish_iteration = with_step(1.0);  // E(next) = E(start): within the band
  const Comparison kept = verify_instance(inst, {"polish"}, o, same)[0];
  const ComparisonPart& tie = part_named(kept, "accepted step");
  CHECK(tie.compared == 1);
  CHECK(tie.undecided == 1);
  CHECK(tie.agree);
  CHECK(std::string(verdict(tie)) == "undecided");
  CHECK_FALSE(disagrees(kept));
}

// The band is the two bounds' sum rounded upward by one addition's factor; at values
// whose sum is exact the factor shows.
TEST_CASE("polish: the accepted step's band is the bounds' sum times bound_evaluation_factor(1)", "[verify][polish]") {
  CHECK(accepted_step_band(0.25, 0.5) == 0.75 * tolerance::bound_evaluation_factor(1));
  CHECK(accepted_step_band(0.25, 0.5) > 0.75);
  CHECK(accepted_step_band(0.25, 0.5) < 0.75 * tolerance::bound_evaluation_factor(2));
  CHECK(accepted_step_band(0.0, 0.0) == 0.0);
}

namespace {

// K empty by a gap of `gap` between two slabs of θ_0: |θ_0| ≤ 1, and θ_0 ≥ 1 + gap from a
// slab whose large centre and half-width (10⁹) give it a large tolerance, so that a
// gap of a few tolerances is wide enough for the certified QP to prove K empty.
constexpr double kFar = 1e9;
ConvexBody gapped_body(double gap) {
  ConvexBody body(4, 20);
  body.add(Slab{{1, 0, 0, 0}, 0, 1});
  body.add(Slab{{1, 0, 0, 0}, kFar, kFar - 1 - gap});
  return body;
}

// A fast path that returns θ = (1, 0, 0, 0), in the ball, as its optimum: on the first
// slab's boundary, `gap` short of the second.
MinNormFast returns_corner() {
  return [](const ConvexBody&) {
    ActiveSetResult r;
    r.status = ActiveSetResult::optimal;
    r.x = Eigen::Vector4d(1, 0, 0, 0);
    r.inside_ball = true;
    return r;
  };
}

// The corner's largest violation in units of the active set's tolerance.
double violation_in_tolerances(const ConvexBody& body, double) {
  double worst = 0;
  for (const Slab& s : body.slabs()) worst = std::max(worst, (std::abs(1 - s.b) - s.eta) / active_set_tolerance(s, 1));
  return worst;
}

}  // namespace

TEST_CASE("stage 3's empty body: a fast point 1.5 tolerances outside is undecided, 5 and 40 disagree", "[verify][stage3][branches]") {
  // The violation is proportional to the gap (the tolerances hardly move with it): scale a probe gap.
  const double probe = 1e-2, per_gap = violation_in_tolerances(gapped_body(probe), probe) / probe;
  for (auto [multiple, expect] : {std::pair{1.5, "undecided"}, std::pair{5.0, "DISAGREE"}, std::pair{40.0, "DISAGREE"}}) {
    const double gap = multiple / per_gap;
    const ConvexBody body = gapped_body(gap);
    INFO("violation " << violation_in_tolerances(body, gap) << " tolerances");
    REQUIRE(std::abs(violation_in_tolerances(body, gap) - multiple) < 0.01 * multiple);
    Comparison c;  // the item check_min_norm_point records once the certified QP proves K empty
    compare_empty(body, returns_corner()(body), c);
    INFO(c.detail);
    CHECK(std::string(verdict(c)) == expect);
    CHECK(c.compared == 1);
  }
  // Both paths find K empty (the certified QP proves it: the second slab lies outside the box).
  const ConvexBody body = gapped_body(1e3);
  const Comparison both = check_min_norm_point(body, [](const ConvexBody&) {
    ActiveSetResult r;
    r.status = ActiveSetResult::infeasible;
    return r;
  });
  INFO(both.detail);
  CHECK(std::string(verdict(both)) == "agree");
  CHECK_THAT(both.detail, Catch::Contains("both paths find K empty"));
  // A non-empty K the fast path calls empty: a disagreement; the real fast path agrees.
  const ConvexBody open = gapped_body(-2.0);
  const Comparison missed = check_min_norm_point(open, [](const ConvexBody&) {
    ActiveSetResult r;
    r.status = ActiveSetResult::infeasible;
    return r;
  });
  INFO(missed.detail);
  CHECK(disagrees(missed));
  CHECK(std::string(verdict(check_min_norm_point(open))) == "agree");
}

// The certified QP's own failures: no reference, so nothing is compared, whatever the fast
// point (here the real one, which would agree) — and the detail says which failure it was.
TEST_CASE("stage 3's proxy: a certified QP that fails or certifies nothing compares nothing", "[verify][stage3][branches]") {
  const ConvexBody open = gapped_body(-2.0);
  const ActiveSetResult fast = min_norm_point_active_set(open);
  ConvexBody::QpResult ref = open.min_norm_point();
  REQUIRE(ref.status == ConvexBody::QpResult::optimal);
  REQUIRE(ref.certified);
  REQUIRE(std::string(verdict(compare_min_norm_point(open, fast, ref))) == "agree");
  ref.message = "(the test's)";
  for (auto [status, certified, says] :
       {std::tuple{ConvexBody::QpResult::failed, false, "failed: "}, std::tuple{ConvexBody::QpResult::failed, true, "failed: "},
        std::tuple{ConvexBody::QpResult::optimal, false, "gave no certificate: "},
        std::tuple{ConvexBody::QpResult::infeasible, false, "gave no certificate: "}}) {
    ref.status = status;
    ref.certified = certified;
    const Comparison c = compare_min_norm_point(open, fast, ref);
    INFO(c.detail);
    CHECK(c.compared == 0);
    CHECK(c.undecided == 0);
    CHECK(c.agree);
    CHECK(c.detail == std::string("not compared: the certified QP ") + says + "(the test's)");
  }
}

TEST_CASE("stage 3's empty body: a fast point exactly 2 tolerances outside is still within the contract", "[verify][stage3][branches]") {
  // Exact arithmetic: the active set's tolerance factor is 2^-40 (min_norm_active_set.cpp), so
  // with θ_0 = t = 1 + 2^-39 and the slab |θ_0| ≤ e = 1 − 2^-39 the violation t − e = 2^-38
  // and the tolerance 2^-40·(t + 0 + e) = 2^-39 are both exact: their ratio is 2, not 2 ± an ulp.
  // A second slab around t (half-width 2^-40, disjoint from the first) makes K empty.
  const double t = 1 + 0x1p-39, e = 1 - 0x1p-39;
  ConvexBody body(4, 20);
  body.add(Slab{{1, 0, 0, 0}, 0, e});
  body.add(Slab{{1, 0, 0, 0}, t, 0x1p-40});
  ActiveSetResult fast;
  fast.status = ActiveSetResult::optimal;
  fast.x = Eigen::Vector4d(t, 0, 0, 0);
  fast.inside_ball = true;
  REQUIRE(fast.x.norm() == t);
  REQUIRE((t - e) / active_set_tolerance(body.slabs()[0], t) == 2.0);
  Comparison c;
  compare_empty(body, fast, c);
  INFO(c.detail);
  CHECK(std::string(verdict(c)) == "undecided");  // the threshold is "beyond 2", so 2 itself is undecided
  // One ulp further out (e one ulp smaller: the violation grows, the tolerance hardly moves): disagree.
  ConvexBody beyond(4, 20);
  beyond.add(Slab{{1, 0, 0, 0}, 0, std::nextafter(e, 0.0)});
  beyond.add(Slab{{1, 0, 0, 0}, t, 0x1p-40});
  REQUIRE((t - std::nextafter(e, 0.0)) / active_set_tolerance(beyond.slabs()[0], t) > 2.0);
  Comparison d;
  compare_empty(beyond, fast, d);
  CHECK(disagrees(d));
}

TEST_CASE("stage 3's empty body: a fast path that ends outside the ball finds K empty as well, whatever its status", "[verify][stage3][branches]") {
  // Either sign of emptiness from the fast path (no optimum, or an optimum outside the ball)
  // agrees with the certified reference; the point it returns is then not examined.
  const ConvexBody body = gapped_body(1e3);
  for (auto [status, inside] : {std::pair{ActiveSetResult::optimal, false}, std::pair{ActiveSetResult::infeasible, true}}) {
    ActiveSetResult fast;
    fast.status = status;
    fast.inside_ball = inside;
    fast.x = Eigen::Vector4d(3, 0, 0, 0);  // far outside both slabs: examined, it would disagree
    Comparison c;
    compare_empty(body, fast, c);
    INFO(c.detail);
    CHECK(std::string(verdict(c)) == "agree");
    CHECK_THAT(c.detail, Catch::Contains("both paths find K empty"));
  }
  // An optimum in the ball that is not finite: decided, and wrong (never "within its tolerance").
  ActiveSetResult nan_point;
  nan_point.status = ActiveSetResult::optimal;
  nan_point.inside_ball = true;
  nan_point.x = Eigen::Vector4d(std::numeric_limits<double>::quiet_NaN(), 0, 0, 0);
  Comparison c;
  compare_empty(body, nan_point, c);
  CHECK(disagrees(c));
  CHECK(c.compared == 1);
  CHECK_THAT(c.detail, Catch::Contains("not finite"));
}

TEST_CASE("stage 3's fit: compared from exactly d events, not compared below d or without a fit", "[verify][stage3][branches]") {
  // A real margin stage at d = 6; its fit cut to d events of full rank and solved again in
  // double (a square system: the least-squares row compares it with the exact solution).
  const Instance inst = mha::test::generated_instance(6, 3, 2, 3.0, 5);
  const SampleOracle oracle(inst, 1, Stream::inputs);
  const std::vector<MatD> proxies = {(inst.layer.heads[0].theta + inst.layer.heads[1].theta) / 2};
  MarginOptions mo;
  mo.pilot_samples = 20000;
  mo.max_samples = 400000;
  mo.accept_fraction = 1e-2;
  const MarginResult full = refine_wsum(oracle, proxies, mo);
  const int d = inst.d();
  REQUIRE(full.fit_tokens.rows() > d);
  REQUIRE(Eigen::FullPivLU<MatD>(full.fit_tokens).rank() == d);
  auto cut = [&](int rows) {  // the first `rows` fit events that raise the rank (all d of them when rows = d)
    MarginResult r = full;
    std::vector<Eigen::Index> kept;
    for (Eigen::Index i = 0; i < full.fit_tokens.rows() && static_cast<int>(kept.size()) < rows; ++i) {
      MatD trial(static_cast<Eigen::Index>(kept.size()) + 1, d);
      for (size_t j = 0; j < kept.size(); ++j) trial.row(static_cast<Eigen::Index>(j)) = full.fit_tokens.row(kept[j]);
      trial.row(trial.rows() - 1) = full.fit_tokens.row(i);
      if (Eigen::FullPivLU<MatD>(trial).rank() == trial.rows()) kept.push_back(i);
    }
    REQUIRE(static_cast<int>(kept.size()) == rows);
    r.fit_tokens = MatD(rows, d);
    r.fit_labels = MatD(rows, full.fit_labels.cols());
    for (int j = 0; j < rows; ++j) {
      r.fit_tokens.row(j) = full.fit_tokens.row(kept[j]);
      r.fit_labels.row(j) = full.fit_labels.row(kept[j]);
    }
    r.w_sum = r.fit_tokens.colPivHouseholderQr().solve(r.fit_labels);
    return r;
  };
  const Comparison at_d = check_margin(oracle, proxies, cut(d), mo.first_sample, 200);
  INFO(at_d.detail);
  CHECK(at_d.compared > 0);
  CHECK_FALSE(disagrees(at_d));
  // One event short, with a w_sum still present: not compared (the guard's first half alone).
  MarginResult short_fit = cut(d - 1);
  short_fit.w_sum = full.w_sum;
  const Comparison below = check_margin(oracle, proxies, short_fit, mo.first_sample, 200);
  CHECK(below.compared == 0);
  CHECK(std::string(verdict(below)) == "not compared");
  CHECK_THAT(below.detail, Catch::Contains("made no fit"));
  // Enough events but no fit (its second half alone): not compared either.
  MarginResult no_fit = full;
  no_fit.w_sum = MatD();
  const Comparison none = check_margin(oracle, proxies, no_fit, mo.first_sample, 200);
  CHECK(none.compared == 0);
  CHECK_THAT(none.detail, Catch::Contains("made no fit"));
}

TEST_CASE("the learner's large references run up to d² = --reference-max-unknowns, not d", "[learn][reference][branches]") {
  CHECK(large_references_fit(4, 16));
  CHECK_FALSE(large_references_fit(4, 15));
  CHECK_FALSE(large_references_fit(4, 4));  // d ≤ max < d²: the gate compares d², not d
  CHECK(large_references_fit(20, 400));     // the default 400 admits d = 20
  CHECK_FALSE(large_references_fit(21, 400));
  // The reference step's own gate (which slabs the learner keeps) at the same place.
  const Instance inst = mha::test::generated_instance(4, 2, 2, 3.0, 5);
  const SampleOracle oracle(inst, 1, Stream::inputs);
  LearnOptions o;
  o.reference = true;
  LearnReport rep;
  for (auto [max_unknowns, checked] : {std::pair{16, true}, std::pair{15, false}, std::pair{4, false}}) {
    o.reference_max_unknowns = max_unknowns;
    const Pipeline p{oracle, o, &inst, &inst.layer, rep, inst.k, inst.d(), inst.layer.m(), 0};
    CHECK(selected_body_checked(p) == checked);
  }
  o.reference = false;
  o.reference_max_unknowns = 16;
  CHECK_FALSE(selected_body_checked(Pipeline{oracle, o, &inst, &inst.layer, rep, inst.k, inst.d(), inst.layer.m(), 0}));
}

TEST_CASE("the learner's reference step: every row compared at d² = --reference-max-unknowns, the large ones not run one below", "[learn][reference]") {
  const Instance inst = mha::test::generated_instance(6, 2, 2, 3.0, 5);
  const SampleOracle oracle(inst, 1);
  LearnOptions o;
  o.m = 2;
  o.threads = 2;
  o.reference = true;
  o.stage1_samples = 50000;
  o.crude_sculpt_samples = 100000;
  o.sculpt.sculpt.max_samples = 200000;
  o.final_sculpt_samples = 200000;
  o.max_rounds = 1;
  o.net.max_tuples = 200;
  o.validation_samples = 200;
  o.test_samples = 500;
  auto rows_of = [&](int max_unknowns) {
    o.reference_max_unknowns = max_unknowns;
    const LearnResult r = learn_layer(oracle, o, &inst);
    std::map<std::string, std::vector<Comparison>> by_stage;
    for (const auto& row : r.report.reference) by_stage[row.comparison.stage].push_back(row.comparison);
    return std::pair{r, by_stage};
  };
  const auto [run, rows] = rows_of(36);  // d² = 36: every reference runs
  INFO(format_table(run.report));
  CHECK(run.report.disagreements().empty());
  for (const std::string stage : {"1", "2", "3", "5", "6", "forward", "polish"}) {
    INFO("stage " << stage);
    REQUIRE(rows.count(stage) == 1);
    for (const Comparison& c : rows.at(stage)) CHECK_FALSE(disagrees(c));
  }
  const auto proxy = [](const std::vector<Comparison>& stage3) {
    return std::count_if(stage3.begin(), stage3.end(),
                         [](const Comparison& c) { return c.quantity.find("minimum-norm point") != std::string::npos; });
  };
  CHECK(proxy(rows.at("3")) == 1);
  for (const Comparison& c : rows.at("5")) CHECK(c.compared > 0);
  // The selected round's diagnostics, each against its stated threshold (a warning, never a verdict).
  const std::vector<Diagnostic>& all = run.report.diagnostics;  // clang 14 cannot capture a structured binding
  const auto diagnostic = [&all](const std::string& name) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const Diagnostic& g) { return g.name == name; });
    REQUIRE(it != all.end());
    return *it;
  };
  const Diagnostic far = diagnostic("proxy against the minimum-norm point of K");
  INFO(far.detail);
  CHECK(far.stage == "3");
  const double distance = std::stod(far.detail.substr(far.detail.find(" = ") + 3));
  CHECK(far.warning == (distance > 0.1));
  CHECK(far.detail.find("for the least-squares centre x0 the learner uses (warning above 0.1)") != std::string::npos);
  const Diagnostic thin = diagnostic("body thin across the hull");
  INFO(thin.detail);
  CHECK(thin.stage == "5");
  CHECK(thin.warning == (thin.detail.find(": not thin") != std::string::npos));
  CHECK(thin.detail.find("(m − 1 = 1)") != std::string::npos);
  // The hull dimension by the gap: a diagnostic (a warning) exactly when the run's stage 5 read a
  // dimension other than m − 1 = 1 (this short run's body reads 0 free directions).
  const auto stage5_run = std::find_if(run.report.stages.begin(), run.report.stages.end(), [](const StageRecord& r) {
    return r.stage == "5" && r.summary.rfind("hull dimension ", 0) == 0;
  });
  REQUIRE(stage5_run != run.report.stages.end());
  const int read_dimension = std::stoi(stage5_run->summary.substr(std::string("hull dimension ").size()));
  const auto gap_dimension = std::find_if(all.begin(), all.end(), [](const Diagnostic& g) { return g.name == "hull dimension by the gap"; });
  CHECK((gap_dimension != all.end()) == (read_dimension != 1));
  if (gap_dimension != all.end()) {
    INFO(gap_dimension->detail);
    CHECK(gap_dimension->warning);
    CHECK(std::stoi(gap_dimension->detail) == read_dimension);
    CHECK(gap_dimension->detail.find("m − 1 = 1") != std::string::npos);
  }
  // Rows of no round (stage 1's before the rounds, polishing's start) carry round −1.
  for (const auto& row : run.report.reference)
    if (row.comparison.stage == "1" || row.comparison.stage == "polish") CHECK(row.round == -1);
  const auto [below, gated] = rows_of(35);  // one below d²: the QP and the MPFR SVD say "not run"
  for (const std::string stage : {"3", "5"}) {
    const auto& stage_rows = gated.at(stage);
    CHECK(std::any_of(stage_rows.begin(), stage_rows.end(), [](const Comparison& c) {
      return c.compared == 0 && c.detail.find("not run: d² = 36 unknowns > 35") != std::string::npos;
    }));
  }
  // Gated means not run at all: one proxy row (the "not run" one), and no stage-5 row compares anything.
  CHECK(proxy(gated.at("3")) == 1);
  for (const Comparison& c : gated.at("5")) CHECK(c.compared == 0);
  // Under the stage-6 oracle the selected layer is the truth: its round's body is unused, so the
  // proxy and the span have no row (the other rows remain).
  o.reference_max_unknowns = 36;
  o.oracle.stage6 = true;
  const LearnResult oracle_run = learn_layer(oracle, o, &inst);
  CHECK(std::none_of(oracle_run.report.reference.begin(), oracle_run.report.reference.end(), [](const ReferenceCheck& r) {
    return r.comparison.stage == "5" || r.comparison.quantity.find("minimum-norm point") != std::string::npos;
  }));
  CHECK(std::any_of(oracle_run.report.reference.begin(), oracle_run.report.reference.end(),
                    [](const ReferenceCheck& r) { return r.comparison.stage == "6"; }));
  o.oracle.stage6 = false;
  // The reference step off: no rows at all.
  o.reference = false;
  CHECK(learn_layer(oracle, o, &inst).report.reference.empty());
}

// The selected round's diagnostics as rules on their inputs, at their edges.
TEST_CASE("the learner's diagnostics: the proxy's distance from P_min and the gap's hull dimension, at their thresholds",
          "[learn][reference][branches]") {
  const auto v = [](double a, double b) { return Eigen::Vector2d(a, b); };
  // ‖x0 − P_min‖/‖P_min‖ = 1/10 exactly (1/10 is the correctly rounded 0.1): at the threshold, no warning.
  const Diagnostic at = proxy_distance_diagnostic(2, v(11, 0), v(10, 0), false);
  CHECK(at.stage == "3");
  CHECK(at.round == 2);
  CHECK_FALSE(at.warning);
  CHECK(at.detail == "‖x0 − P_min‖/‖P_min‖ = 0.1 for the least-squares centre x0 the learner uses (warning above 0.1)");
  // Relative to ‖P_min‖ = 3 (0.6/3 = 0.2, not 0.6): a warning — but not for the paper variant, whose proxy is P_min.
  const Diagnostic far = proxy_distance_diagnostic(0, v(0, 3.6), v(0, 3), false);
  CHECK(far.warning);
  CHECK(far.detail.rfind("‖x0 − P_min‖/‖P_min‖ = 0.2 ", 0) == 0);
  const Diagnostic paper = proxy_distance_diagnostic(0, v(0, 3.6), v(0, 3), true);
  CHECK_FALSE(paper.warning);
  CHECK(paper.detail.find("(the paper variant's stage 5 starts from P_min)") != std::string::npos);
  // P_min = 0: the same point is at distance 0, any other infinitely far.
  CHECK_FALSE(proxy_distance_diagnostic(0, v(0, 0), v(0, 0), false).warning);
  CHECK(proxy_distance_diagnostic(0, v(0, 0), v(0, 0), false).detail.rfind("‖x0 − P_min‖/‖P_min‖ = 0 ", 0) == 0);
  const Diagnostic off_zero = proxy_distance_diagnostic(0, v(1e-3, 0), v(0, 0), false);
  CHECK(off_zero.warning);
  CHECK(off_zero.detail.rfind("‖x0 − P_min‖/‖P_min‖ = inf ", 0) == 0);
  // The hull dimension: none at m − 1, a warning above and below it.
  CHECK_FALSE(hull_dimension_diagnostic(1, 1, 5.0, 2).has_value());
  CHECK_FALSE(hull_dimension_diagnostic(1, 2, 5.0, 3).has_value());
  CHECK_FALSE(hull_dimension_diagnostic(1, 0, 5.0, 1).has_value());
  for (int read : {0, 2}) {
    const std::optional<Diagnostic> g = hull_dimension_diagnostic(1, read, 5.0, 2);
    REQUIRE(g.has_value());
    CHECK(g->warning);
    CHECK(g->stage == "5");
    CHECK(g->detail == std::to_string(read) + " free directions by the singular-value gap (largest ratio 5), m − 1 = 1");
  }
}

// Stage 3's per-round references, called as the learner's stage 3 calls them: the margin
// check with the reference step on (a row), off (none); the paper variant's proxy at
// d² = --reference-max-unknowns (a row), one below (none: that gate writes its own row once,
// on the selected round), and off (none).
TEST_CASE("the learner's stage-3 references run with the reference step on and within the unknowns' gate only",
          "[learn][reference][branches]") {
  const Instance inst = mha::test::generated_instance(4, 2, 2, 3.0, 5);
  const SampleOracle oracle(inst, 1, Stream::inputs);
  const ConvexBody body = test::token_hull_body(4, 2, 64, 0.05, 1e-3, 5).body;
  const std::vector<MatD> proxies = {inst.layer.heads[0].theta};
  LearnOptions o;
  const auto rows_after = [&](bool reference, int max_unknowns, auto call) {
    o.reference = reference;
    o.reference_max_unknowns = max_unknowns;
    LearnReport rep;
    Pipeline p{oracle, o, &inst, &inst.layer, rep, inst.k, inst.d(), inst.layer.m(), 0};
    call(p);
    return rep.reference;
  };
  const auto margin = [&](Pipeline& p) { check_margin_run(p, 1, proxies, MarginResult{}, 0); };
  const std::vector<ReferenceCheck> on = rows_after(true, 16, margin);
  REQUIRE(on.size() == 1);
  CHECK(on.front().round == 1);
  CHECK(on.front().comparison.stage == "3");
  CHECK(rows_after(false, 16, margin).empty());
  const auto proxy = [&](Pipeline& p) { check_proxy_run(p, 0, body); };
  const std::vector<ReferenceCheck> allowed = rows_after(true, 16, proxy);
  REQUIRE(allowed.size() == 1);
  CHECK(allowed.front().comparison.quantity.find("minimum-norm point") != std::string::npos);
  CHECK(allowed.front().comparison.compared > 0);
  CHECK(rows_after(true, 15, proxy).empty());
  CHECK(rows_after(false, 16, proxy).empty());
}

// The selected round's body proved empty by the certified QP: the "K empty" diagnostic, and
// no LP-width diagnostic (its widths need a point of K).
TEST_CASE("the learner's reference step on an empty selected body: K empty, and no width diagnostic",
          "[learn][reference][branches]") {
  const Instance inst = mha::test::generated_instance(4, 2, 2, 3.0, 5);
  const SampleOracle oracle(inst, 1, Stream::inputs);
  LearnOptions o;
  o.m = 2;
  o.reference = true;
  o.reference_max_unknowns = 16;
  LearnReport rep;
  Pipeline p{oracle, o, &inst, &inst.layer, rep, inst.k, inst.d(), inst.layer.m(), 0};
  ConvexBody body(16, 20.0);
  std::vector<double> e0(16, 0.0);
  e0[0] = 1.0;
  body.add({e0, 0.0, 0.1});  // |θ_0| ≤ 0.1
  body.add({e0, 1.0, 0.1});  // |θ_0 − 1| ≤ 0.1: no point in both
  LearnRound best;
  const ConvexBody::Centre centre = body.least_squares_centre(1);
  best.sculpt = SculptResult{body, centre, {}};
  best.net.layer = inst.layer;
  best.span.hull_directions = head_hull_directions(inst.layer);
  best.span.hull_point = Eigen::Map<const Eigen::VectorXd>(inst.layer.heads[0].theta.data(), 16);
  best.span.dimension_fast = 1;
  check_selected_round(p, best);
  const auto named = [&](const std::string& name) {
    return std::count_if(rep.diagnostics.begin(), rep.diagnostics.end(), [&](const Diagnostic& g) { return g.name == name; });
  };
  CHECK(named("K empty") == 1);
  const auto empty = std::find_if(rep.diagnostics.begin(), rep.diagnostics.end(), [](const Diagnostic& g) { return g.name == "K empty"; });
  REQUIRE(empty != rep.diagnostics.end());
  CHECK(empty->warning);
  CHECK(empty->stage == "3");
  CHECK(named("body thin across the hull") == 0);
  CHECK(named("proxy against the minimum-norm point of K") == 0);
}
