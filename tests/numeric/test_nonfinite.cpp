// NaN and ±∞ never agree (MATH.md §5, "Verdicts"): every comparison item, band
// decision, part, escalation and bound decides them explicitly — disagree or
// undecided — and each property here has its test of the tester: the deliberately
// wrong implementation it must reject (the fault `if (difference > bound) agree =
// false;`, a side_of that decides an infinite value, a bound whose std::max drops a
// NaN). The checks themselves are fed NaN and ±∞ in tests/verify/test_nonfinite_checks.cpp.
#include "numeric/comparison.hpp"
#include "numeric/tolerance.hpp"
#include "property.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

using namespace mha;
namespace tol = mha::tolerance;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A value of a comparison: NaN, ±∞, zero, or a finite number of either sign.
rc::Gen<double> any_value() {
  return rc::gen::oneOf(rc::gen::just(kNaN), rc::gen::just(kInf), rc::gen::just(-kInf), rc::gen::just(0.0),
                        rc::gen::map(rc::gen::inRange(-1000, 1000), [](int i) { return i / 64.0; }));
}

using Recorder = std::function<void(ComparisonItems&, double difference, double bound)>;

void real_record(ComparisonItems& c, double difference, double bound) { c.record(difference, bound); }

// The fault of issue "The checker checked": a NaN difference counts as agreement.
void wrong_record(ComparisonItems& c, double difference, double bound) {
  ++c.compared;
  if (difference > bound) c.agree = false;
}

// What the items must come to: disagree when some difference is not finite or lies
// beyond a finite bound; each finite difference against a bound that is not finite
// undecided; agreement only from finite differences within finite bounds.
bool items_as_specified(const Recorder& record, const std::vector<std::pair<double, double>>& items) {
  ComparisonItems c;
  bool disagree = false;
  int undecided = 0;
  for (const auto& [difference, bound] : items) {
    record(c, difference, bound);
    if (!std::isfinite(difference) || (std::isfinite(bound) && !(difference <= bound))) disagree = true;
    else if (!std::isfinite(bound)) ++undecided;
  }
  ComparisonPart part;
  static_cast<ComparisonItems&>(part) = c;
  const std::string v = verdict(part);
  const bool all_undecided = !items.empty() && undecided == static_cast<int>(items.size());
  return c.compared == static_cast<int>(items.size()) && c.agree == !disagree && c.undecided == undecided &&
         v == (items.empty() ? "not compared" : disagree ? "DISAGREE" : all_undecided ? "undecided" : "agree");
}

// side_of as it was before NaN and ±∞ were decided explicitly: an infinite value is "above".
BandSide old_side_of(double value, double threshold, double band) {
  if (!(std::abs(value - threshold) > band)) return BandSide::undecided;
  return value > threshold ? BandSide::above : BandSide::below;
}

bool side_as_specified(const std::function<BandSide(double, double, double)>& side, double value, double threshold,
                       double band) {
  const BandSide s = side(value, threshold, band);
  if (!std::isfinite(value) || !std::isfinite(threshold) || !(band >= 0)) return s == BandSide::undecided;
  if (std::abs(value - threshold) <= band) return s == BandSide::undecided;
  return s == (value > threshold ? BandSide::above : BandSide::below);
}

}  // namespace

