// Stage 3 on two paths (proofs/margin_stability.md, "The selection on two paths";
// proofs/w_least_squares.md, "Fast against reference"): on random instances
// (d ∈ {8, 10}, m ∈ {2, 3}) with planted proxies — the true heads themselves (every
// event then a row where each head is large-margin on one token), or one point of
// the true hull — stage 3's fast path (refine_wsum: the joint margins, the adaptive
// threshold, the events, the trimmed least-squares fit) and the reference agree:
// every kept event and every row of the first examined samples re-decided with MPFR
// margins (undecided only within a band of the threshold), and the fit against the
// normal equations in MPFR / exact rationals on its own events — check_margin, as
// `mhalearn verify 3` and the learner's reference step run it. Tests of the tester:
// a selection that looks at the first proxy only (ignoring that the others point
// elsewhere: the fault that used to slip past every check but golden bytes), a
// selection at a lowered threshold reported as the original, and a fit that drops
// one event, are rejected. On Gaussian inputs (MATH.md §3.10) the same check: the
// selection's band uses the sample's own M_a = max_b |x_a||P||x_b|ᵀ, not |x| = 1;
// a lowered threshold is rejected there too.
#include "generators.hpp"
#include "property.hpp"
#include "stages/stage3/check.hpp"

using namespace mha;

namespace {

using MarginPath = std::function<MarginResult(const SampleSource&, const std::vector<MatD>&, const MarginOptions&)>;

MarginResult margin_correct(const SampleSource& s, const std::vector<MatD>& proxies, const MarginOptions& o) {
  return refine_wsum(s, proxies, o);
}

// The planted case: both the heads as proxies (m of them) and the mean of the heads.
auto margin_agrees(const MarginPath& fast, bool heads_only, InputKind kind = InputKind::boolean) {
  return [fast, heads_only, kind] {
    Instance instance = kind == InputKind::gaussian ? test::draw_generated_instance({8}, {2}, {3.0, 6.0})
                                                    : test::draw_generated_instance({8, 10}, {2, 3}, {3.0, 6.0});
    instance.inputs = kind;
    const Layer& layer = instance.layer;
    const int d = instance.d(), m = instance.m();
    const bool heads = heads_only || *rc::gen::arbitrary<bool>().as("the heads as proxies");
    std::vector<MatD> proxies;
    if (heads) {
      for (const auto& h : layer.heads) proxies.push_back(h.theta);
    } else {
      MatD mean = MatD::Zero(d, d);
      for (const auto& h : layer.heads) mean += h.theta / double(m);
      proxies.push_back(mean);
    }
    MarginOptions mo;
    // Gaussian cases (d = 8, m = 2) on a quarter of the samples (CI time); 200 events still exceed d.
    mo.pilot_samples = kind == InputKind::gaussian ? 10000 : 20000;
    mo.max_samples = kind == InputKind::gaussian ? 100000 : 400000;
    mo.accept_fraction = 2e-3;
    const SampleOracle oracle(instance, *rc::gen::inRange<uint64_t>(1, 100).as("sample seed"));
    const MarginResult r = fast(oracle, proxies, mo);
    RC_PRE(r.fit_tokens.rows() >= d);  // a fit was made
    const Comparison c = check_margin(oracle, proxies, r, mo.first_sample, 300);
    RC_LOG() << format_table({c});
    RC_ASSERT(c.compared > 0);
    RC_ASSERT(!disagrees(c));
  };
}

// The joint margin of the first proxy alone: events where the other proxies'
// argmaxes differ slip in.
MarginResult margin_first_proxy_only(const SampleSource& s, const std::vector<MatD>& proxies, const MarginOptions& o) {
  return refine_wsum(s, std::vector<MatD>{proxies.front()}, o);
}

MarginResult margin_lowered_threshold(const SampleSource& s, const std::vector<MatD>& proxies, const MarginOptions& o) {
  const MarginResult claimed = refine_wsum(s, proxies, o);
  MarginOptions lowered = o;
  lowered.accept_fraction *= 2;  // the pilot's quantile moves down
  MarginResult r = refine_wsum(s, proxies, lowered);
  r.report.threshold = claimed.report.threshold;
  return r;
}

// W_Σ fitted without the last event, reported with all of them.
MarginResult margin_one_event_dropped(const SampleSource& s, const std::vector<MatD>& proxies, const MarginOptions& o) {
  MarginResult r = refine_wsum(s, proxies, o);
  const Eigen::Index n = r.fit_tokens.rows();
  if (n > r.fit_tokens.cols() + 1)
    r.w_sum = r.fit_tokens.topRows(n - 1).colPivHouseholderQr().solve(r.fit_labels.topRows(n - 1));
  return r;
}

}  // namespace

TEST_CASE("stage 3: the selection and the fit agree with their MPFR and exact references", "[property][stage3]") {
  mha::test::property("stage 3 fast vs reference", 8, margin_agrees(margin_correct, false));
}

TEST_CASE("stage 3's cross-check rejects a one-proxy selection, a lowered threshold and a dropped event", "[property][stage3]") {
  mha::test::property_rejects("events of the first proxy alone", 6, margin_agrees(margin_first_proxy_only, true));
  mha::test::property_rejects("threshold lowered, the original reported", 6, margin_agrees(margin_lowered_threshold, false));
  mha::test::property_rejects("fit without its last event", 6, margin_agrees(margin_one_event_dropped, false));
}

TEST_CASE("stage 3 on Gaussian inputs: the selection and the fit agree with their references, and a test of the tester",
          "[property][stage3][gaussian]") {
  mha::test::property("stage 3 fast vs reference, Gaussian inputs", 2, margin_agrees(margin_correct, false, InputKind::gaussian));
  mha::test::property_rejects("Gaussian inputs, threshold lowered, the original reported", 2,
                              margin_agrees(margin_lowered_threshold, false, InputKind::gaussian));
}
