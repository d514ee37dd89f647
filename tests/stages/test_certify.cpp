#include "test_tolerances.hpp"
#include "generators.hpp"
#include "model/forward_fast.hpp"
#include "model/forward_reference.hpp"
#include "model/reference.hpp"
#include "numeric/precision.hpp"
#include "stages/stage2/certify.hpp"
#include "stages/stage2/certify_reference.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

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
  // Rounding bounds (tolerance.hpp). The labels are the 200-bit forward pass rounded
  // to double, y_a = fl(v° X W_Σ) with v° the exact common attention row (‖v°‖ ≤ 1);
  // B = X fl(W_1 + W_2) in double is within γ_{d+1} |X|(|W_1| + |W_2|) of X W_Σ. So
  // ‖y_a − v°B‖ ≤ ρ° = (u + γ_{10⁶}(2⁻²⁰⁰))‖y_a‖ + γ_{d+1} ‖|X|(|W_1| + |W_2|)‖_F,
  // the least-squares v* is within ρ°/σ_min(B) of v°, the fast v̂ within
  // certification_solution_bound of v*, and its residual within
  // certification_residual_bound of ρ(v*) ≤ ρ°. σ_min(B) from JacobiSVD of Bᵀ,
  // lowered by jacobi_singular_value_bound.
  const int k = 3, d = 8;
  const Eigen::JacobiSVD<MatD> svd(b.transpose());
  const double s_max = svd.singularValues()(0);
  const double sigma_min = svd.singularValues()(k - 1) - tolerance::jacobi_singular_value_bound(d, k) * s_max;
  REQUIRE(sigma_min > 0);
  const double b_fro = b.norm() * tolerance::bound_evaluation_factor(k * d + 1);
  const double b_rounding = tolerance::gamma(d + 1) *
                            (x.cwiseAbs() * (layer.heads[0].w.cwiseAbs() + layer.heads[1].w.cwiseAbs())).norm() *
                            tolerance::bound_evaluation_factor(2 * k * d + d + 2);
  for (int a = 0; a < 3; ++a) {
    const RowCertificate cert = certify_row_fast(x, y, b, a, o);
    CHECK(cert.verdict == RowVerdict::certified);
    const double y_norm = y.row(a).norm();
    const double y_norm_high = y_norm * tolerance::bound_evaluation_factor(d + 1);
    const double rho0 = ((tolerance::kDoubleUnitRoundoff + tolerance::reference_relative_error(200, 1000000)) *
                             y_norm_high + b_rounding) * tolerance::bound_evaluation_factor(4);
    const double v_norm = 1 + rho0 / sigma_min;
    const double dv = tolerance::certification_solution_bound(b_fro, sigma_min, y_norm_high, v_norm, k, d);
    const double rho_high = rho0 + tolerance::certification_residual_bound(b_fro, y_norm_high, v_norm, rho0, dv, k, d);
    // relative_residual = fl(ρ̂ / fl(‖y_a‖)): the computed norm is ≥ (1 − γ_{d+1})‖y_a‖,
    // one more rounding for the division.
    CHECK(cert.relative_residual <= rho_high / (y_norm * (1 - tolerance::gamma(d + 2))) * tolerance::bound_evaluation_factor(2));
    // v̂ is the common attention row; the double softmax att of the double logits
    // x Θ xᵀ (within γ_{2d}|x||Θ||x|ᵀ, Higham (3.13)) is within
    // double_softmax_relative_error of it.
    const MatD logits = x * layer.heads[0].theta * x.transpose();
    RowVec<double> att = (logits.row(a).array() - logits.row(a).maxCoeff()).exp();
    att /= att.sum();
    const double logit_size = (x.cwiseAbs() * layer.heads[0].theta.cwiseAbs() * x.cwiseAbs().transpose()).row(a).maxCoeff();
    const double logit_error = tolerance::gamma(2 * d) * logit_size * tolerance::bound_evaluation_factor(2 * d + 2);
    const double softmax_error = tolerance::double_softmax_relative_error(
        logit_error, logits.row(a).maxCoeff() - logits.row(a).minCoeff(), k);
    const double v_bound = (dv + rho0 / sigma_min + softmax_error) * tolerance::bound_evaluation_factor(3);
    INFO("v̂ against att: bound " << v_bound << " (solution " << dv << ", least squares " << rho0 / sigma_min
                                  << ", softmax " << softmax_error << ")");
    CHECK((cert.v - att).cwiseAbs().maxCoeff() <= v_bound);
    // Slab centres are the logit differences ⟨x_aᵀ(x_j − x_a), Θ⟩. b = ln(v̂_j/v̂_a)
    // in double (4u(1 + |b|), as in property_tests/certification_no_false_positives.cpp)
    // and ln(v°_j/v°_a) = ℓ_j − ℓ_a exactly, each v̂ within Δv = dv + ρ°/σ_min of v°:
    // |ln v̂_b − ln v°_b| ≤ −log1p(−Δv/v°_b). ell, the 64-term dot product with ±2/0
    // entries of a (exact), is within γ_{d²}Σ|a||Θ| of ℓ_j − ℓ_a; the double logits
    // each within γ_{2d}(|x||Θ||x|ᵀ), their difference one more rounding.
    const double dv_total = dv + rho0 / sigma_min;
    const MatD logit_sizes = x.cwiseAbs() * layer.heads[0].theta.cwiseAbs() * x.cwiseAbs().transpose();
    for (const SlabConstraint& s : slabs_of_row(x, a, cert)) {
      const Eigen::Map<const RowVec<double>> vec_theta(layer.heads[0].theta.data(), 64);
      const double ell = Eigen::Map<const RowVec<double>>(s.a.data(), 64).dot(vec_theta);
      const double ell_size = Eigen::Map<const RowVec<double>>(s.a.data(), 64).cwiseAbs().dot(vec_theta.cwiseAbs());
      const double ell_error = tolerance::gamma(d * d) * ell_size * tolerance::bound_evaluation_factor(d * d + 1);
      const double v_low_j = att(s.other) * (1 - softmax_error) - dv_total, v_low_a = att(a) * (1 - softmax_error) - dv_total;
      REQUIRE(std::min(v_low_j, v_low_a) > dv_total);
      const double centre_error =
          (-std::log1p(-dv_total / v_low_j) - std::log1p(-dv_total / v_low_a) +
           4 * tolerance::kDoubleUnitRoundoff * (1 + std::abs(s.b)) + ell_error) * tolerance::bound_evaluation_factor(6);
      CHECK(std::abs(ell - s.b) <= centre_error);
      const double difference = logits(a, s.other) - logits(a, a);
      const double logits_error = (tolerance::gamma(2 * d) * (logit_sizes(a, s.other) + logit_sizes(a, a)) +
                                   tolerance::kDoubleUnitRoundoff * std::abs(difference) + ell_error) *
                                  tolerance::bound_evaluation_factor(2 * d + 4);
      CHECK(std::abs(ell - difference) <= logits_error);
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
  // A row certified with the truth (certification_lemma in MPFR: δ from the
  // residual and σ_min(C)), its slab from slabs_of_row, and two nearly coincident
  // heads: both heads lie in the slab (the lemma), every convex combination too,
  // but the affine combination (1 + N)Θ_hi − NΘ_lo leaves the slab once
  // N(e_hi − e_lo) > 2η, e_i = ⟨a, Θ_i⟩ − b — MATH.md's claim as written fails —
  // while it stays inside the widened (1 + 2N)η (proofs/certification.md).
  test::LayerCase c;
  c.shape = {2, 6, 2};
  c.scale = 2;
  c.seed = 11;
  Layer layer = test::make_layer(c);
  layer.heads[1].theta = layer.heads[0].theta + 1e-3 * layer.heads[1].theta;
  const MatD x = distinct_input(2, 6, 5);
  const int a = 0;
  const LemmaQuantities q = certification_lemma(layer, x, layer.w_sum(), a, 200);
  REQUIRE(q.sigma_min_c > 0);
  RowCertificate cert;
  cert.verdict = RowVerdict::certified;
  cert.v = q.v;
  cert.delta = q.bound * tolerance::bound_evaluation_factor(1);  // the MPFR bound rounded once to double
  cert.partners = all_partners(2, a);
  const std::vector<SlabConstraint> slabs = slabs_of_row(x, a, cert);
  REQUIRE(slabs.size() == 1);
  const SlabConstraint& s = slabs[0];
  REQUIRE(std::isfinite(s.eta));
  const int d = c.shape.d;
  // ⟨a, vec Θ⟩ − b in double; its rounding is γ_{d²}Σ|a||Θ| + 4u(1 + |b|) (as in
  // property_tests/certification_no_false_positives.cpp), below 1e-12 here.
  auto offset = [&](const MatD& theta, double& rounding) {
    double value = 0, size = 0;
    for (int r = 0; r < d; ++r)
      for (int col = 0; col < d; ++col) {
        value += s.a[r * d + col] * theta(r, col);
        size += std::abs(s.a[r * d + col] * theta(r, col));
      }
    const double u = tolerance::kDoubleUnitRoundoff, gamma = tolerance::gamma(d * d + 2);
    rounding = gamma * size + 4 * u * (1 + std::abs(s.b));
    return value - s.b;
  };
  double r0, r1;
  const double e0 = offset(layer.heads[0].theta, r0), e1 = offset(layer.heads[1].theta, r1);
  INFO("eta = " << s.eta << ", e = (" << e0 << ", " << e1 << ")");
  CHECK(std::abs(e0) <= s.eta + r0);
  CHECK(std::abs(e1) <= s.eta + r1);
  const int hi = e0 >= e1 ? 0 : 1, lo = 1 - hi;
  const double spread = std::abs(e0 - e1);
  REQUIRE(spread > 0);
  for (double lambda = 0; lambda <= 1.0; lambda += 0.125) {
    double r;
    const double e = offset(lambda * layer.heads[0].theta + (1 - lambda) * layer.heads[1].theta, r);
    CHECK(std::abs(e) <= s.eta + r);
  }
  // N = 4η/spread: N·spread = 4η, so |e| ≥ 4η − η = 3η > η.
  const double n = 4 * s.eta / spread;
  double r;
  const double e = offset((1 + n) * layer.heads[hi].theta - n * layer.heads[lo].theta, r);
  INFO("N = " << n << ", affine offset " << e);
  CHECK(std::abs(e) > s.eta + r);                // outside the slab: the finding
  CHECK(std::abs(e) <= (1 + 2 * n) * s.eta + r);  // inside the widened slab
}

TEST_CASE("slab half-width matches the corollary", "[certify]") {
  CHECK(slab_half_width(0.5, 0.5, 0.0) == 0.0);
  CHECK(slab_half_width(0.3, 0.6, 0.01) == Approx(std::log(0.3 / 0.29) + std::log(0.6 / 0.59)).epsilon(1e-14));
  CHECK(std::isinf(slab_half_width(0.01, 0.6, 0.02)));
}

TEST_CASE("certify_row_reference: one head with Ŵ = W gives v = the attention row and residual 0", "[certify][hardening]") {
  // y_a = A[a,:] X W exactly (the labels are recomputed in MPFR), B = X W: the
  // least squares has the exact solution v = A[a,:] and residual 0, so the
  // 200-bit answer rounded to double is the attention row rounded to double.
  test::LayerCase c;
  c.shape = {3, 8, 1};
  c.scale = 2;
  c.seed = 9;
  const Layer layer = test::make_layer(c);
  const MatD x = distinct_input(3, 8, 2);
  const MatD b = x * layer.heads[0].w;
  const Eigen::JacobiSVD<MatD> svd(b.transpose());
  const double kappa = svd.singularValues()(0) / svd.singularValues()(2);
  REQUIRE(std::isfinite(kappa));
  MatD attention_rows;
  {
    ScopedPrecision precision(200);
    attention_rows = to_double_matrix<Mpfr>(attention<Mpfr>(cast_matrix<Mpfr>(layer.heads[0].theta), cast_matrix<Mpfr>(x)));
  }
  for (int a = 0; a < 3; ++a) {
    const ReferenceRow r = certify_row_reference(layer, x, layer.heads[0].w, a, 200);
    for (int j = 0; j < 3; ++j)
      CHECK(std::abs(r.v(j) - attention_rows(a, j)) <=
            tolerance::reference_in_double_relative(200, 1000000) * std::abs(attention_rows(a, j)));
    // The residual of an exactly solvable least squares at 200 bits: κ(B) times
    // the reference's relative error.
    CHECK(r.relative_residual <= 10 * kappa * tolerance::reference_relative_error(200, 1000000));
  }
  // With Ŵ = 2W the same row solves it with v = A[a,:]/2.
  const ReferenceRow half = certify_row_reference(layer, x, 2 * layer.heads[0].w, 0, 200);
  for (int j = 0; j < 3; ++j)
    CHECK(std::abs(half.v(j) - attention_rows(0, j) / 2) <=
          tolerance::reference_in_double_relative(200, 1000000) * std::abs(attention_rows(0, j) / 2));
}

namespace {
// A row whose least squares is exact in double: B = [I₂ 0] (k = 2, d = 3), so
// BBᵀ = I, v̂ = (y₁, y₂) and ρ = |y₃|. With y_a = (½, ½, 2⁻⁷) every quantity is
// a power of two: v̂ = (½, ½), ρ = 2⁻⁷, ‖y_a‖ = √(½ + 2⁻¹⁴).
struct ExactRow {
  MatD x, y, b;
};

ExactRow exact_row(double v0, double v1, double r) {
  ExactRow e{MatD(2, 3), MatD(2, 3), MatD::Zero(2, 3)};
  e.x << 2, 0, 0, 0, 2, 0;  // distinct tokens; v̂X = 2v̂ in the first two coordinates
  e.y << v0, v1, r, 0, 0, 0;
  e.b(0, 0) = e.b(1, 1) = 1;
  return e;
}

RowVerdict verdict_of(const ExactRow& e, const CertifyOptions& o) { return certify_row_fast(e.x, e.y, e.b, 0, o).verdict; }
}  // namespace

TEST_CASE("certification: v̂, ρ and δ equal their hand-computed values", "[certify][hardening]") {
  const ExactRow e = exact_row(0.5, 0.5, 0x1p-7);
  CertifyOptions o;
  o.tau = 1;
  o.v_min = 0;
  o.sigma_min = 0x1p-4;
  o.w_error = 0.25;
  const RowCertificate c = certify_row_fast(e.x, e.y, e.b, 0, o);
  CHECK(c.v(0) == 0.5);
  CHECK(c.v(1) == 0.5);
  CHECK(c.residual == 0x1p-7);
  CHECK(c.relative_residual == 0x1p-7 / std::sqrt(0.5 + 0x1p-14));
  // δ = (ρ + w_error ‖v̂X‖) / σ_min = (2⁻⁷ + ¼·√2) · 16.
  CHECK(std::abs(c.delta - (0x1p-7 + 0.25 * std::sqrt(2.0)) * 16) <= tolerance::gamma(4) * c.delta);
  // The slabs of the row: b = ln(v̂₁/v̂₀) = 0, η = slab_half_width(½, ½, δ), a = x₀ᵀ(x₁ − x₀).
  o.w_error = 0;
  const RowCertificate small = certify_row_fast(e.x, e.y, e.b, 0, o);  // δ = 2⁻⁷·16 = ⅛
  CHECK(small.delta == 0.125);
  const std::vector<SlabConstraint> slabs = slabs_of_row(e.x, 0, small);
  REQUIRE(slabs.size() == 1);
  CHECK(slabs[0].b == 0.0);
  CHECK(slabs[0].eta == slab_half_width(0.5, 0.5, 0.125));
  CHECK(std::abs(slabs[0].eta - 2 * std::log(0.5 / 0.375)) <= tolerance::gamma(8) * slabs[0].eta);
  const std::vector<double> a = {-4, 4, 0, 0, 0, 0, 0, 0, 0};  // row-major x₀ᵀ(x₁ − x₀), x₀ = (2,0,0), x₁ − x₀ = (−2,2,0)
  CHECK(slabs[0].a == a);
}

TEST_CASE("certification with label noise: δ gains ν/σ_min, ν from the declared level or float32 rounding",
          "[certify][hardening][noise]") {
  const ExactRow e = exact_row(0.5, 0.5, 0x1p-7);
  CertifyOptions o;
  o.tau = 1;
  o.v_min = 0;
  o.sigma_min = 0x1p-4;
  const RowCertificate quiet = certify_row_fast(e.x, e.y, e.b, 0, o);
  CHECK(quiet.noise_bound == 0.0);
  CHECK(quiet.delta == 0x1p-7 * 16);  // ρ/σ_min, exactly as without the noise options
  // Declared Gaussian noise ε = 10⁻³: ν = tolerance::label_noise_row_bound(ε, ‖y‖_F, k = 2, d = 3, 10⁻¹²).
  o.label_noise = 1e-3;
  const RowCertificate noisy = certify_row_fast(e.x, e.y, e.b, 0, o);
  const double nu = tolerance::label_noise_row_bound(1e-3, std::sqrt(0.5 + 0x1p-14), 2, 3, 1e-12);
  CHECK(std::abs(noisy.noise_bound - nu) <= tolerance::gamma(4) * nu);
  CHECK(std::abs(noisy.delta - (0x1p-7 + nu) * 16) <= tolerance::gamma(4) * noisy.delta);
  CHECK(noisy.v == quiet.v);  // the noise widens δ; it does not move v̂ or ρ
  CHECK(noisy.residual == quiet.residual);
  // A smaller failure probability widens ν.
  o.noise_failure_probability = 1e-20;
  CHECK(certify_row_fast(e.x, e.y, e.b, 0, o).noise_bound > noisy.noise_bound);
  // float32 labels: ν = (2⁻²⁴‖y_a‖ + √d·2⁻¹⁵⁰)/(1 − 2⁻²⁴), no probability.
  o.label_noise = 0;
  o.float32_labels = true;
  const RowCertificate rounded = certify_row_fast(e.x, e.y, e.b, 0, o);
  CHECK(rounded.noise_bound == tolerance::float32_label_rounding_row_bound(std::sqrt(0.5 + 0x1p-14), 3));
  // The noise term decides: δ = ρ/σ_min just below ½ certifies; the declared noise makes it too uncertain.
  o.float32_labels = false;
  o.sigma_min = std::nextafter(0x1p-6, 1.0);
  CHECK(verdict_of(e, o) == RowVerdict::certified);
  o.label_noise = 1e-6;
  CHECK(verdict_of(e, o) == RowVerdict::too_uncertain);
}

TEST_CASE("certification verdicts at and on both sides of each threshold", "[certify][hardening]") {
  const ExactRow e = exact_row(0.5, 0.5, 0x1p-7);
  CertifyOptions o;
  o.v_min = 0.05;
  o.sigma_min = 1;  // δ = ρ = 2⁻⁷
  // Residual: ρ ≤ τ‖y_a‖ certifies, at equality too; one ulp below does not.
  o.tau = certify_row_fast(e.x, e.y, e.b, 0, o).relative_residual;
  CHECK(verdict_of(e, o) == RowVerdict::certified);
  o.tau = std::nextafter(o.tau, 0.0);
  CHECK(verdict_of(e, o) == RowVerdict::residual_too_large);
  o.tau = 1;
  // v_min: min v̂ = ½ ≥ v_min at equality; one ulp above it is below_v_min.
  o.v_min = 0.5;
  CHECK(verdict_of(e, o) == RowVerdict::certified);
  o.v_min = std::nextafter(0.5, 1.0);
  CHECK(verdict_of(e, o) == RowVerdict::below_v_min);
  o.v_min = 0.05;
  // min v̂ > δ: δ = ρ/σ_min = 2⁻⁷/2⁻⁶ = ½ = min v̂ is not above it (too uncertain);
  // σ_min one ulp larger makes δ just below ½ (certified).
  o.sigma_min = 0x1p-6;
  CHECK(verdict_of(e, o) == RowVerdict::too_uncertain);
  o.sigma_min = std::nextafter(0x1p-6, 1.0);
  CHECK(verdict_of(e, o) == RowVerdict::certified);
  // |Σv̂ − 1| ≤ √k δ: v̂ = (0.375, 0.5) sums to 0.875, so δ must reach 0.125/√2.
  const ExactRow off = exact_row(0.375, 0.5, 0x1p-7);
  const double needed = 0.125 / std::sqrt(2.0);
  o.sigma_min = 0x1p-7 / (needed * 1.001);  // δ 0.1% above what the sum needs
  CHECK(verdict_of(off, o) == RowVerdict::certified);
  o.sigma_min = 0x1p-7 / (needed * 0.999);  // 0.1% below
  CHECK(verdict_of(off, o) == RowVerdict::too_uncertain);
}

TEST_CASE("certification: B one short of full rank is rank-deficient, full rank is not", "[certify][hardening]") {
  MatD x(3, 4), y = MatD::Zero(3, 4), b(3, 4);
  x << 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0;
  y.row(0) << 0.25, 0.25, 0.5, 0;
  CertifyOptions o;
  o.tau = 1;
  o.v_min = 0;
  // rank 2 = k − 1: the third row is the sum of the first two.
  b << 1, 0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0;
  CHECK(certify_row_fast(x, y, b, 0, o).verdict == RowVerdict::rank_deficient);
  // Full rank 3, nearly dependent: the third row moved off the plane by 10⁻⁶
  // (a Gram pivot ≈ 10⁻¹², far above the rank threshold k·2⁻⁵²·max G_jj ≈ 2·10⁻¹⁵).
  b(2, 2) = 1e-6;
  CHECK(certify_row_fast(x, y, b, 0, o).verdict != RowVerdict::rank_deficient);
  // Moved by 10⁻⁹: the pivot ≈ 10⁻¹⁸ is below that threshold — numerically rank 2.
  b(2, 2) = 1e-9;
  CHECK(certify_row_fast(x, y, b, 0, o).verdict == RowVerdict::rank_deficient);
  // Two equal tokens are refused before any rank test; one entry apart they are distinct.
  MatD dup = x;
  dup.row(2) = dup.row(1);
  CHECK(certify_row_fast(dup, y, b, 0, o).verdict == RowVerdict::duplicate_tokens);
  dup(2, 3) = 1;
  CHECK(tokens_distinct(dup));
}

TEST_CASE("certification with label noise: fast and reference agree, slab widths within the derived bound",
          "[certify][noise]") {
  // Noisy labels (the model of data/noisy_source.hpp) and the noise options on both
  // paths: ν is the same double function of the same labels, so the verdicts agree
  // and the fast slabs lie within the reference's derived bounds (proofs/certification.md).
  int compared = 0, certified = 0;
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    test::LayerCase c;
    c.shape = {2, 8, 2};
    c.scale = 2.0;
    c.seed = seed;
    Layer layer = test::make_layer(c);
    layer.heads[1].theta = layer.heads[0].theta + 1e-4 * layer.heads[1].theta;  // nearly coincident: rows certify
    const MatD x = distinct_input(2, 8, seed);
    const MatD exact = labels(layer, x);
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal;
    const double sigma = 1e-3 * exact.norm() / 4.0;  // ε = 10⁻³, rms over k·d = 16 entries
    const MatD y = exact + MatD::NullaryExpr(2, 8, [&] { return sigma * normal(rng); });
    const MatD b = x * layer.w_sum();
    CertifyOptions o;
    o.tau = 1;
    o.sigma_min = 1;
    o.label_noise = 1e-3;
    o.float32_labels = seed % 2 == 0;
    for (int a = 0; a < 2; ++a) {
      const RowCertificate f = certify_row_fast(x, y, b, a, o);
      const CertificationCheck check = compare_certification_row(x, y, b, a, o, f, 128);
      INFO("seed " << seed << ", row " << a << ": fast " << to_string(check.fast) << ", reference "
                   << to_string(check.reference) << " " << check.undecided_at);
      CHECK(check.agree());
      ++compared;
      if (check.reference != RowVerdict::certified || check.undecided) continue;
      ++certified;
      const std::vector<SlabConstraint> fast_slabs = slabs_of_row(x, a, f);
      REQUIRE(fast_slabs.size() == check.reference_slabs.size());
      for (size_t s = 0; s < fast_slabs.size(); ++s) {
        CHECK(std::abs(fast_slabs[s].eta - check.reference_slabs[s].slab.eta) <= check.reference_slabs[s].width_bound);
        CHECK(std::abs(fast_slabs[s].b - check.reference_slabs[s].slab.b) <= check.reference_slabs[s].centre_bound);
      }
    }
  }
  CHECK(compared == 48);
  CHECK(certified >= 12);  // coverage: most rows of nearly coincident heads certify
}

