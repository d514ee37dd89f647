// Unit tests of the SQ-hard family (src/hardness/, proofs/sq_family.md):
// hand-computed members, singular systems, the verifiers rejecting wrong
// answers, export and round trip, the SQ numbers, and the `hard` subcommand.
#include "cli_sandbox.hpp"
#include "data/enumerate.hpp"
#include "data/instance_io.hpp"
#include "hardness/sq_family.hpp"
#include "hardness/sq_study.hpp"
#include "model/conditions.hpp"
#include "numeric/precision.hpp"
#include "numeric/tolerance.hpp"

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace mha;
namespace fs = std::filesystem;

namespace {
SqFamilyParams params_for(int d, int m, std::vector<Rational> q, int p = 0, int q_out = 1) {
  SqFamilyParams s;
  s.d = d;
  s.m = m;
  s.p = p;
  s.q_out = q_out;
  s.subset = sq_default_subset(d, m, p);
  s.q = q.empty() ? sq_default_q(m) : std::move(q);
  return s;
}
std::vector<Rational> rationals(std::initializer_list<const char*> list) {
  std::vector<Rational> out;
  for (const char* s : list) {
    Rational r;
    REQUIRE(parse_rational(s, r));
    out.push_back(r);
  }
  return out;
}
Rational R(const char* s) {
  Rational r;
  REQUIRE(parse_rational(s, r));
  return r;
}
}  // namespace

TEST_CASE("hand-computed member: m = 1, q = (1, 2)", "[hardness]") {
  // Rows s = 0, 1 of A: (1/2, 1/2) and (1/2, 2/3); b = (1, −1):
  // w_0 + w_1 = 2 and w_0/2 + 2w_1/3 = −1 give w = (14, −12) (MATH.md: max|w| = 14).
  const SqBuildResult b = build_sq_family(params_for(3, 1, rationals({"1", "2"})));
  REQUIRE(b.ok);
  CHECK(b.family.w[0] == 14);
  CHECK(b.family.w[1] == -12);
  CHECK(b.family.c == 2);
  CHECK(b.family.system(1, 1) == R("2/3"));
  // X with x_0 = (+,+,+), x_1 = (−,−,+), S = {1}, p = 0: s = 1 disagreement in S,
  // head 0 gives 1/2 to token 1, head 1 gives 2/3. Row 0, column 1:
  // 14·(1/2·1 + 1/2·(−1)) − 12·(1/3·1 + 2/3·(−1)) = 0 + 4 = 4 = c·1 + (−1 − 1)·(−1).
  MatD x(2, 3);
  x << 1, 1, 1, -1, -1, 1;
  const Mat<Rational> y = sq_forward_exact(b.family, x);
  CHECK(y(0, 1) == 4);
  CHECK(y(1, 1) == -4);   // c·(−1) − (x_{1,0} − x_{0,0})·χ_S = −2 − 2
  CHECK(y(0, 0) == 0);
  CHECK(y(1, 2) == 0);
  CHECK(y == sq_closed_form(b.family, x));
}

namespace {
// True when `planning` is `exact` rounded to `digits` significant decimal digits
// (compared exactly: |exact − planning| ≤ ½·10^(e − digits + 1), e = ⌊log10 planning⌋).
bool rounds_to(const Rational& exact, double planning, int digits) {
  const int e = static_cast<int>(std::floor(std::log10(planning)));
  Rational half_unit(1, 2);
  for (int i = 0; i < std::abs(e - digits + 1); ++i) half_unit = e - digits + 1 >= 0 ? half_unit * 10 : half_unit / 10;
  Rational p;
  REQUIRE(parse_rational(std::to_string(static_cast<long long>(std::llround(planning))), p));
  return abs(exact - p) <= half_unit;
}
}  // namespace