TEST_CASE("record: NaN and ±∞ never agree (items against their specification)", "[comparison][nonfinite]") {
  mha::test::property("record: NaN and ±∞ never agree", 400, [] {
    const auto items = *rc::gen::container<std::vector<std::pair<double, double>>>(
        rc::gen::pair(any_value(), any_value()));
    RC_ASSERT(items_as_specified(real_record, items));
  });
  // Test of the tester: `if (difference > bound) agree = false;` lets a NaN agree.
  mha::test::property_rejects("record: the fault `difference > bound` is rejected", 400, [] {
    const auto items = *rc::gen::container<std::vector<std::pair<double, double>>>(
        rc::gen::pair(any_value(), any_value()));
    RC_ASSERT(items_as_specified(wrong_record, items));
  });
  // The cases by name: each counted, none agreeing.
  for (double bad : {kNaN, kInf, -kInf}) {
    ComparisonItems c;
    c.record(bad, 1.0);
    CHECK_FALSE(c.agree);
    CHECK(c.compared == 1);
    ComparisonItems no_bound;
    no_bound.record(0.5, bad);
    CHECK(no_bound.agree);
    CHECK(no_bound.undecided == 1);
    ComparisonItems both;
    both.record(bad, kInf);  // ∞ ≤ ∞ must not pass for agreement
    CHECK_FALSE(both.agree);
  }
}

TEST_CASE("record_decision and side_of: NaN and ±∞ decide nothing", "[comparison][nonfinite]") {
  mha::test::property("side_of: NaN and ±∞ are undecided", 400, [] {
    RC_ASSERT(side_as_specified(side_of, *any_value(), *any_value(), *any_value()));
  });
  mha::test::property_rejects("side_of: deciding an infinite value is rejected", 400, [] {
    RC_ASSERT(side_as_specified(old_side_of, *any_value(), *any_value(), *any_value()));
  });
  // A decision computed from NaN (as the checks compute theirs: a comparison of values)
  // is recorded as not the same, and the items disagree.
  ComparisonItems c;
  c.record_decision((kNaN < 1.0) == (1.0 < 2.0));
  CHECK_FALSE(c.agree);
  CHECK(std::string(verdict(static_cast<const ComparisonPart&>(ComparisonPart{}))) == "not compared");
}

TEST_CASE("parts, rows and escalation: a NaN disagrees after every rung, an all-undecided part is undecided", "[comparison][nonfinite]") {
  for (double bad : {kNaN, kInf, -kInf}) {
    std::vector<unsigned> rungs;
    const Comparison row = escalate([&](unsigned bits) {
      rungs.push_back(bits);
      Comparison c;
      c.record(1e-20, 1e-10);
      ComparisonPart p;
      p.name = "part";
      p.record(bad, 1e-10);
      add_part(c, p);
      return c;
    }, {128, 256, kExactRationals});
    CHECK((rungs == std::vector<unsigned>{128, 256, kExactRationals}));  // escalated to the last rung
    CHECK(disagrees(row));
    CHECK(std::string(verdict(row)) == "DISAGREE");
    CHECK(row.precision == kExactRationals);
    // The row as JSON and back: still a disagreement (NaN written as null).
    CHECK(disagrees(comparison_from_json(to_json(row))));
  }
  ComparisonPart undecided;
  undecided.record(1e-3, kNaN);
  undecided.record_undecided();
  CHECK(std::string(verdict(undecided)) == "undecided");
  Comparison row;
  add_part(row, undecided);
  CHECK(std::string(verdict(row)) == "undecided");
  CHECK_FALSE(disagrees(row));
  row.record(0.0, 1.0);  // one decided item: the row agrees, its undecided items counted
  CHECK(std::string(verdict(row)) == "agree");
  CHECK(row.undecided == 2);
}

