#include "generators.hpp"
#include "model/forward_fast.hpp"
#include "model/forward_reference.hpp"
#include "stages/certify.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace mha;

namespace {
MatD labels(const Layer& layer, const MatD& x) { return forward_mpfr(layer, x, 200); }

MatD distinct_input(int k, int d, uint64_t seed) {
  test::LayerCase c;
  c.shape = {k, d, 1};
  c.seed = seed;
  for (uint64_t n = 0;; ++n) {
    MatD x = test::make_input(c, InputKind::boolean, n);
    if (tokens_distinct(x)) return x;
  }
}
}  // namespace

TEST_CASE("identical heads certify every row exactly", "[certify]") {
  test::LayerCase c;
  c.shape = {3, 8, 2};
  c.scale = 2;
  c.seed = 4;
  Layer layer = test::make_layer(c);
  layer.heads[1].theta = layer.heads[0].theta;  // same attention, different W
  const MatD x = distinct_input(3, 8, 1);
  const MatD y = labels(layer, x);
  const MatD b = x * layer.w_sum();
  CertifyOptions o;
  o.v_min = 0.0;
  for (int a = 0; a < 3; ++a) {
    const RowCertificate cert = certify_row_fast(x, y, b, a, o);
    CHECK(cert.verdict == RowVerdict::certified);
    CHECK(cert.relative_residual < 1e-12);
    // v̂ is the common attention row.
    const MatD logits = x * layer.heads[0].theta * x.transpose();
    RowVec<double> att = (logits.row(a).array() - logits.row(a).maxCoeff()).exp();
    att /= att.sum();
    CHECK((cert.v - att).cwiseAbs().maxCoeff() < 1e-10);
    // Slab centres are the logit differences ⟨x_aᵀ(x_j − x_a), Θ⟩.
    for (const SlabConstraint& s : slabs_of_row(x, a, cert)) {
      const Eigen::Map<const RowVec<double>> vec_theta(layer.heads[0].theta.data(), 64);
      const double ell = Eigen::Map<const RowVec<double>>(s.a.data(), 64).dot(vec_theta);
      CHECK(std::abs(ell - s.b) < 1e-9);
      CHECK(ell == Approx(logits(a, s.other) - logits(a, a)).margin(1e-12));
    }
  }
}

TEST_CASE("rows that must not certify are rejected with the reason", "[certify]") {
  test::LayerCase c;
  c.shape = {2, 8, 2};
  c.scale = 3;
  c.seed = 7;
  const Layer layer = test::make_layer(c);
  const MatD b_of = layer.w_sum();
  CertifyOptions o;
  MatD dup(2, 8);
  dup.row(0) = distinct_input(2, 8, 3).row(0);
  dup.row(1) = dup.row(0);
  CHECK(certify_row_fast(dup, labels(layer, dup), dup * b_of, 0, o).verdict == RowVerdict::duplicate_tokens);
  // Independent heads at logit scale 3 almost never attend alike: large residual.
  int large = 0;
  for (uint64_t s = 0; s < 20; ++s) {
    const MatD x = distinct_input(2, 8, 100 + s);
    large += certify_row_fast(x, labels(layer, x), x * b_of, 0, o).verdict == RowVerdict::residual_too_large;
  }
  CHECK(large >= 15);
  // One-hot attention (logit scale 1e3, identical heads): below v_min.
  test::LayerCase hard = c;
  hard.scale = 1e3;
  Layer one_hot = test::make_layer(hard);
  one_hot.heads[1].theta = one_hot.heads[0].theta;
  const MatD x = distinct_input(2, 8, 9);
  CHECK(certify_row_fast(x, labels(one_hot, x), x * one_hot.w_sum(), 0, o).verdict == RowVerdict::below_v_min);
}

TEST_CASE("finding: affine combinations need slabs widened by (1 + 2N)", "[certify][finding]") {
  // A slab |⟨a,Θ⟩ − b| ≤ η that both heads satisfy, with values b ± 0.9η.
  const double eta = 0.1, b = 0.3;
  const double e1 = 0.9 * eta, e2 = -0.9 * eta;
  // Convex combinations stay inside.
  for (double lambda = 0; lambda <= 1.0; lambda += 0.125) CHECK(std::abs(lambda * e1 + (1 - lambda) * e2) <= eta);
  // λ = (2, −1): inside the affine hull, outside the slab (MATH.md's claim as written fails) …
  const double affine = 2 * e1 - 1 * e2;
  CHECK(std::abs(affine) > eta);
  // … but inside the slab widened by (1 + 2N), N = 1 the negative mass.
  CHECK(std::abs(affine) <= (1 + 2 * 1.0) * eta);
  (void)b;
}

TEST_CASE("slab half-width matches the corollary", "[certify]") {
  CHECK(slab_half_width(0.5, 0.5, 0.0) == 0.0);
  CHECK(slab_half_width(0.3, 0.6, 0.01) == Approx(std::log(0.3 / 0.29) + std::log(0.6 / 0.59)).epsilon(1e-14));
  CHECK(std::isinf(slab_half_width(0.01, 0.6, 0.02)));
}