TEST_CASE("MATH.md's planning numbers for q_i = i + 1", "[hardness]") {
  // max_i |w_i| for q_i = i + 1, m = 1..6, exactly: the solutions of A w = b
  // computed independently of build_sq_family (Gauss–Jordan in Python's
  // fractions.Fraction), recorded in proofs/sq_family.md.
  const char* exact_max[] = {"14", "96", "5656/11", "17420207870/4505413",
                             "740654982722585411/12427048617882",
                             "581111750794859316012207742860947/315638639417268101402428890"};
  // MATH.md's planning numbers and their significant digits.
  const double planning[] = {14, 96, 514, 3.9e3, 6e4, 1.8e6};
  const int digits[] = {2, 2, 3, 2, 1, 2};
  for (int m = 1; m <= 6; ++m) {
    std::vector<Rational> q;
    for (int i = 0; i <= m; ++i) q.push_back(Rational(i + 1));
    const SqBuildResult b = build_sq_family(params_for(m + 2, m, q));
    REQUIRE(b.ok);
    Rational mx(0);
    for (const auto& w : b.family.w) mx = std::max(mx, Rational(abs(w)));
    Rational expected;
    REQUIRE(parse_rational(exact_max[m - 1], expected));
    INFO("m = " << m << ": max |w_i| = " << rational_to_string(mx));
    CHECK(mx == expected);
    CHECK(rounds_to(mx, planning[m - 1], digits[m - 1]));
    CHECK(b.family.c == 2);
  }
  // Test of the tester: the comparison rejects a planning number one unit of
  // its last digit off (the old 3% tolerance accepted 3.8e3 for 3866.5).
  Rational e4;
  REQUIRE(parse_rational(exact_max[3], e4));
  CHECK_FALSE(rounds_to(e4, 3.8e3, 2));
  CHECK_FALSE(rounds_to(Rational(520), 514, 3));
}

TEST_CASE("reciprocal pairs make the system singular, and the error says so", "[hardness]") {
  // σ(q, s) + σ(1/q, s) = 1 = 2σ(1, s): the columns of 1, q, 1/q are dependent.
  for (auto q : {rationals({"1", "2", "1/2"}), rationals({"3", "1/3", "1"}), rationals({"2", "1/2", "5", "1/5"})}) {
    const int m = static_cast<int>(q.size()) - 1;
    const SqBuildResult b = build_sq_family(params_for(m + 2, m, q));
    CHECK_FALSE(b.ok);
    CHECK_THAT(b.error, Catch::Contains("singular"));
  }
}

TEST_CASE("m = 2: singular exactly when 1 + e1(q) = e2(q) + e3(q)", "[hardness]") {
  // proofs/sq_family.md Lemma 2(c): ⇔ arctan q_0 + arctan q_1 + arctan q_2 = 3π/4.
  // (2, 1/3, 4/3) is singular without a reciprocal pair or a 1 among the q.
  auto singular = [](std::vector<Rational> q) { return !build_sq_family(params_for(4, 2, std::move(q))).ok; };
  auto criterion = [](const std::vector<Rational>& q) {
    const Rational e1 = q[0] + q[1] + q[2], e2 = q[0] * q[1] + q[0] * q[2] + q[1] * q[2], e3 = q[0] * q[1] * q[2];
    return Rational(1) + e1 == e2 + e3;
  };
  for (auto q : {rationals({"2", "1/3", "4/3"}), rationals({"1", "5", "1/5"}), rationals({"3", "1/3", "1"})}) {
    CHECK(criterion(q));
    CHECK(singular(q));
  }
  for (auto q : {rationals({"2", "1/3", "3/2"}), rationals({"1/2", "1/3", "1/5"}), rationals({"1", "7/4", "3"})}) {
    CHECK_FALSE(criterion(q));
    CHECK_FALSE(singular(q));
  }
}

TEST_CASE("the residual check rejects a wrong solution", "[hardness]") {
  const auto q = sq_default_q(4);
  const SqBuildResult b = build_sq_family(params_for(8, 4, q));
  REQUIRE(b.ok);
  CHECK(sq_weights_solve_system(q, b.family.w));
  auto w = b.family.w;
  w[2] += Rational(1, 1000000000);
  CHECK_FALSE(sq_weights_solve_system(q, w));
  w = b.family.w;
  std::swap(w[0], w[1]);
  CHECK_FALSE(sq_weights_solve_system(q, w));
}

