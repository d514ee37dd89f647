// Margin stability (MATH.md §3, stage 3; proofs/margin_stability.md): if logit
// vectors ℓ, ℓ' in R^k have the same argmax and both margins (top minus
// runner-up) are at least M, then
//   ‖softmax(ℓ) − softmax(ℓ')‖₁ ≤ S(k, M) := 2(k−1)e^{−M} / (1 + (k−1)e^{−M}),
// and S is attained (ℓ with every runner-up exactly M below, ℓ' one-hot in the
// limit). MATH.md's 4(k−1)e^{−M} follows and is a factor 2 (as M → ∞) above the
// sharp value, and ≥ 2 (vacuous: an ℓ1 distance of two distributions is ≤ 2)
// for M ≤ ln(2(k−1)); S is below 2 for every M.
//
// 1. A property in MPFR (enough bits to resolve e^{−M} for M up to 600 and
//    logits up to 1e6, where double sees 0): the distance is ≤ S + rounding on
//    every case, and ≥ S − rounding on the constructed worst case (tightness).
//    Tests of the tester: the bound 4(k−1)e^{−M} (2× loose) and (k−1)e^{−M}
//    (too small) are rejected.
// 2. Stage 3's refine_wsum on a layer whose heads all equal the proxy: every
//    accepted event is large-margin for every head, so by (1) each label is
//    within an explicit distance of x_{j*} W_Σ, and the fit within
//    ‖T⁺‖₂·‖R‖_F plus the least-squares rounding of W_Σ.
#include "data/oracle.hpp"
#include "generators.hpp"
#include "model/forward_error.hpp"
#include "numeric/multiprecision.hpp"
#include "numeric/precision.hpp"
#include "numeric/softmax.hpp"
#include "test_tolerances.hpp"
#include "property.hpp"
#include "stages/stage3/margin.hpp"

#include <Eigen/QR>
#include <Eigen/SVD>

#include <cmath>
#include <functional>

using namespace mha;

namespace {

// A bound on the ℓ1 distance as a function of (k, M), in MPFR.
using MarginBound = std::function<Mpfr(int, const Mpfr&)>;

Mpfr sharp_bound(int k, const Mpfr& margin) {
  const Mpfr t = Mpfr(k - 1) * exp(Mpfr(-margin));
  return 2 * t / (1 + t);
}

struct MarginCounts {
  int worst{0}, small_margin{0};
};

void check_margin_bound(const MarginBound& bound_of, MarginCounts* counts) {
  const int k = *rc::gen::inRange(2, 9).as("k");
  // Half the cases at small margins (0 .. 10 in steps of 1/4), where MATH.md's
  // bound is vacuous or nearly so; half up to 600.
  const double margin = *rc::gen::oneOf(rc::gen::map(rc::gen::inRange(0, 41), [](int n) { return n / 4.0; }),
                                        rc::gen::map(rc::gen::inRange(0, 601), [](int n) { return double(n); }))
                             .as("M");
  const int top = *rc::gen::inRange(0, k).as("argmax");
  // The constructed worst case: every runner-up of ℓ exactly M below the top,
  // every runner-up of ℓ' M + 1e6 below (one-hot to within e^{−1e6}).
  const bool worst = *rc::gen::arbitrary<bool>().as("worst case");
  // Enough bits that e^{-M}·2^{-60} is still resolved next to 1: M/ln 2 + 128.
  const unsigned bits = 128 + static_cast<unsigned>(margin / std::log(2.0)) + 64;
  ScopedPrecision precision(bits);
  auto make = [&](double top_value, bool all_at_margin, bool far) {
    Mat<Mpfr> l(1, k);
    for (int b = 0; b < k; ++b) {
      // Runner-ups sit exactly M below (the worst case) or further, by up to 1e6.
      const double extra = far ? 1e6 : all_at_margin ? 0.0 : *rc::gen::element(0.0, 0.0, 0.5, 37.25, 1e3, 1e6);
      l(0, b) = b == top ? Mpfr(top_value) : Mpfr(top_value) - Mpfr(margin) - Mpfr(extra);
    }
    return l;
  };
  const Mat<Mpfr> a = make(*rc::gen::element(0.0, 100.0, -5e5, 1e6).as("top logit of l"), worst, false);
  const Mat<Mpfr> b = make(*rc::gen::element(0.0, 2.0, 3e5, -1e6).as("top logit of l'"), false, worst);
  const Mat<Mpfr> sa = softmax_rows<Mpfr>(a), sb = softmax_rows<Mpfr>(b);
  Mpfr l1(0);
  for (int j = 0; j < k; ++j) l1 += abs(Mpfr(sa(0, j) - sb(0, j)));
  const Mpfr bound = bound_of(k, Mpfr(margin));
  const Mpfr rounding = ldexp(Mpfr(tolerance::mpfr_softmax_l1_rounding_units(k)), -static_cast<int>(bits));
  RC_ASSERT(l1 <= bound + rounding);
  // MATH.md's statement, implied by the sharp one.
  RC_ASSERT(l1 <= Mpfr(4 * (k - 1)) * exp(Mpfr(-margin)) + rounding);
  if (worst) {
    // Tightness: S is attained, up to e^{−1e6} (far below 2^{−bits}) and rounding.
    RC_ASSERT(l1 >= bound - rounding);
    if (counts) ++counts->worst;
  }
  if (counts && margin <= std::log(2.0 * (k - 1))) ++counts->small_margin;
  RC_CLASSIFY(margin > 40, "M > 40: double cannot resolve the difference");
}

}  // namespace

