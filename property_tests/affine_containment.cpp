// Affine containment (MATH.md §3, stage 2), in the corrected form of
// proofs/certification.md: for a certified row with the lemma's slab widths
// η_j(δ), δ the certification bound computed with the truth,
//   every head's logit difference ℓ_i lies in the slab (the lemma),
//   every convex combination Σλ_iΘ_i (λ ≥ 0, Σλ = 1) lies in every slab, and
//   every affine combination with negative mass N = Σ_{λ_i<0}|λ_i| lies in the
//   slab widened to (1 + 2N)η_j.
// MATH.md's unwidened affine statement is false in general (the finding): the
// property also counts the cases where the adversarial affine combination
// λ = (1 + N) on the head with the largest e_i = ℓ_i − b, −N on the smallest,
// leaves the unwidened slab, and requires that some do.
//
// No structural discards (k·m ≤ d by construction, duplicate tokens repaired);
// the rows where the lemma gives no slab (C singular, or δ ≥ min(v̂_j, v̂_a)) are
// counted and their rate bounded. Tests of the tester: the unwidened slab, and a
// slab centre ln(v̂_a/v̂_j), are rejected.
#include "numeric/tolerance.hpp"
#include "generators.hpp"
#include "property.hpp"
#include "stages/stage2/certify.hpp"
#include "stages/stage2/certify_reference.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

using namespace mha;

namespace {

// The slab half-width for negative mass N, given the lemma's η (mutated in the tests of the tester).
using Widening = std::function<double(double eta, double negative_mass)>;
const Widening widened = [](double eta, double n) { return (1 + 2 * n) * eta; };
// The slab centre from v̂_j and v̂_a.
using Centre = std::function<double(double v_j, double v_a)>;
const Centre library_centre = [](double v_j, double v_a) { return std::log(v_j / v_a); };

struct AffineCounts {
  int cases{0}, no_slab{0}, outside_unwidened{0};
};

// |value − b| ≤ allowed, with the rounding of value: the logit differences
// and b carry one rounding each (2^-53 relative, b one more for the log), the
// weighted sum m + 2 more: 8(m + 2)·2^-53·(1 + Σ|λ_i||ℓ_i| + |b|).
bool inside(double value, double b, double allowed, double magnitude, int m) {
  return std::abs(value - b) <= allowed + tolerance::gamma(8 * (m + 2)) * magnitude;
}

void check_affine_containment(const Widening& widen, const Centre& centre, AffineCounts* counts) {
  const int d = *rc::gen::inRange(4, 11).as("d");
  const int k = 2;
  const int m = *rc::gen::inRange(2, std::min(3, d / k) + 1).as("m");  // k·m ≤ d
  test::LayerCase c;
  c.shape = {k, d, m};
  c.scale = *rc::gen::element(1.0, 3.0).as("scale");
  c.seed = *rc::gen::arbitrary<uint64_t>().as("seed");
  Layer layer = test::make_layer(c);
  // Nearly coincident heads so that rows certify.
  const double epsilon = *rc::gen::element(1e-6, 1e-3, 1e-2).as("head spread");
  for (int i = 1; i < m; ++i) layer.heads[i].theta = layer.heads[0].theta + epsilon * layer.heads[i].theta;
  MatD x = test::make_input(c, InputKind::boolean, *rc::gen::inRange(0, 1000));
  if (x.row(0) == x.row(1)) x(1, 0) = -x(1, 0);  // distinct tokens, still ±1
  const int a = *rc::gen::inRange(0, k).as("row");
  if (counts) ++counts->cases;
  const LemmaQuantities q = certification_lemma(layer, x, layer.w_sum(), a, 200);
  const int j = 1 - a;
  const double eta = slab_half_width(q.v(j), q.v(a), q.bound * tolerance::bound_evaluation_factor(1));
  if (!(q.sigma_min_c > std::ldexp(q.c_matrix_norm, -100)) || !std::isfinite(eta)) {
    if (counts) ++counts->no_slab;  // the lemma gives no slab for this row
    return;
  }
  const double b = centre(q.v(j), q.v(a));
  std::vector<double> ell(m);
  for (int i = 0; i < m; ++i) ell[i] = q.head_logit_differences[i][j];
  // The lemma: every head in the slab.
  for (int i = 0; i < m; ++i) RC_ASSERT(inside(ell[i], b, eta, 1 + std::abs(ell[i]) + std::abs(b), 1));
  auto combine = [&](const std::vector<double>& lambda) {
    double value = 0, negative = 0, magnitude = 1 + std::abs(b);
    for (int i = 0; i < m; ++i) {
      value += lambda[i] * ell[i];
      negative += std::max(0.0, -lambda[i]);
      magnitude += std::abs(lambda[i] * ell[i]);
    }
    return std::array<double, 3>{value, negative, magnitude};
  };
  // Random weights: λ_i = w_i / Σ w with w_i ∈ (0, 1] (convex) or (−2, 3] (affine;
  // when |Σw| ≤ 0.1, w_0 is moved up by 1, so |Σw| ≥ 0.9: no discard).
  for (bool convex : {true, false}) {
    std::vector<double> w(m);
    double total = 0;
    for (int i = 0; i < m; ++i)
      total += w[i] = (convex ? 0.0 : -2.0) + *rc::gen::inRange(1, 1001) / 1000.0 * (convex ? 1.0 : 5.0);
    if (std::abs(total) <= 0.1) {
      w[0] += 1;
      total += 1;
    }
    std::vector<double> lambda(m);
    for (int i = 0; i < m; ++i) lambda[i] = w[i] / total;
    const auto [value, negative, magnitude] = combine(lambda);
    RC_ASSERT(inside(value, b, convex ? eta : widen(eta, negative), magnitude, m));
  }
  // The adversarial affine combination: (1 + N) on the largest e_i, −N on the smallest.
  const int hi = static_cast<int>(std::max_element(ell.begin(), ell.end()) - ell.begin());
  const int lo = static_cast<int>(std::min_element(ell.begin(), ell.end()) - ell.begin());
  for (double n : {1.0, 10.0, 1e3, 1e6}) {
    if (hi == lo) break;
    std::vector<double> lambda(m, 0.0);
    lambda[hi] = 1 + n;
    lambda[lo] = -n;
    const auto [value, negative, magnitude] = combine(lambda);
    RC_ASSERT(inside(value, b, widen(eta, negative), magnitude, m));
    if (counts && !inside(value, b, eta, magnitude, m)) {
      ++counts->outside_unwidened;
      break;
    }
  }
}

}  // namespace