namespace {

// Every bound of numeric/tolerance.hpp with double arguments, at finite arguments,
// as a function of those arguments (integers fixed).
struct Bound {
  const char* name;
  std::vector<double> args;
  std::function<double(const std::vector<double>&)> f;
};

std::vector<Bound> bounds() {
  using A = const std::vector<double>&;
  return {
      {"gamma", {0x1p-53}, [](A a) { return tol::gamma(10, a[0]); }},
      {"qr_least_squares_relative_bound", {10, 0.5}, [](A a) { return tol::qr_least_squares_relative_bound(a[0], 100, 4, a[1]); }},
      {"normal_equations_relative_bound", {10}, [](A a) { return tol::normal_equations_relative_bound(a[0], 100, 4, 128); }},
      {"certification_solution_bound", {3, 1, 2, 1}, [](A a) { return tol::certification_solution_bound(a[0], a[1], a[2], a[3], 2, 4); }},
      {"certification_residual_bound", {3, 2, 1, 0.5, 1e-15}, [](A a) { return tol::certification_residual_bound(a[0], a[1], a[2], a[3], a[4], 2, 4); }},
      {"logit_margin_bound", {2, 0.5}, [](A a) { return tol::logit_margin_bound(a[0], a[1], 4); }},
      {"slab_centre_difference_bound", {0.25, 0.5, -0.75, 1e-3}, [](A a) { return tol::slab_centre_difference_bound(a[0], a[1], a[2], a[3]); }},
      {"slab_width_difference_bound", {0.25, 0.5, 0.01, 0.06, 1e-3, 1e-4}, [](A a) { return tol::slab_width_difference_bound(a[0], a[1], a[2], a[3], a[4], a[5]); }},
      {"slab_normal_difference_bound", {10}, [](A a) { return tol::slab_normal_difference_bound(a[0], 16); }},
      {"slab_membership_band", {3, 0.5, 0.1, 1e-12, 2e-12, 1e-13, 2}, [](A a) { return tol::slab_membership_band(a[0], a[1], a[2], 16, a[3], a[4], a[5], a[6]); }},
      {"ball_membership_band", {5, 20}, [](A a) { return tol::ball_membership_band(a[0], a[1], 16); }},
      {"lp_value_difference_bound", {1e-10, 2e-10, 3e-12, 5e-12}, [](A a) { return tol::lp_value_difference_bound(a[0], a[1], a[2], a[3]); }},
      {"streamed_svd_backward_error", {1e-12}, [](A a) { return tol::streamed_svd_backward_error(100, 4, 2, a[0]); }},
      {"singular_subspace_sin_bound", {1e-3, 0.1}, [](A a) { return tol::singular_subspace_sin_bound(a[0], a[1], 2, 4); }},
      {"hull_point_bound", {1e-6, 10, 1, 0.01, 1e-3, 2, 0.5, 3}, [](A a) { return tol::hull_point_bound(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], 100, 4, 2); }},
      {"min_norm_solution_bound", {10, 2}, [](A a) { return tol::min_norm_solution_bound(a[0], 20, 3, a[1]); }},
      {"least_squares_perturbation_bound", {10, 1e-6, 3, 0.5, 2}, [](A a) { return tol::least_squares_perturbation_bound(a[0], a[1], a[2], a[3], a[4]); }},
      {"design_entry_relative_error", {1e-14}, [](A a) { return tol::design_entry_relative_error(a[0], 3); }},
      {"objective_from_residual_bound", {2, 1e-6, 8}, [](A a) { return tol::objective_from_residual_bound(a[0], a[1], a[2], 100); }},
      {"iterative_eigen_residual_bound", {1e-10, 3}, [](A a) { return tol::iterative_eigen_residual_bound(a[0], 1000, 8, 64, 5, a[1]); }},
      {"iterative_point_backward_error", {1e-10, 3, 2, 0.5, 0.25}, [](A a) { return tol::iterative_point_backward_error(a[0], 1000, 8, 64, a[1], a[2], a[3], a[4]); }},
      {"membership_excess_evaluation_error", {2, -0.5, 0.01}, [](A a) { return tol::membership_excess_evaluation_error(64, a[0], a[1], a[2]); }},
      {"optimum_two_paths_bound", {1e-9, 1e-8, 1e-12}, [](A a) { return tol::optimum_two_paths_bound(a[0], a[1], a[2]); }},
      {"membership_hull_point_bound", {1e-6, 3}, [](A a) { return tol::membership_hull_point_bound(a[0], a[1], 64, 1); }},
      {"double_softmax_relative_error", {1e-3, 10}, [](A a) { return tol::double_softmax_relative_error(a[0], a[1], 3); }},
      {"polish_operator_relative", {2}, [](A a) { return tol::polish_operator_relative(100, a[0]); }},
      {"attention_jacobian_relative", {2, 0x1p-53}, [](A a) { return tol::attention_jacobian_relative(3, 4, a[0], a[1]); }},
      {"projection_distance", {1e-3, 0.5}, [](A a) { return tol::projection_distance(a[0], a[1]); }},
      {"householder_projection_distance", {1e-3, 10, 0.5}, [](A a) { return tol::householder_projection_distance(100, 4, a[0], a[1], a[2]); }},
      {"projected_residual_error", {2, 1e-3, 1e-4}, [](A a) { return tol::projected_residual_error(a[0], a[1], a[2]); }},
      {"normal_equations_projection_error", {10, 0.5, 3, 2}, [](A a) { return tol::normal_equations_projection_error(128, 100, 4, a[0], a[1], a[2], a[3]); }},
      {"polish_gradient_bound", {1e-10, 1e-12, 3, 5, 2, 1e-3, 1e-13}, [](A a) { return tol::polish_gradient_bound(a[0], a[1], a[2], a[3], a[4], a[5], a[6]); }},
      {"chi_square_tail_quantile", {3}, [](A a) { return tol::chi_square_tail_quantile(16, a[0]); }},
      {"label_noise_row_bound", {1e-4, 5, 1e-12}, [](A a) { return tol::label_noise_row_bound(a[0], a[1], 2, 16, a[2]); }},
      {"float32_label_rounding_row_bound", {3}, [](A a) { return tol::float32_label_rounding_row_bound(a[0], 16); }},
      {"residual_rounding_level", {1e-28, 4}, [](A a) { return tol::residual_rounding_level(a[0], a[1]); }},
      {"noise_estimate_band", {2}, [](A a) { return tol::noise_estimate_band(16384, 1024, a[0]); }},
      {"heldout_residual_limit", {2e-12, 5e-15}, [](A a) { return tol::heldout_residual_limit(a[0], a[1], 8192, 1024, 8192); }},
  };
}

