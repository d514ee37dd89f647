// Claim (MATH.md §3, stage 1): for uniform X in {±1}^{k×d} and any fixed k×k
// matrix A,  E[Xᵀ A X] = Tr(A) I_d  — exactly. Proof: proofs/stage1_identities.md.
// Checked in exact rational arithmetic by enumerating all 2^{kd} inputs.
#include "data/population.hpp"
#include "property.hpp"

using namespace mha;

TEST_CASE("E[X^T A X] = Tr(A) I exactly", "[property][population]") {
  mha::test::property("rational A, exhaustive enumeration, k*d <= 12", 60, [] {
    const int d = *rc::gen::inRange(1, 7).as("d");
    const int k = *rc::gen::inRange(1, std::min(d, 12 / d) + 1).as("k");
    Mat<Rational> a(k, k);
    for (int r = 0; r < k; ++r)
      for (int c = 0; c < k; ++c)
        a(r, c) = Rational(*rc::gen::inRange(-1000, 1001)) / Rational(*rc::gen::inRange(1, 97));
    const Mat<Rational> expected = Mat<Rational>::Identity(d, d) * a.trace();
    RC_ASSERT(expect_xt_a_x<Rational>(a, d) == expected);
  });
}
