// Affine containment (MATH.md §3, stage 2), in the corrected form of
// proofs/certification.md: for a certified row with the lemma's slab widths
// η_j(δ), δ the certification bound computed with the truth,
//   every convex combination Σλ_iΘ_i (λ ≥ 0, Σλ = 1) lies in every slab, and
//   every affine combination with negative mass N = Σ_{λ_i<0}|λ_i| lies in the
//   slab widened to (1 + 2N)η_j.
// MATH.md's unwidened affine statement is false in general (the finding).
#include "generators.hpp"
#include "model/forward_reference.hpp"
#include "property.hpp"
#include "stages/certify.hpp"
#include "stages/certify_reference.hpp"

#include <cmath>

using namespace mha;

TEST_CASE("affine combinations of the heads lie in the (widened) slabs", "[property][certification]") {
  mha::test::property("convex combinations in eta, affine ones in (1 + 2N) eta", 60, [] {
    const int d = *rc::gen::inRange(4, 11).as("d");
    const int m = *rc::gen::inRange(2, 4).as("m");
    const int k = 2;
    RC_PRE(k * m <= d);
    test::LayerCase c;
    c.shape = {k, d, m};
    c.scale = *rc::gen::element(1.0, 3.0).as("scale");
    c.seed = *rc::gen::arbitrary<uint64_t>().as("seed");
    Layer layer = test::make_layer(c);
    // Nearly coincident heads so that rows certify.
    const double epsilon = *rc::gen::element(1e-6, 1e-3, 1e-2).as("head spread");
    for (int i = 1; i < m; ++i) layer.heads[i].theta = layer.heads[0].theta + epsilon * layer.heads[i].theta;
    const MatD x = test::make_input(c, InputKind::boolean, *rc::gen::inRange(0, 1000));
    RC_PRE(tokens_distinct(x));
    const int a = *rc::gen::inRange(0, k).as("row");
    const LemmaQuantities q = certification_lemma(layer, x, layer.w_sum(), a, 200);
    RC_PRE(q.sigma_min_c > std::ldexp(q.c_matrix_norm, -100));
    const int j = 1 - a;
    const double eta = slab_half_width(q.v(j), q.v(a), q.bound * (1 + 0x1p-50));
    RC_PRE(std::isfinite(eta));
    const double b = std::log(q.v(j) / q.v(a));
    // Random weights: λ_i = w_i / Σ w with w_i ∈ [−2, 3] (affine) or [0, 1] (convex).
    for (bool convex : {true, false}) {
      std::vector<double> w(m);
      double total = 0;
      for (int i = 0; i < m; ++i) total += w[i] = (convex ? 0.0 : -2.0) + *rc::gen::inRange(1, 1001) / 1000.0 * (convex ? 1.0 : 5.0);
      RC_PRE(std::abs(total) > 0.1);
      double value = 0, negative = 0;
      for (int i = 0; i < m; ++i) {
        const double lambda = w[i] / total;
        value += lambda * q.head_logit_differences[i][j];
        negative += std::max(0.0, -lambda);
      }
      // Rounding: the logit differences and b carry one rounding each, the
      // weighted sum m more: 8(m + 2)·2^-53·(1 + Σ|λ||ℓ| + |b|).
      double magnitude = std::abs(b) + 1;
      for (int i = 0; i < m; ++i) magnitude += std::abs(w[i] / total * q.head_logit_differences[i][j]);
      const double rounding = 8 * (m + 2) * 0x1p-53 * magnitude;
      RC_ASSERT(std::abs(value - b) <= (1 + 2 * negative) * eta + rounding);
      if (convex) RC_ASSERT(negative == 0.0);
    }
  });
}
