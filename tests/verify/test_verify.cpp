// `mhalearn verify`'s comparisons (verify/verify.hpp): the named bounds pinned to
// their formulas on hand-computed inputs, each comparison agreeing on correct
// fast paths, and each stage's row rejecting a deliberately wrong fast path
// after escalating its reference to the most precise arithmetic available.
#include "instances.hpp"
#include "numeric/tolerance.hpp"
#include "stages/certify_reference.hpp"
#include "stages/w_least_squares.hpp"
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

namespace {
struct Fault {
  const char* stage;
  unsigned escalated_to;  // the reference precision the disagreement must be confirmed at
  std::function<void(FastPaths&)> inject;
};

std::vector<Fault> faults() {
  const FastPaths ok = default_fast_paths();
  // Stages 2 and 4 share the certification fast path: v̂ moved by 1e-8.
  const auto move_v = [ok](FastPaths& f) {
    f.certify = [ok](const MatD& x, const MatD& y, const MatD& b, int row, const CertifyOptions& co) {
      RowCertificate c = ok.certify(x, y, b, row, co);
      if (c.v.size() > 0) c.v(0) += 1e-8;
      return c;
    };
  };
  return {
      {"forward", 256, [ok](FastPaths& f) {
         f.forward = [ok](const Layer& l, const MatD& x) { MatD y = ok.forward(l, x); y(0, 0) *= 1 + 1e-9; return y; };
       }},
      {"1", 256, [ok](FastPaths& f) {
         f.stage1 = [ok](const SampleSource& s, const Stage1Options& o) {
           Stage1Result r = ok.stage1(s, o);
           r.w_hat(0, 0) += 1e-9 * r.w_hat.cwiseAbs().maxCoeff();
           return r;
         };
       }},
      {"2", 256, move_v},
      {"3", kExactRationals, [ok](FastPaths& f) {
         f.stage3 = [ok](const SampleSource& s, const MatD& p, const MarginOptions& o) {
           MarginResult r = ok.stage3(s, p, o);
           if (r.w_sum.size() > 0) r.w_sum(0, 0) *= 1 + 1e-8;
           return r;
         };
       }},
      {"4", 256, move_v},  // stage 4 certifies with the same fast path
      {"5", kCertifiedDouble, [ok](FastPaths& f) {
         f.span = [ok](const ConvexBody& body, const ConvexBody::Centre& c, int m, const SpanOptions& o) {
           SpanResult r = ok.span(body, c, m, o);
           // Turn the hull direction by 0.2 rad towards a direction orthogonal to it.
           Eigen::VectorXd h = r.hull_directions.row(0).transpose();
           Eigen::VectorXd e = Eigen::VectorXd::Unit(h.size(), 0);
           e -= e.dot(h) * h;
           e.normalize();
           r.hull_directions.row(0) = (std::cos(0.2) * h + std::sin(0.2) * e).transpose();
           return r;
         };
       }},
      {"6", kExactRationals, [ok](FastPaths& f) {
         f.w_least_squares = [ok](const MatD& d, const MatD& y) {
           std::optional<MatD> w = ok.w_least_squares(d, y);
           if (w) (*w)(0, 0) *= 1 + 1e-8;
           return w;
         };
       }},
      {"polish", 256, [ok](FastPaths& f) {
         // At the truth moved by 1e-6 the bound is ~1e-7 of E (the forward bound over
         // residuals of 1e-6): a relative 1e-5 is well outside it.
         f.squared_error = [ok](const Layer& l, const MatD& x, const MatD& y) { return ok.squared_error(l, x, y) * (1 + 1e-5); };
       }},
  };
}
}  // namespace

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
  for (const Fault& fault : faults()) {
    FastPaths fast = default_fast_paths();
    fault.inject(fast);
    const auto rows = verify_instance(inst, {fault.stage}, o, fast);
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
