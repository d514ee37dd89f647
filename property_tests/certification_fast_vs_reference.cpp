// Cross-check of stage-2 certification: the fast path (double, normal
// equations, labels from the fast forward pass) against the reference (MPFR,
// Householder QR, labels from the MPFR forward pass). Tolerance, derived in
// proofs/certification.md: since (B Bᵀ) v* = B y_aᵀ for the exact data,
//   ‖v_fast − v*‖ ≤ Δ := ‖B (Bᵀ v_fast − y_aᵀ)‖ / σ_min(B)²   (evaluated in MPFR),
// the 200-bit reference is within 2^-100 (1 + ‖v*‖) of v*, and the slab centre
// ln(v_j/v_a) moves by at most Δ'/(v_j − Δ') + Δ'/(v_a − Δ') + 4u|b|, Δ' = Δ + 2^-100(1 + ‖v*‖).
// Residual: |ρ_fast − ρ*| ≤ ‖y_fast,a − y_a‖ + σ_max(B)Δ + ‖v_fast‖‖B_fast − B‖_F
//   + γ_{k+d+1}(‖y_fast,a‖ + ‖v_fast‖‖B_fast‖_F), with ‖y_fast − y‖ from forward_error_bound,
// |B_fast − B| ≤ γ_d |X||Ŵ| entrywise, and ‖B‖ ≤ ‖B_fast‖_F + ‖B_fast − B‖_F.
#include "generators.hpp"
#include "model/forward_error.hpp"
#include "model/forward_fast.hpp"
#include "property.hpp"
#include "stages/certify.hpp"
#include "stages/certify_reference.hpp"

#include <cmath>

using namespace mha;

TEST_CASE("certification: fast agrees with the reference within the a posteriori bound", "[property][certification]") {
  mha::test::property("v_hat, and slab centres ln(v_j/v_a), fast vs MPFR", 100, [] {
    auto c = *test::gen_layer_case(4, 16, 3).as("case");
    c.shape.d = std::max(c.shape.d, 3);
    c.shape.k = std::max(c.shape.k, 2);
    const Layer layer = test::make_layer(c);
    const int k = c.shape.k, d = c.shape.d;
    const MatD x = test::make_input(c, InputKind::boolean, *rc::gen::inRange(0, 1000));
    RC_PRE(tokens_distinct(x));  // d ≥ 3, k ≤ 4: distinct with probability ≥ 1 − 6/8
    const MatD w_hat = layer.w_sum();
    MatD y(k, d);
    std::vector<double> scratch;
    RC_ASSERT(FastForward(layer).forward_dense(x.data(), k, y.data(), scratch));
    const MatD b = x * w_hat;
    CertifyOptions o;
    for (int a = 0; a < k; ++a) {
      const RowCertificate fast = certify_row_fast(x, y, b, a, o);
      if (fast.verdict == RowVerdict::rank_deficient) continue;
      const ReferenceRow ref = certify_row_reference(layer, x, w_hat, a, 200);
      const double delta = fast_solution_error_bound(layer, x, w_hat, a, fast.v, 200) +
                           std::ldexp(1.0 + ref.v.norm(), -100);
      RC_ASSERT((fast.v - ref.v).norm() <= delta * (1 + 0x1p-50) + 0x1p-53 * ref.v.norm());
      {
        const double u = 0x1p-53, gd = d * u / (1 - d * u), gr = (k + d + 1) * u / (1 - (k + d + 1) * u);
        const double y_err = forward_error_bound(layer, x).row(a).norm();
        const double b_err = gd * (x.cwiseAbs() * w_hat.cwiseAbs()).norm();
        const double b_norm = b.norm() + b_err;
        const double residual_tol = y_err + b_norm * delta + fast.v.norm() * b_err +
                                    gr * (y.row(a).norm() + fast.v.norm() * b.norm()) + std::ldexp(1.0 + ref.residual, -100);
        RC_ASSERT(std::abs(fast.residual - ref.residual) <= residual_tol * (1 + 0x1p-50) + u * ref.residual);
      }
      for (int j = 0; j < k; ++j) {
        if (j == a || !(ref.v(j) > 2 * delta && ref.v(a) > 2 * delta)) continue;
        const double bf = std::log(fast.v(j) / fast.v(a)), br = std::log(ref.v(j) / ref.v(a));
        const double tol = delta / (ref.v(j) - delta) + delta / (ref.v(a) - delta) + 8 * 0x1p-53 * (1 + std::abs(br));
        RC_ASSERT(std::abs(bf - br) <= tol * (1 + 0x1p-50));
      }
    }
  });
}
