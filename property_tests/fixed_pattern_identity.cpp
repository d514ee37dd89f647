// Claims (MATH.md §3, W-sum lemma, exact identities):
//   (1/k) E[Xᵀ J S X] = I_d   for any fixed row-stochastic k×k matrix S,
//   M(0) = I_d                since softmax(0) = J/k is such an S.
// Proof: proofs/stage1_identities.md. Checked exactly in rationals by
// enumeration; M(0) also through the MPFR softmax path, where it is exact up
// to the rounding of 1/k. Test of the tester: the fixed pattern computed
// without J (E[XᵀSX]/k) is rejected by both properties, and M(0) through an
// unnormalised softmax (S = J) by the second.
#include "data/enumerate.hpp"
#include "data/population.hpp"
#include "numeric/precision.hpp"
#include "property.hpp"

#include <functional>

using namespace mha;

namespace {

using FixedPatternM = std::function<Mat<Rational>(const Mat<Rational>&, int)>;
using PopulationM = std::function<Mat<Mpfr>(const Mat<Mpfr>&, int)>;

const FixedPatternM fixed_pattern_m = [](const Mat<Rational>& s, int d) {
  return population_m_fixed_pattern<Rational>(s, d);
};
const PopulationM population_m_mpfr = [](const Mat<Mpfr>& theta, int k) { return population_m<Mpfr>(theta, k); };

// Mistake: J left out, (1/k) E[Xᵀ S X] = Tr(S)/k · I.
Mat<Rational> fixed_pattern_without_j(const Mat<Rational>& s, int d) {
  return expect_xt_a_x<Rational>(s, d) / Rational(static_cast<int>(s.rows()));
}

// Mistake: the softmax not normalised, exp(XΘXᵀ) in place of softmax(XΘXᵀ) (S = J at Θ = 0).
Mat<Mpfr> population_m_unnormalised(const Mat<Mpfr>& theta, int k) {
  const int d = static_cast<int>(theta.rows());
  Mat<Mpfr> sum = Mat<Mpfr>::Zero(d, d);
  for_each_boolean_input<Mpfr>(k, d, [&](const Mat<Mpfr>& x) {
    const Mat<Mpfr> weights = Mat<Mpfr>(x * theta * x.transpose()).unaryExpr([](const Mpfr& l) { return exp_of(l); });
    sum += x.transpose() * Mat<Mpfr>::Ones(k, k) * weights * x;
  });
  return sum / Mpfr(static_cast<double>(uint64_t{1} << (k * d))) / Mpfr(k);
}

auto identity_for_any_pattern(const FixedPatternM& fixed_pattern) {
  return [fixed_pattern] {
    const int d = *rc::gen::inRange(1, 7).as("d");
    const int k = *rc::gen::inRange(1, std::min(d, 12 / d) + 1).as("k");
    Mat<Rational> s(k, k);
    for (int r = 0; r < k; ++r) {
      Rational total(0);
      for (int c = 0; c < k; ++c) total += s(r, c) = Rational(*rc::gen::inRange(0, 1000));
      if (total == 0) s(r, 0) = total = Rational(1);
      for (int c = 0; c < k; ++c) s(r, c) /= total;
    }
    RC_ASSERT(fixed_pattern(s, d) == Mat<Rational>::Identity(d, d));
  };
}

auto m_at_zero_is_identity(const FixedPatternM& fixed_pattern, const PopulationM& m_of) {
  return [fixed_pattern, m_of] {
    const int d = *rc::gen::inRange(1, 7).as("d");
    const int k = *rc::gen::inRange(1, std::min(d, 12 / d) + 1).as("k");
    const Mat<Rational> uniform = Mat<Rational>::Constant(k, k, Rational(1) / Rational(k));
    RC_ASSERT(fixed_pattern(uniform, d) == Mat<Rational>::Identity(d, d));
    ScopedPrecision precision(200);
    const Mat<Mpfr> m0 = m_of(Mat<Mpfr>::Zero(d, d), k);
    // exp(0) = 1 and the sum k are exact; only 1/k rounds (relative 2^-200),
    // and the 2^{kd}·k² terms of each entry are summed with relative error ≤ n·2^-200.
    const double n = double(uint64_t{1} << (k * d)) * k * k;
    const double tol = (n + 4) * std::ldexp(1.0, -200) * 4;
    RC_ASSERT(to_double_matrix<Mpfr>(m0 - Mat<Mpfr>::Identity(d, d)).cwiseAbs().maxCoeff() <= tol);
  };
}

}  // namespace

TEST_CASE("(1/k) E[X^T J S X] = I for row-stochastic S", "[property][population]") {
  mha::test::property("random rational row-stochastic S, exhaustive enumeration", 60,
                      identity_for_any_pattern(fixed_pattern_m));
}

TEST_CASE("M(0) = I", "[property][population]") {
  mha::test::property("exact in rationals (S = J/k) and through the MPFR softmax", 30,
                      m_at_zero_is_identity(fixed_pattern_m, population_m_mpfr));
}

TEST_CASE("test of the tester: the fixed-pattern identities reject a missing J and an unnormalised softmax",
          "[property][population][tester]") {
  mha::test::property_rejects("(1/k) E[X^T S X] for row-stochastic S", 40,
                              identity_for_any_pattern(fixed_pattern_without_j));
  mha::test::property_rejects("M(0) with S = J/k but without J", 40,
                              m_at_zero_is_identity(fixed_pattern_without_j, population_m_mpfr));
  mha::test::property_rejects("M(0) through an unnormalised softmax", 40,
                              m_at_zero_is_identity(fixed_pattern_m, population_m_unnormalised));
}