TEST_CASE("sq_verify rejects a family whose weights are wrong", "[hardness]") {
  const SqBuildResult b = build_sq_family(params_for(5, 2, {}));
  REQUIRE(b.ok);
  SqFamily wrong = b.family;
  wrong.w[1] += Rational(1, 1000);
  SqVerifyOptions opt;
  opt.mpfr_checks = 8;
  // Exact check: the tampered layer no longer equals the closed form.
  const SqVerifyReport r = sq_verify(wrong, sq_export_instance(wrong).layer, opt);
  CHECK_FALSE(r.ok);
  CHECK(r.exact_mismatches > 0);
  CHECK(r.first_mismatch >= 0);
  // The bounds are honest about the parameters they are given: against a layer
  // exported from the wrong weights, E measures |ŵ_i − w_i| ≈ 10⁻³ itself, so
  // the comparison still holds (it is a statement about that layer).
  const SqVerifyReport r2 = sq_verify(b.family, sq_export_instance(wrong).layer, opt);
  CHECK(r2.ok);
  CHECK(r2.fast.parameter_error > 1e-3);
  // A layer without the family's structure is refused outright.
  Layer bad = sq_export_instance(b.family).layer;
  bad.heads[0].w(2, 2) = 1.0;
  CHECK_FALSE(sq_verify(b.family, bad, opt).error.empty());
}

TEST_CASE("the agreement check rejects a value just outside its bound", "[hardness]") {
  const SqBuildResult b = build_sq_family(params_for(4, 2, {}));
  REQUIRE(b.ok);
  MatD x(2, 4);
  x << 1, -1, 1, 1, -1, 1, 1, -1;
  const Mat<Rational> exact = sq_forward_exact(b.family, x);
  const MatD bound = MatD::Constant(2, 4, 0x1p-40);
  MatD y = to_double_matrix(exact);
  SqAgreement ok;
  sq_accumulate(ok, exact, y.data(), bound);
  CHECK(ok.violations == 0);
  CHECK(ok.inputs == 1);
  y(1, 1) += 0x1p-38;   // 4 × the bound: rejected
  SqAgreement bad;
  sq_accumulate(bad, exact, y.data(), bound);
  CHECK(bad.violations == 1);
  CHECK(bad.max_ratio == Approx(4.0).epsilon(0.01));
  y(1, 1) = std::nan("");
  SqAgreement nan;
  sq_accumulate(nan, exact, y.data(), bound);
  CHECK(nan.violations == 1);
  ScopedPrecision precision(100);
  Mat<Mpfr> ym = cast_matrix<Mpfr>(to_double_matrix(exact));
  ym(0, 1) += Mpfr(0x1p-39);
  SqAgreement bad_mpfr;
  sq_accumulate(bad_mpfr, exact, ym, bound);
  CHECK(bad_mpfr.violations == 1);
}

TEST_CASE("verification of a small member by enumeration, and by sampling", "[hardness]") {
  const SqBuildResult b = build_sq_family(params_for(5, 2, {}, 3, 0));
  REQUIRE(b.ok);
  const Instance inst = sq_export_instance(b.family);
  SqVerifyOptions opt;
  opt.mpfr_checks = 16;
  opt.threads = 1;
  const SqVerifyReport r1 = sq_verify(b.family, inst.layer, opt);
  REQUIRE(r1.error.empty());
  CHECK(r1.ok);
  CHECK(r1.enumerated);
  CHECK(r1.inputs == 1024);
  CHECK(r1.fast.inputs == 1024);
  CHECK(r1.mpfr_exported.inputs == 16);
  CHECK(r1.fast.max_bound > 0);
  CHECK(r1.mpfr_full.max_abs_diff < 1e-50);
  // Same numbers whatever the thread count.
  opt.threads = 2;
  const SqVerifyReport r2 = sq_verify(b.family, inst.layer, opt);
  CHECK(r2.fast.max_abs_diff == r1.fast.max_abs_diff);
  CHECK(r2.fast.max_ratio == r1.fast.max_ratio);
  // Sampling at d = 30.
  const SqBuildResult big = build_sq_family(params_for(30, 3, {}));
  REQUIRE(big.ok);
  opt.enumerate = false;
  opt.samples = 300;
  opt.mpfr_checks = 4;
  const SqVerifyReport r3 = sq_verify(big.family, sq_export_instance(big.family).layer, opt);
  CHECK(r3.ok);
  CHECK_FALSE(r3.enumerated);
  CHECK(r3.inputs == 300);
}