TEST_CASE("certification, pairwise v_min: a token both heads ignore keeps the row's other slabs", "[certify][hardening]") {
  // k = 3, d = 4, B = [I₃ 0]: v̂ = (y₁, y₂, y₃) and ρ = |y₄|, exact in double.
  // v̂ = (½, 15/32, 1/32): the third entry is below v_min = 0.05.
  MatD x = MatD::Zero(3, 4), y = MatD::Zero(3, 4), b = MatD::Zero(3, 4);
  x << 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0;
  y.row(0) << 0.5, 0.46875, 0.03125, 0x1p-9;
  b(0, 0) = b(1, 1) = b(2, 2) = 1;
  CertifyOptions o;
  o.tau = 1;
  o.v_min = 0.05;
  o.sigma_min = 1;  // δ = ρ = 2⁻⁹ < 1/32
  CHECK(certify_row_fast(x, y, b, 0, o).verdict == RowVerdict::below_v_min);  // every_entry
  o.v_min_rule = CertifyOptions::VMinRule::pairwise;
  const RowCertificate cert = certify_row_fast(x, y, b, 0, o);
  REQUIRE(cert.verdict == RowVerdict::certified);
  CHECK(cert.partners == std::vector<int>{1});
  const std::vector<SlabConstraint> slabs = slabs_of_row(x, 0, cert);
  REQUIRE(slabs.size() == 1);
  CHECK(slabs[0].other == 1);
  CHECK(slabs[0].b == std::log(0.46875 / 0.5));
  // At the thresholds: v̂_j = v_min keeps the pair; v_min one ulp above v̂_j drops it
  // (no pair left: below_v_min), and likewise for v̂_a.
  o.v_min = 0.46875;
  CHECK(certify_row_fast(x, y, b, 0, o).partners == std::vector<int>{1});
  o.v_min = std::nextafter(0.46875, 1.0);
  CHECK(certify_row_fast(x, y, b, 0, o).verdict == RowVerdict::below_v_min);
  // The entries the slabs use must exceed δ; the ignored one need not: δ = 2⁻⁹·2⁵ = 1/16 > 1/32.
  o.v_min = 0.05;
  o.sigma_min = 0x1p-5;
  CHECK(certify_row_fast(x, y, b, 0, o).verdict == RowVerdict::certified);
  // The reference path decides the same partners and gives the same slab.
  o.sigma_min = 1;
  const CertificationCheck check = compare_certification_row(x, y, b, 0, o, cert, 200);
  CHECK(check.agree());
  CHECK(check.reference == RowVerdict::certified);
  REQUIRE(check.reference_slabs.size() == 1);
  CHECK(check.reference_slabs[0].slab.other == 1);
  // A fast path that kept every pair is refused by the rule: the reference keeps one slab.
  o.v_min_rule = CertifyOptions::VMinRule::every_entry;
  CHECK(compare_certification_row(x, y, b, 0, o, cert, 200).reference == RowVerdict::below_v_min);
}

