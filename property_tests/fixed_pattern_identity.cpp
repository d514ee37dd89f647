// Claims (MATH.md §3, W-sum lemma, exact identities):
//   (1/k) E[Xᵀ J S X] = I_d   for any fixed row-stochastic k×k matrix S,
//   M(0) = I_d                since softmax(0) = J/k is such an S.
// Proof: proofs/stage1_identities.md. Checked exactly in rationals by
// enumeration; M(0) also through the MPFR softmax path, where it is exact up
// to the rounding of 1/k.
#include "data/population.hpp"
#include "numeric/precision.hpp"
#include "property.hpp"

using namespace mha;

TEST_CASE("(1/k) E[X^T J S X] = I for row-stochastic S", "[property][population]") {
  mha::test::property("random rational row-stochastic S, exhaustive enumeration", 60, [] {
    const int d = *rc::gen::inRange(1, 7).as("d");
    const int k = *rc::gen::inRange(1, std::min(d, 12 / d) + 1).as("k");
    Mat<Rational> s(k, k);
    for (int r = 0; r < k; ++r) {
      Rational total(0);
      for (int c = 0; c < k; ++c) total += s(r, c) = Rational(*rc::gen::inRange(0, 1000));
      if (total == 0) s(r, 0) = total = Rational(1);
      for (int c = 0; c < k; ++c) s(r, c) /= total;
    }
    RC_ASSERT(population_m_fixed_pattern<Rational>(s, d) == Mat<Rational>::Identity(d, d));
  });
}

TEST_CASE("M(0) = I", "[property][population]") {
  mha::test::property("exact in rationals (S = J/k) and through the MPFR softmax", 30, [] {
    const int d = *rc::gen::inRange(1, 7).as("d");
    const int k = *rc::gen::inRange(1, std::min(d, 12 / d) + 1).as("k");
    const Mat<Rational> uniform = Mat<Rational>::Constant(k, k, Rational(1) / Rational(k));
    RC_ASSERT(population_m_fixed_pattern<Rational>(uniform, d) == Mat<Rational>::Identity(d, d));
    ScopedPrecision precision(200);
    const Mat<Mpfr> m0 = population_m<Mpfr>(Mat<Mpfr>::Zero(d, d), k);
    // exp(0) = 1 and the sum k are exact; only 1/k rounds (relative 2^-200),
    // and the 2^{kd}·k² terms of each entry are summed with relative error ≤ n·2^-200.
    const double n = double(uint64_t{1} << (k * d)) * k * k;
    const double tol = (n + 4) * std::ldexp(1.0, -200) * 4;
    RC_ASSERT(to_double_matrix<Mpfr>(m0 - Mat<Mpfr>::Identity(d, d)).cwiseAbs().maxCoeff() <= tol);
  });
}