TEST_CASE("export: doubles, exact extension data, and a file round trip", "[hardness]") {
  const SqBuildResult b = build_sq_family(params_for(7, 3, {}, 2, 5));
  REQUIRE(b.ok);
  const SqFamily& f = b.family;
  Instance inst = sq_export_instance(f);
  CHECK(validate_instance(inst).empty());
  CHECK(inst.k == 2);
  CHECK(inst.m() == 4);
  const auto ext = nlohmann::json::parse(inst.extensions_json)["sq_family"];
  CHECK(ext["S"] == nlohmann::json(f.params.subset));
  CHECK(ext["p"] == 2);
  CHECK(ext["q_out"] == 5);
  CHECK(ext["c"] == "2");
  for (int i = 0; i <= 3; ++i) {
    CHECK(R(ext["q"][i].get<std::string>().c_str()) == f.params.q[i]);
    CHECK(R(ext["w"][i].get<std::string>().c_str()) == f.w[i]);
    // θ_i is the nearest double to the stored 256-bit value, which is −ln(q_i)/2.
    const std::string s = ext["neg_half_log_q"][i];
    ScopedPrecision precision(300);
    const Mpfr stored(s);
    const NegHalfLog t = sq_neg_half_log(f.params.q[i], 300);
    CHECK(abs(stored - t.value) <= ldexp(abs(t.value) + 1, -250));
    const double th = inst.layer.heads[i].theta(f.params.subset[0], f.params.subset[0]);
    CHECK(th == mpfr_get_d(stored.backend().data(), MPFR_RNDN));
    CHECK(inst.layer.heads[i].w(2, 5) == rational_to_double(f.w[i]));
    CHECK(inst.layer.heads[i].w.cwiseAbs().sum() == std::abs(inst.layer.heads[i].w(2, 5)));
  }
  CHECK(inst.layer.heads[0].theta.isZero());   // q_0 = 1: a uniform-attention head
  inst.provenance_json = "{}";
  const fs::path path = fs::temp_directory_path() / ("mhalearn_sq_" + std::to_string(::getpid()) + ".json");
  REQUIRE(write_instance(path.string(), inst).empty());
  const InstanceReadResult back = read_instance(path.string());
  fs::remove(path);
  REQUIRE(back.ok);
  CHECK(nlohmann::json::parse(back.instance.extensions_json) == nlohmann::json::parse(inst.extensions_json));
  for (int i = 0; i <= 3; ++i) {
    CHECK(back.instance.layer.heads[i].theta == inst.layer.heads[i].theta);
    CHECK(back.instance.layer.heads[i].w == inst.layer.heads[i].w);
  }
}

TEST_CASE("the centred targets of small families are orthogonal with norm² 2", "[hardness]") {
  const SqBuildResult b = build_sq_family(params_for(5, 2, {}));
  REQUIRE(b.ok);
  for (bool from_layer : {true, false}) {
    const SqGram g = sq_target_gram(b.family, 100, from_layer);
    CHECK(g.targets == 6);   // C(4, 2)
    CHECK(g.pairs == 21);
    CHECK(g.inputs == 1024);
    CHECK(g.orthogonal);
    CHECK(g.norms_two);
    CHECK(g.min_diag_sum == 2048);
  }
  CHECK(sq_subsets(5, 2, 0, 100).front() == std::vector<int>{1, 2});
  CHECK(sq_subsets(5, 2, 0, 100).back() == std::vector<int>{3, 4});
  CHECK(sq_subsets(6, 3, 2, 3).size() == 3);
}