TEST_CASE("affine combinations of the heads lie in the (widened) slabs", "[property][certification]") {
  AffineCounts counts;
  const int cases = 60, scale = mha::test::property_scale();
  mha::test::property("heads and convex combinations in eta, affine ones in (1 + 2N) eta", cases,
                      [&] { check_affine_containment(widened, library_centre, &counts); });
  WARN("affine containment: " << counts.cases << " cases, " << counts.no_slab << " rows without a slab, "
                              << counts.outside_unwidened << " with an affine combination outside the unwidened slab");
  // Acceptance rate and the finding's coverage (thresholds about half the
  // measured rates at the default seed, recorded in proofs/certification.md).
  REQUIRE(counts.cases == cases * scale);
  REQUIRE(counts.no_slab <= counts.cases / 2);
  REQUIRE(counts.outside_unwidened >= 1);
}

TEST_CASE("test of the tester: affine containment rejects the unwidened slab and a flipped centre",
          "[property][certification][tester]") {
  mha::test::property_rejects("affine combinations in the unwidened slab (MATH.md as written)", 60, [] {
    check_affine_containment([](double eta, double) { return eta; }, library_centre, nullptr);
  });
  mha::test::property_rejects("slab centre ln(v_a/v_j)", 60, [] {
    check_affine_containment(widened, [](double v_j, double v_a) { return std::log(v_a / v_j); }, nullptr);
  });
}