namespace {
// True when the two certificates have the same verdict and the same bytes in every value.
bool same_certificate(const RowCertificate& p, const RowCertificate& q) {
  return p.verdict == q.verdict && p.v.size() == q.v.size() && (p.v.array() == q.v.array()).all() &&
         p.residual == q.residual && p.relative_residual == q.relative_residual && p.delta == q.delta &&
         p.noise_bound == q.noise_bound && p.partners == q.partners;
}
}  // namespace

// The learner's loops certify with RowCertifier; `verify` and the reference step
// check certify_row_fast on certification_products. Both must be the same
// arithmetic, or the check would vouch for a computation the learner did not make.
TEST_CASE("RowCertifier gives certify_row_fast's certificate on certification_products, byte for byte",
          "[certify]") {
  for (InputKind kind : {InputKind::boolean, InputKind::gaussian})
    for (const test::Shape shape : {test::Shape{2, 16, 2}, test::Shape{3, 19, 2}, test::Shape{4, 16, 3}, test::Shape{2, 5, 1}}) {
      test::LayerCase c;
      c.shape = shape;
      c.scale = 2;
      c.seed = 11;
      Layer layer = test::make_layer(c);
      // Heads that attend alike make rows pass every check, so partners and δ are compared too.
      for (size_t i = 1; i < layer.heads.size(); ++i) layer.heads[i].theta = layer.heads[0].theta;
      const MatD w_hat = layer.w_sum();
      const InputBatch batch = draw_inputs(3, Stream::inputs, kind, shape.k, shape.d, 0, 200, 1);
      const FastForwardResult f = FastForward(layer).run(batch, 1);
      REQUIRE(f.status.ok());
      CertifyOptions o;
      o.tau = 1e300;  // every row as far as the residual allows: the later checks run too
      o.w_error = 1e-3;
      o.label_noise = 1e-4;
      o.v_min = 0.0;
      RowCertifier certifier(w_hat, shape.k);
      int64_t certified = 0, compared = 0;
      for (int64_t s = 0; s < batch.count; ++s) {
        const double* y = f.y.data() + s * shape.k * shape.d;
        certifier.load(batch, s, y);
        const MatD x = batch.sample(s);
        const MatD y_matrix = Eigen::Map<const MatD>(y, shape.k, shape.d);
        const MatD b = certification_products(x, w_hat);
        for (int a = 0; a < shape.k; ++a) {
          certifier.certify(a, o);
          const RowCertificate loop = certifier.certificate();
          const RowCertificate alone = certify_row_fast(x, y_matrix, b, a, o);
          INFO("shape (" << shape.k << "," << shape.d << "," << shape.m << "), sample " << s << ", row " << a);
          REQUIRE(same_certificate(loop, alone));
          certified += loop.verdict == RowVerdict::certified;
          ++compared;
        }
      }
      CHECK(compared == batch.count * shape.k);
      // Not vacuous: some rows pass every check (partners compared), some stop earlier.
      INFO("shape (" << shape.k << "," << shape.d << "," << shape.m << "), inputs " << to_string(kind));
      CHECK(certified > 0);
      CHECK(certified < compared);
    }
}

TEST_CASE("certification_products sums each entry of X Ŵ as fused multiply-adds in increasing r", "[certify]") {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  int64_t eigen_differs = 0;
  for (const int d : {5, 16, 19, 64})
    for (const int k : {2, 4}) {
      MatD x(k, d), w(d, d);
      for (int t = 0; t < 20; ++t) {
        for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = normal(rng);
        for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = normal(rng);
        const MatD b = certification_products(x, w);
        for (int a = 0; a < k; ++a)
          for (int col = 0; col < d; ++col) {
            double sum = 0;
            for (int r = 0; r < d; ++r) sum = std::fma(x(a, r), w(r, col), sum);
            REQUIRE(b(a, col) == sum);
          }
        // Test of the tester: another order of the same sum (Eigen's product, or
        // products rounded before adding) gives other bytes on these inputs.
        const MatD eigen = x * w;
        eigen_differs += (eigen.array() != b.array()).count();
      }
    }
  CHECK(eigen_differs > 0);
}