TEST_CASE("SQ query bound numbers", "[hardness]") {
  SqBound b = sq_query_bound(16, 2, 1e-3);
  CHECK(b.members == "105");
  CHECK(b.per_query == "249999");
  CHECK(b.queries_deterministic == "1");
  // τ = 1/16 (exact in binary): 1/(4τ²) = 64, so H = 63.
  b = sq_query_bound(16, 2, 0.0625);
  CHECK(b.per_query == "63");
  CHECK(b.queries_deterministic == "2");   // ⌈104/63⌉
  CHECK(b.queries_randomized == "2");      // ⌈(70 − 1)/63⌉
  CHECK(b.cube_root == Approx(std::cbrt(416.0)));
  b = sq_query_bound(64, 8, 1.0 / 1024);
  CHECK(b.members == "3872894697");        // C(63, 8)
  CHECK(b.per_query == "262143");          // 2^18 − 1
  CHECK(b.queries_deterministic == "14774");   // ⌈3872894696 / 262143⌉
  b = sq_query_bound(16, 2, 0.5);
  CHECK(b.impossible);
  CHECK(b.queries_deterministic == "infinite");
}

TEST_CASE("parameters, defaults and parsing", "[hardness]") {
  Rational r;
  CHECK(parse_rational("7/4", r));
  CHECK(r == R("7/4"));
  CHECK(parse_rational("1.25", r));
  CHECK(r == R("5/4"));
  CHECK(parse_rational("-3", r));
  CHECK(r == -3);
  CHECK(parse_rational("10/4", r));
  CHECK(r == R("5/2"));
  for (const char* bad : {"", "1/0", "a", "1/", "/2", "1.2.3", "1e3", "0x10", "--1", " "}) CHECK_FALSE(parse_rational(bad, r));
  // Defaults: for m ≤ 8 the frozen optimized nodes, all in [1, m + 1], and
  // never worse than the Chebyshev nodes in Σ|w_i|; Chebyshev nodes beyond.
  for (int m = 1; m <= 12; ++m) {
    const auto q = sq_default_q(m);
    REQUIRE(static_cast<int>(q.size()) == m + 1);
    CHECK(q.front() == 1);
    CHECK(q.back() == m + 1);
    CHECK(std::is_sorted(q.begin(), q.end()));
    const SqBuildResult b = build_sq_family(params_for(m + 1, m, q));
    REQUIRE(b.ok);
    if (m <= 8) {
      const SqBuildResult c = build_sq_family(params_for(m + 1, m, sq_chebyshev_q(m)));
      REQUIRE(c.ok);
      double sd = 0, sc = 0;
      for (int i = 0; i <= m; ++i) {
        sd += std::abs(rational_to_double(b.family.w[i]));
        sc += std::abs(rational_to_double(c.family.w[i]));
      }
      CHECK(sd <= sc * 1.0001);
    }
  }
  CHECK(sq_default_subset(6, 3, 1) == std::vector<int>{0, 2, 3});
  // Validation messages.
  auto msg = [](SqFamilyParams p) { return validate_sq_params(p); };
  SqFamilyParams p = params_for(6, 2, {});
  CHECK(msg(p).empty());
  p.m = 0;
  CHECK_THAT(msg(p), Catch::Contains("m must be at least 1"));
  p = params_for(6, 2, {});
  p.d = 2;
  CHECK_THAT(msg(p), Catch::Contains("d must be at least m + 1"));
  p = params_for(6, 2, {});
  p.q_out = p.p;
  CHECK_THAT(msg(p), Catch::Contains("p and q_out must differ"));
  p = params_for(6, 2, {});
  p.subset = {0, 3};
  CHECK_THAT(msg(p), Catch::Contains("must not contain p"));
  p = params_for(6, 2, {});
  p.subset = {3, 3};
  CHECK_THAT(msg(p), Catch::Contains("distinct"));
  p = params_for(6, 2, {});
  p.subset = {1, 6};
  CHECK_THAT(msg(p), Catch::Contains("outside"));
  p = params_for(6, 2, rationals({"1", "2", "2"}));
  CHECK_THAT(msg(p), Catch::Contains("distinct"));
  p = params_for(6, 2, rationals({"1", "0", "2"}));
  CHECK_THAT(msg(p), Catch::Contains("not positive"));
  p = params_for(6, 2, rationals({"1", "2"}));
  CHECK_THAT(msg(p), Catch::Contains("m + 1 = 3"));
}