TEST_CASE("margin stability: same argmax and margins >= M give l1 distance <= S(k, M), attained",
          "[property][margin]") {
  MarginCounts counts;
  const int cases = 150, scale = mha::test::property_scale();
  mha::test::property("MPFR, M up to 600, logits up to 1e6: l1 <= 2(k-1)e^-M/(1+(k-1)e^-M), = on the worst case", cases,
                      [&] { check_margin_bound(sharp_bound, &counts); });
  WARN("margin stability: " << counts.worst << " worst cases (tightness checked), " << counts.small_margin
                            << " cases with M <= ln(2(k-1)) (MATH.md's bound vacuous there)");
  // Required coverage: each case is a worst case with probability 1/2 and has
  // M ≤ ln 2(k−1) (≥ ln 2 for k ≥ 2, so M ∈ {0, 1/4, 1/2} at least) with
  // probability ≥ 1/2 · 3/41.
  REQUIRE(counts.worst >= cases * scale / 4);
  REQUIRE(counts.small_margin >= 1);
}

TEST_CASE("test of the tester: margin stability rejects a bound 2x too loose and one too small", "[property][margin][tester]") {
  // MATH.md's own bound: true, but not attained (a factor 2 above S as M grows).
  mha::test::property_rejects("the bound 4(k-1)e^-M claimed sharp", 150, [] {
    check_margin_bound([](int k, const Mpfr& m) -> Mpfr { return Mpfr(4 * (k - 1)) * exp(Mpfr(-m)); }, nullptr);
  });
  mha::test::property_rejects("the bound (k-1)e^-M", 150, [] {
    check_margin_bound([](int k, const Mpfr& m) -> Mpfr { return Mpfr(k - 1) * exp(Mpfr(-m)); }, nullptr);
  });
}

// ---------------------------------------------------------------------------
// refine_wsum on a case where margin stability predicts its accuracy.

