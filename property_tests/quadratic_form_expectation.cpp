// Claim (MATH.md §3, stage 1): for uniform X in {±1}^{k×d} and any fixed k×k
// matrix A,  E[Xᵀ A X] = Tr(A) I_d  — exactly. Proof: proofs/stage1_identities.md.
// Checked in exact rational arithmetic by enumerating all 2^{kd} inputs.
// Test of the tester: an expectation enumerated over {0,1} inputs instead of
// {±1} is rejected.
#include "data/enumerate.hpp"
#include "data/population.hpp"
#include "property.hpp"

#include <functional>

using namespace mha;

namespace {

using QuadraticFormExpectation = std::function<Mat<Rational>(const Mat<Rational>&, int)>;

// Mistake: the inputs enumerated as bits X ∈ {0,1}^{k×d} instead of signs X ∈ {±1}^{k×d}.
Mat<Rational> expect_over_bits(const Mat<Rational>& a, int d) {
  const int k = static_cast<int>(a.rows());
  Mat<Rational> sum = Mat<Rational>::Zero(d, d);
  for_each_boolean_input<Rational>(k, d, [&](const Mat<Rational>& x) {
    const Mat<Rational> bits = (x + Mat<Rational>::Ones(k, d)) / Rational(2);
    sum += bits.transpose() * a * bits;
  });
  return sum / Rational(static_cast<unsigned long long>(uint64_t{1} << (k * d)));
}

auto trace_times_identity(const QuadraticFormExpectation& expectation) {
  return [expectation] {
    const int d = *rc::gen::inRange(1, 7).as("d");
    const int k = *rc::gen::inRange(1, std::min(d, 12 / d) + 1).as("k");
    Mat<Rational> a(k, k);
    for (int r = 0; r < k; ++r)
      for (int c = 0; c < k; ++c)
        a(r, c) = Rational(*rc::gen::inRange(-1000, 1001)) / Rational(*rc::gen::inRange(1, 97));
    const Mat<Rational> expected = Mat<Rational>::Identity(d, d) * a.trace();
    RC_ASSERT(expectation(a, d) == expected);
  };
}

}  // namespace

TEST_CASE("E[X^T A X] = Tr(A) I exactly", "[property][population]") {
  const QuadraticFormExpectation over_signs = [](const Mat<Rational>& a, int d) {
    return expect_xt_a_x<Rational>(a, d);
  };
  mha::test::property("rational A, exhaustive enumeration, k*d <= 12", 60, trace_times_identity(over_signs));
}

TEST_CASE("test of the tester: E[X^T A X] = Tr(A) I rejects {0,1} inputs", "[property][population][tester]") {
  mha::test::property_rejects("expectation over {0,1} inputs", 10, trace_times_identity(expect_over_bits));
}