TEST_CASE("MPFR values convert to rationals exactly", "[hardness]") {
  ScopedPrecision precision(200);
  const Mpfr third = Mpfr(1) / 3;
  const Rational r = mpfr_to_rational(third);
  CHECK(r != R("1/3"));
  CHECK(abs(r - R("1/3")) < Rational(1) / Rational(boost::multiprecision::mpz_int(1) << 199));
  CHECK(mpfr_to_rational(Mpfr(-0.75)) == R("-3/4"));
  CHECK(mpfr_to_rational(Mpfr(0)) == 0);
  CHECK(mpfr_to_rational(ldexp(Mpfr(3), 70)) == Rational(boost::multiprecision::mpz_int(3) << 70));
}

TEST_CASE("conditioning study rows", "[hardness]") {
  const SqStudyRow lin = sq_study_row(QScheme::linear, sq_q_scheme(QScheme::linear, 3), 8, 32, 1, 1);
  REQUIRE(lin.ok);
  CHECK(lin.max_abs_w == Approx(514).epsilon(0.01));
  // 1/(1 + 4^3), exact as a rational and rounded to nearest (rational_to_double),
  // like the IEEE division 1.0 / 65: the same double, no tolerance.
  CHECK(lin.min_attention == 1.0 / 65);
  CHECK(lin.max_theta_norm == Approx(std::log(4.0) * std::sqrt(3.0) / 2));
  CHECK(lin.forward_max_diff <= lin.forward_max_bound);
  const SqStudyRow opt = sq_study_row(QScheme::optimized, sq_q_scheme(QScheme::optimized, 3), 8, 32, 1, 1);
  REQUIRE(opt.ok);
  CHECK(opt.sum_abs_w < lin.sum_abs_w);
  CHECK(opt.min_attention == Approx(lin.min_attention));   // same range [1, m + 1]
}

// --------------------------------------------------------------- the CLI

using mha::test::expect_bad_input;
using mha::test::Run;
using mha::test::slurp;
struct Sandbox : mha::test::Sandbox {
  Sandbox() : mha::test::Sandbox("mhalearn_hard_") {}
};

TEST_CASE("mhalearn hard writes a verified instance that the other commands read", "[hardness][cli]") {
  Sandbox s;
  const Run r = s.run("hard --d 5 --m 2 --threads 1 -o " + s.path("hard.json"));
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("equals the closed form: yes"));
  CHECK_THAT(r.out, Catch::Contains("C(4, 2) = 6"));
  const InstanceReadResult inst = read_instance(s.path("hard.json"));
  REQUIRE(inst.ok);
  CHECK(inst.instance.m() == 3);
  CHECK(nlohmann::json::parse(inst.instance.extensions_json).contains("sq_family"));
  const Run c = s.run("check --json " + s.path("hard.json"));
  REQUIRE(c.status == 0);
  const auto report = nlohmann::json::parse(c.out)["conditions"];
  CHECK(report["all_pass"] == false);
  const Run j = s.run("hard --d 12 --m 3 --q 1,3/2,5/2,4 --subset 2,5,7 --p 3 --q-out 11 --verify-samples 200 --mpfr-checks 3 --tolerance 0.01 --json");
  INFO(j.err);
  REQUIRE(j.status == 0);
  const auto jr = nlohmann::json::parse(j.out);
  CHECK(jr["verification"]["ok"] == true);
  CHECK(jr["verification"]["enumerated"] == false);
  CHECK(jr["verification"]["inputs"] == 200);
  CHECK(jr["sq"]["members"] == "165");   // C(11, 3)
  CHECK(jr["construction"]["S"] == nlohmann::json({2, 5, 7}));
  CHECK(jr["sq"]["gram"].is_null());
  // Same options, same bytes.
  REQUIRE(s.run("hard --d 5 --m 2 --threads 2 -o " + s.path("hard2.json")).status == 0);
  const auto a = nlohmann::json::parse(slurp(s.path("hard.json"))), b = nlohmann::json::parse(slurp(s.path("hard2.json")));
  CHECK(a["heads"] == b["heads"]);
  CHECK(a["extensions"] == b["extensions"]);
}