namespace {

struct MarginFitCase {
  Instance inst;
  MatD proxy;
  MarginOptions options;
  MarginResult result;
  MatD tokens, labels;        // the accepted events, replayed: x_{j*} and y_a
  MatD own_tokens;            // x_a (for the test of the tester)
  MatD residual_bound;        // entrywise bound on y_a − x_{j*} W_Σ from (1)
  int64_t replayed_events = 0;
};

MarginFitCase run_margin_fit() {
  MarginFitCase c;
  const int d = 6, k = 2, m = 2;
  c.inst.layer = test::make_layer({{k, d, m}, test::Flavour::generic, 12.0, 7});
  c.inst.k = k;
  for (int i = 1; i < m; ++i) c.inst.layer.heads[i].theta = c.inst.layer.heads[0].theta;  // every head = the proxy
  c.proxy = c.inst.layer.heads[0].theta;
  const SampleOracle oracle(c.inst, 3);
  c.options.accept_fraction = 0.2;
  c.options.pilot_samples = 4000;
  c.options.target_events = 120;
  c.options.max_samples = 600;  // one batch of 600 samples (about 240 events), not the default 262144
  c.options.trim = INFINITY;  // keep every event: the fit is plain least squares
  c.options.threads = 1;
  c.result = refine_wsum(oracle, c.proxy, c.options, &c.inst.layer);

  // Replay the events from the same samples, independently of refine_wsum.
  const MarginReport& rep = c.result.report;
  const LabelledBatch batch = oracle.draw(rep.pilot_samples, rep.samples, 1);
  std::vector<RowVec<double>> tokens, own, labels, bounds;
  for (int64_t s = 0; s < rep.samples; ++s) {
    const MatD x = batch.x.sample(s);
    const MatD logits = x * c.proxy * x.transpose();  // the selection rule's own double logits
    const MatD label_error = forward_error_bound(c.inst.layer, x);
    for (int a = 0; a < k; ++a) {
      int top = 0;
      for (int b = 1; b < k; ++b)
        if (logits(a, b) > logits(a, top)) top = b;
      double second = -INFINITY;
      for (int b = 0; b < k; ++b)
        if (b != top) second = std::max(second, logits(a, b));
      if (!(logits(a, top) - second >= rep.threshold)) continue;
      tokens.push_back(x.row(top));
      own.push_back(x.row(a));
      labels.push_back(Eigen::Map<const RowVec<double>>(batch.y.data() + (s * k + a) * d, d));
      // |y_a − x_{j*}W_Σ|_c ≤ Σ_i (1 − A_i[a,j*]) max_{b≠j*} |((x_b − x_{j*}) W_i)_c| + B[a,c], with
      // 1 − A_i[a,j*] ≤ S(k, μ_i)/2 and μ_i the exact margin of head i (MPFR).
      ScopedPrecision precision(200);
      RowVec<double> bound(d);
      bound.setZero();
      for (const auto& h : c.inst.layer.heads) {
        const Mat<Mpfr> xm = cast_matrix<Mpfr>(x);
        const Mat<Mpfr> lm = xm * cast_matrix<Mpfr>(h.theta) * xm.transpose();
        Mpfr runner(-1e300);
        for (int b = 0; b < k; ++b)
          if (b != top && lm(a, b) > runner) runner = lm(a, b);
        const Mpfr mu = lm(a, top) - runner;
        REQUIRE(mu > 0);  // the true head has the same argmax (it equals the proxy)
        const double half_s = Mpfr(sharp_bound(k, mu) / 2).convert_to<double>() * tolerance::bound_evaluation_factor(1);
        for (int col = 0; col < d; ++col) {
          double spread = 0;
          for (int b = 0; b < k; ++b)
            if (b != top) spread = std::max(spread, std::abs(((x.row(b) - x.row(top)) * h.w.col(col)).value()));
          // (x_b − x_j) W in double: ±2 and 0 entries times W, d terms: relative γ_d;
          // two more roundings for the products here.
          bound(col) += half_s * spread * tolerance::bound_evaluation_factor(d + 1);
        }
      }
      bounds.push_back(bound + label_error.row(a));
    }
  }
  c.replayed_events = static_cast<int64_t>(tokens.size());
  c.tokens.resize(tokens.size(), d);
  c.labels.resize(tokens.size(), d);
  c.residual_bound.resize(tokens.size(), d);
  c.own_tokens.resize(tokens.size(), d);
  for (size_t e = 0; e < tokens.size(); ++e) {
    c.tokens.row(e) = tokens[e];
    c.own_tokens.row(e) = own[e];
    c.labels.row(e) = labels[e];
    c.residual_bound.row(e) = bounds[e];
  }
  return c;
}

// ‖Ŵ − W_Σ‖_F against its bound ‖T⁺‖₂‖R‖_F + the fit's rounding; returns the
// ratio (≤ 1 passes).
double fit_error_ratio(const MarginFitCase& c, const MatD& w_fit) {
  const MatD w_sum = c.inst.layer.w_sum();
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(Eigen::MatrixXd(c.tokens));
  const double s_max = svd.singularValues()(0), s_min = svd.singularValues()(svd.singularValues().size() - 1);
  // The computed singular values are within tolerance::jacobi_singular_value_bound·σ̂_max
  // of the exact ones (backward stability and Weyl's inequality).
  const double widen = tolerance::jacobi_singular_value_bound(c.tokens.rows(), c.tokens.cols()) * s_max;
  REQUIRE(s_min > widen);
  const double s_min_low = s_min - widen, s_max_high = s_max + widen;
  const double r_fro = c.residual_bound.norm() * tolerance::bound_evaluation_factor(c.residual_bound.size() + 1);
  const double exact_error = r_fro / s_min_low;  // ‖W* − W_Σ‖_F ≤ ‖T⁺‖₂ ‖R‖_F
  const double rounding = tolerance::least_squares_fit_bound(s_max_high / s_min_low, c.tokens.rows(), c.tokens.cols(),
                                                             w_sum.norm() + exact_error, r_fro, s_max);
  return (w_fit - w_sum).norm() / (exact_error + rounding);
}

}  // namespace