// lp_value_difference_bound as it was: std::max(shift_fast, NaN) keeps shift_fast.
double old_lp_value_difference_bound(double gap_fast, double gap_reference, double shift_fast, double shift_reference) {
  return (gap_fast + gap_reference + std::max(shift_fast, shift_reference)) * tol::bound_evaluation_factor(4);
}

// A bound with one argument replaced by NaN or ±∞ is no bound: +∞.
bool no_bound_from(const std::function<double(const std::vector<double>&)>& f, std::vector<double> args, size_t at,
                   double bad) {
  args[at] = bad;
  return f(args) == kInf;
}

}  // namespace

TEST_CASE("every bound is finite at finite arguments and +∞ when an argument is NaN or ±∞", "[tolerance][nonfinite]") {
  const std::vector<Bound> all = bounds();
  for (const Bound& b : all) {
    INFO(b.name);
    CHECK(std::isfinite(b.f(b.args)));
  }
  mha::test::property("a NaN or ±∞ argument gives +∞ (no bound)", 300, [&all] {
    const Bound& b = *rc::gen::elementOf(all);
    const size_t at = *rc::gen::inRange<size_t>(0, b.args.size());
    const double bad = *rc::gen::element(kNaN, kInf, -kInf);
    RC_ASSERT(no_bound_from(b.f, b.args, at, bad));
  });
  mha::test::property_rejects("a bound whose std::max drops a NaN is rejected", 100, [] {
    const size_t at = *rc::gen::inRange<size_t>(0, 4);
    const double bad = *rc::gen::element(kNaN, kInf, -kInf);
    RC_ASSERT(no_bound_from([](const std::vector<double>& a) { return old_lp_value_difference_bound(a[0], a[1], a[2], a[3]); },
                            {1e-10, 2e-10, 3e-12, 5e-12}, at, bad));
  });
}