TEST_CASE("mhalearn hard refuses bad input with one line and status 2", "[hardness][cli]") {
  Sandbox s;
  expect_bad_input(s.run("hard --d 6 --m 0"), "--m: must be in 1..64, got 0");  // the one range of --m (its one declaration, src/commands/schema.hpp)
  expect_bad_input(s.run("hard --d 2 --m 2"), "d must be at least m + 1");
  expect_bad_input(s.run("hard --d 6 --m 2 --q 1,2,2"), "distinct");
  expect_bad_input(s.run("hard --d 6 --m 2 --q 1,2,1/2"), "singular");
  expect_bad_input(s.run("hard --d 6 --m 2 --q 1,-2,3"), "not positive");
  expect_bad_input(s.run("hard --d 6 --m 2 --q 1,x,3"), "not a rational");
  expect_bad_input(s.run("hard --d 6 --m 2 --q 1,2"), "m + 1 = 3");
  expect_bad_input(s.run("hard --d 6 --m 2 --p 1 --q-out 1"), "p and q_out must differ");
  expect_bad_input(s.run("hard --d 6 --m 2 --subset 0,2"), "must not contain p");
  expect_bad_input(s.run("hard --d 6 --m 2 --subset 1"), "must have m = 2");
  expect_bad_input(s.run("hard --d 6 --m 2 --subset 1,9"), "outside");
  expect_bad_input(s.run("hard --d 6 --m 2 --subset 1,b"), "not an integer");
  expect_bad_input(s.run("hard --d 6 --m 2 --tolerance 0"), "--tolerance");
  expect_bad_input(s.run("hard --d 6 --m 70"), "--m: must be in 1..64, got 70");
  expect_bad_input(s.run("hard --d 80 --m 64"), "at most 63");  // hard's own limit on top of it: m + 1 heads ≤ 64
  expect_bad_input(s.run("hard --m 2"), "--d and --m are required");
  CHECK_FALSE(fs::exists(s.path("never.json")));
}

TEST_CASE("sq_parameter_error_bound, sq_centred_target and parse_q_scheme on hand-computed inputs", "[hardness][hardening]") {
  // E = Σ_i (e^{2m·dθ_i} − 1)|ŵ_i| + |ŵ_i − w_i|, times kSqBoundEvaluationFactor:
  // m = 2, dθ = (¼, ⅛), |ŵ| = (3, ½), |Δw| = (½, 0): (e − 1)·3 + ½ + (e^{½} − 1)·½
  // = 5.9792061207272… times the factor 1 + 2⁻⁴⁰: 5.9792061207326378358 (mpmath, 60 digits).
  const double e = sq_parameter_error_bound(2, {0.25, 0.125}, {3.0, 0.5}, {0.5, 0.0});
  const double exact = 5.9792061207326378358;
  INFO("computed " << e << ", exact " << exact);
  CHECK(std::abs(e - exact) <= tolerance::gamma(20) * exact);
  // g_S(X) = (x_{1,p} − x_{0,p})·χ_S(x_0 ⊙ x_1): d = 3, p = 0, S = {1, 2}.
  SqFamilyParams p;
  p.d = 3;
  p.m = 2;
  p.p = 0;
  MatD x(2, 3);
  x << 1, 1, -1, -1, 1, 1;  // χ_S = (1·1)(−1·1) → −1; x_{1,0} − x_{0,0} = −2
  CHECK(sq_centred_target(p, {1, 2}, x) == 2);
  CHECK(sq_centred_target(p, {1}, x) == -2);
  x(1, 0) = 1;  // equal carried coordinates: 0 whatever χ_S
  CHECK(sq_centred_target(p, {1, 2}, x) == 0);
  for (QScheme s : {QScheme::linear, QScheme::geometric, QScheme::chebyshev, QScheme::optimized}) {
    QScheme parsed = QScheme::linear;
    CHECK(parse_q_scheme(to_string(s), parsed));
    CHECK(parsed == s);
  }
  QScheme untouched = QScheme::geometric;
  CHECK_FALSE(parse_q_scheme("Linear", untouched));
  CHECK(untouched == QScheme::geometric);
}