TEST_CASE("refine_wsum: heads equal to the proxy give labels within margin stability, W_sum within the fit's bound",
          "[property][margin][stage3]") {
  const MarginFitCase c = run_margin_fit();
  const MarginReport& rep = c.result.report;
  REQUIRE(rep.truth.has_value());
  INFO("threshold " << rep.threshold << ", " << rep.events << " events from " << rep.samples << " samples");
  // Coverage: the stage found its events and fitted them.
  REQUIRE(rep.events >= c.options.target_events);
  REQUIRE(rep.event_rank == 6);
  REQUIRE(rep.events_kept == rep.events);
  // The selection replayed independently finds the same events.
  REQUIRE(c.replayed_events == rep.events);
  // Every head equals the proxy, so none can fail to be large-margin.
  CHECK(rep.truth->true_not_large_margin == 0.0);
  // Margin stability on every event: |y_a − x_{j*}W_Σ| within the bound from (1).
  const MatD deviation = (c.labels - c.tokens * c.inst.layer.w_sum()).cwiseAbs();
  // (the product x_{j*}W_Σ in double: γ_d relative of |x||W_Σ|)
  const MatD product_rounding = c.tokens.cwiseAbs() * c.inst.layer.w_sum().cwiseAbs() * (8 * 0x1p-53);
  CHECK(((deviation - product_rounding) - c.residual_bound).maxCoeff() <= 0.0);
  // Tightness: for k = 2 the bound on 1 − A_i[a,j*] is exact (S(2, μ)/2 =
  // 1/(1 + e^μ)), so the only slack is the triangle inequality over the heads'
  // columns: where both heads push the same way the deviation reaches the bound.
  const double tight = (deviation.array() / c.residual_bound.array()).maxCoeff();
  WARN("refine_wsum: largest label deviation / margin-stability bound = " << tight);
  CHECK(tight >= 0.5);
  const double ratio = fit_error_ratio(c, c.result.w_sum);
  WARN("refine_wsum: W_sum error / bound = " << ratio << ", relative error " << rep.truth->w_sum_rel_error);
  CHECK(ratio <= 1.0);

  // Test of the tester: a refine_wsum that fits y_a against the row's own token
  // x_a instead of x_{j*} (the argmax) is rejected by the same check.
  const MatD w_wrong = Eigen::ColPivHouseholderQR<MatD>(c.own_tokens).solve(c.labels);
  CHECK(fit_error_ratio(c, w_wrong) > 1.0);
}
