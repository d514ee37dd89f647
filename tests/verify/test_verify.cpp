// `mhalearn verify`'s comparisons (verify/verify.hpp): the named bounds pinned to
// their formulas on hand-computed inputs, each comparison agreeing on correct
// fast paths, and each stage's row rejecting a deliberately wrong fast path
// after escalating its reference to the most precise arithmetic available.
#include "instances.hpp"
#include "numeric/tolerance.hpp"
#include "stages/certify_reference.hpp"
#include "stages/w_least_squares.hpp"
#include "verify/faults.hpp"
#include "verify/verify.hpp"

#include <catch2/catch.hpp>

#include <cmath>

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

TEST_CASE("least squares: the fast QR agrees with MPFR and exact rationals, a wrong answer does not", "[verify][stage6]") {
  const Instance inst = mha::test::generated_instance(6, 2, 2, 2.0, 5);
  VerifyOptions o;
  o.w_samples = 64;
  const auto rows = verify_instance(inst, {"6"}, o);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].agree);
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
  CHECK(rows[0].agree);
  CHECK(rows[0].compared == 200);
  CHECK_THAT(rows[0].detail, Catch::Contains("certified"));  // the certified branch is reached

  // A verdict flipped on the same inputs is a disagreement, not undecided.
  FastPaths flip = default_fast_paths();
  flip.certify = [](const MatD& x, const MatD& y, const MatD& b, int row, const CertifyOptions& co) {
    RowCertificate c = certify_row_fast(x, y, b, row, co);
    if (c.verdict == RowVerdict::certified) c.verdict = RowVerdict::too_uncertain;
    return c;
  };
  const auto flipped = verify_instance(inst, {"2"}, o, flip);
  CHECK_FALSE(flipped[0].agree);
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
  o.gradient_samples = 2;
  const auto good = verify_instance(inst, verify_stage_names(), o);
  REQUIRE(good.size() == verify_stage_names().size());
  for (const auto& c : good) {
    INFO("stage " << c.stage << ": " << c.detail);
    CHECK(c.compared > 0);
    CHECK(c.agree);
  }
  CHECK(verify_outcome(good) == VerifyOutcome::agree);
  for (const faults::Fault& fault : faults::stage_faults()) {
    const auto rows = verify_instance(inst, {fault.stage}, o, faults::with_fault(fault.stage));
    INFO("stage " << fault.stage << ": " << rows[0].detail);
    CHECK(rows[0].compared > 0);
    CHECK_FALSE(rows[0].agree);
    CHECK(rows[0].precision == fault.escalated_to);
    CHECK(rows[0].slack > 1.0);
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
  CHECK((at256.agree && at256.precision == 256u));
  CHECK((calls == std::vector<unsigned>{128, 256}));
  calls.clear();
  const Comparison never = escalate(agree_from(1), {128, 256, kExactRationals});
  CHECK((!never.agree && never.precision == kExactRationals));
  CHECK((calls == std::vector<unsigned>{128, 256, kExactRationals}));
  CHECK(precision_name(kExactRationals) == "exact rationals");
  CHECK(precision_name(kCertifiedDouble) == "double, certified");
  CHECK(precision_name(256) == "MPFR 256");
  Comparison c;
  CHECK(std::string(verdict(c)) == "not compared");
  c.compared = 1;
  CHECK(std::string(verdict(c)) == "DISAGREE");
  c.agree = true;
  CHECK(std::string(verdict(c)) == "agree");
}
