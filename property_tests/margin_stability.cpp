// Margin stability (MATH.md §3, stage 3; proofs/margin_stability.md): if logit
// vectors ℓ, ℓ' in R^k have the same argmax and both margins (top minus
// runner-up) are at least M, then
//   ‖softmax(ℓ) − softmax(ℓ')‖₁ ≤ 4(k−1)e^{−M},
// whatever the logits' size. Checked in MPFR with enough bits to resolve
// e^{−M} for M up to 600 and logits up to 1e6, where double sees 0.
#include "numeric/multiprecision.hpp"
#include "numeric/precision.hpp"
#include "numeric/softmax.hpp"
#include "property.hpp"

#include <cmath>

using namespace mha;

TEST_CASE("margin stability: same argmax and margins >= M give l1 distance <= 4(k-1)e^-M", "[property][margin]") {
  mha::test::property("MPFR, M up to 600, logits up to 1e6", 150, [] {
    const int k = *rc::gen::inRange(2, 9).as("k");
    const double margin = *rc::gen::inRange(0, 601).as("M");
    const int top = *rc::gen::inRange(0, k).as("argmax");
    // Enough bits that e^{-M}·2^{-60} is still resolved next to 1: M/ln 2 + 128.
    const unsigned bits = 128 + static_cast<unsigned>(margin / std::log(2.0)) + 64;
    ScopedPrecision precision(bits);
    auto make = [&](double top_value) {
      Mat<Mpfr> l(1, k);
      for (int b = 0; b < k; ++b) {
        // Runner-ups sit exactly M below (the worst case) or further, by up to 1e6.
        const double extra = *rc::gen::element(0.0, 0.0, 0.5, 37.25, 1e3, 1e6);
        l(0, b) = b == top ? Mpfr(top_value) : Mpfr(top_value) - Mpfr(margin) - Mpfr(extra);
      }
      return l;
    };
    const Mat<Mpfr> a = make(*rc::gen::element(0.0, 100.0, -5e5, 1e6).as("top logit of l"));
    const Mat<Mpfr> b = make(*rc::gen::element(0.0, 2.0, 3e5, -1e6).as("top logit of l'"));
    const Mat<Mpfr> sa = softmax_rows<Mpfr>(a), sb = softmax_rows<Mpfr>(b);
    Mpfr l1(0);
    for (int j = 0; j < k; ++j) l1 += abs(Mpfr(sa(0, j) - sb(0, j)));
    const Mpfr bound = Mpfr(4 * (k - 1)) * exp(Mpfr(-margin));
    // Softmax in MPFR at `bits` has relative error ≤ (k + 4)·2^-bits per entry,
    // so the computed ℓ1 distance may exceed the exact one by 2(k + 4)·2^-bits.
    const Mpfr rounding = ldexp(Mpfr(2 * (k + 4)), -static_cast<int>(bits));
    RC_ASSERT(l1 <= bound + rounding);
    // The bound is not vacuous: in the worst case it is tight within a factor 2.
    RC_CLASSIFY(margin > 40, "M > 40: double cannot resolve the difference");
  });
}
