#include "instances.hpp"
#include "stages/stage1/wsum.hpp"
#include "stages/stage2/sculpt.hpp"
#include "stages/stage3/margin.hpp"
#include "thread_ranks.hpp"

#include <algorithm>

#include <catch2/catch.hpp>

#include <cstdio>

using namespace mha;

TEST_CASE("large-margin events of the proxy pin down W_sum far better than stage 1", "[stage3]") {
  const Instance inst = test::generated_instance(16, 2, 2, 6, 1);
  const SampleOracle oracle(inst, 2);
  const Stage1Result s1 = stage1_estimate_wsum(oracle, {400000, 2});
  const double e1 = (s1.w_hat - inst.layer.w_sum()).norm() / inst.layer.w_sum().norm();
  SculptOptions o;
  o.threads = 2;
  o.first_sample = s1.samples;
  o.certify.tau = e1;  // the crude Ŵ only certifies at about its own error (as in the planning prototype)
  // With a crude Ŵ the lemma's widths are vacuous (δ ≥ v̂_j); the crude round
  // uses the constraints as estimates (as the planning prototype did), with an
  // optimistic σ_min so that every certified row keeps a finite width.
  o.certify.sigma_min = 1e3;
  o.max_samples = 400000;
  const SculptResult s2 = sculpt_body(oracle, s1.w_hat, 2, o, &inst.layer);
  REQUIRE(s2.body.size() > 0);
  // Proxy: the minimum-norm point of the least-squares affine set.
  const Eigen::VectorXd x0 = s2.centre.x0 - s2.centre.free_basis.transpose() * (s2.centre.free_basis * s2.centre.x0);
  const MatD proxy = Eigen::Map<const MatD>(x0.data(), 16, 16);
  MarginOptions mo;
  mo.threads = 2;
  mo.first_sample = s1.samples + s2.report.samples;
  const MarginResult s3 = refine_wsum(oracle, proxy, mo, &inst.layer);
  REQUIRE(s3.report.truth.has_value());
  std::printf("stage 2: %lld constraints, rank %d, gap %.3g\n", (long long)s2.report.constraints, s2.report.numerical_rank, s2.report.gap);
  std::printf("stage 1 error %.3g; stage 2 hull error %.3g; stage 3: threshold %.3g, %lld events (%lld kept), W_sum error %.3g, "
              "not-large-margin fraction %.3g\n",
              e1, s2.report.truth->hull_error, s3.report.threshold, (long long)s3.report.events, (long long)s3.report.events_kept,
              s3.report.truth->w_sum_rel_error, s3.report.truth->true_not_large_margin);
  CHECK(s3.report.event_rank == 16);
  CHECK(s3.report.truth->w_sum_rel_error < e1 / 10);
}

TEST_CASE("logit_margin: the largest logit minus the second, and its index", "[stage3][hardening]") {
  int argmax = -1;
  RowVec<double> logits(4);
  logits << 1.0, 3.0, 2.5, -7.0;
  CHECK(logit_margin(logits, argmax) == 0.5);
  CHECK(argmax == 1);
  logits << 4.0, 3.0, 4.0, 0.0;  // a tie: the first maximum, margin 0
  CHECK(logit_margin(logits, argmax) == 0.0);
  CHECK(argmax == 0);
  logits << -1.0, -3.0, -2.0, -0.25;  // the maximum last
  CHECK(logit_margin(logits, argmax) == 0.75);
  CHECK(argmax == 3);
}

namespace {
// A dataset whose samples P..2P−1 repeat samples 0..P−1 (Gaussian, k = 2, d = 4),
// so that stage 3's pilot (the first P) sets the threshold from exactly the
// margins its main pass then sees. `flat_last`: every token's last coordinate 0.
DatasetSource repeated_dataset(const Instance& inst, int64_t pilot, bool flat_last) {
  InputBatch x = draw_inputs(5, Stream::inputs, InputKind::gaussian, 2, 4, 0, pilot, 1);
  if (flat_last)
    for (size_t i = 3; i < x.values.size(); i += 4) x.values[i] = 0;
  x.values.insert(x.values.end(), x.values.begin(), x.values.end());
  x.count = 2 * pilot;
  std::vector<double> y = FastForward(inst.layer).run(x, 1).y;
  return DatasetSource(std::move(x), std::move(y));
}

// The top-two margin of a row, computed independently of logit_margin.
double top_two_margin(const RowVec<double>& row) {
  std::vector<double> v(row.data(), row.data() + row.size());
  std::sort(v.rbegin(), v.rend());
  return v[0] - v[1];
}
}  // namespace

TEST_CASE("stage 3 accepts an event at the threshold, and needs events of full rank d", "[stage3][hardening]") {
  const Instance inst = test::generated_instance(4, 2, 2, 3.0, 8);
  const MatD proxy = inst.layer.heads[0].theta + inst.layer.heads[1].theta;
  const int64_t pilot = 500;
  MarginOptions o;
  o.pilot_samples = pilot;
  o.accept_fraction = 0.1;
  o.max_samples = pilot;
  o.target_events = 1000000;  // scan every main sample
  {
    const DatasetSource data = repeated_dataset(inst, pilot, false);
    const MarginResult r = refine_wsum(data, proxy, o);
    // The threshold is the margin at index ⌊0.9 · 1000⌋ of the sorted pilot margins.
    const LabelledBatch b = data.draw(0, pilot, 1);
    std::vector<double> margins;
    for (int64_t s = 0; s < pilot; ++s) {
      const MatD xs = b.x.sample(s);
      const MatD logits = xs * proxy * xs.transpose();
      for (int a = 0; a < 2; ++a) margins.push_back(top_two_margin(logits.row(a)));
    }
    std::vector<double> sorted = margins;
    std::sort(sorted.begin(), sorted.end());
    CHECK(r.report.threshold == sorted[900]);
    // Every row whose margin is ≥ the threshold, the one equal to it included, is an event.
    const auto at_or_above = std::count_if(margins.begin(), margins.end(), [&](double m) { return m >= r.report.threshold; });
    CHECK(at_or_above == 100);
    CHECK(r.report.events == at_or_above);
    CHECK(r.report.event_rank == 4);
    CHECK(r.w_sum.rows() == 4);
  }
  {
    // Every token in the hyperplane x₄ = 0: the events' tokens have rank 3 = d − 1, no fit.
    const DatasetSource flat = repeated_dataset(inst, pilot, true);
    const MarginResult r = refine_wsum(flat, proxy, o);
    CHECK(r.report.events > 4);
    CHECK(r.report.event_rank == 3);
    CHECK(r.w_sum.size() == 0);
  }
}

TEST_CASE("joint_margin: the smallest margin when every proxy picks the same token, −∞ when any picks another", "[stage3][hardening]") {
  // Row 0 of two proxies' logits over k = 3 tokens (proxy_logits' layout, rows = rows of X).
  MatD a(1, 3), b(1, 3), c(1, 3);
  a << 5, 1, 2;   // argmax 0, margin 3
  b << 4, 3.5, 0; // argmax 0, margin 0.5
  c << 1, 6, 2;   // argmax 1
  int argmax = -1;
  CHECK(joint_margin({a, b}, 0, argmax) == 0.5);
  CHECK(argmax == 0);
  CHECK(joint_margin({b, a}, 0, argmax) == 0.5);
  // One proxy elsewhere: not an event, whatever the margins (the selection must not
  // look at the first proxy alone).
  CHECK(joint_margin({a, c}, 0, argmax) == -INFINITY);
  CHECK(joint_margin({c, a}, 0, argmax) == -INFINITY);
  CHECK(joint_margin({a, b, c}, 0, argmax) == -INFINITY);
  CHECK(joint_margin({a}, 0, argmax) == 3.0);
}

namespace {
// Stage 3 with a proxy 10% off the first head (truth kept for the report's flags):
// its events, weights and counts, as compared across process counts.
struct MarginCase {
  Instance inst = test::generated_instance(8, 2, 2, 3, 4);
  MatD proxy = inst.layer.heads[0].theta * 1.1;
  MarginOptions options = [] {
    MarginOptions o;
    o.max_samples = 600001;  // ends inside a batch of 262144
    o.target_events = 100000;  // the whole budget
    o.accept_fraction = 1e-2;
    return o;
  }();
};

bool same_events(const MarginResult& a, const MarginResult& b) {
  if (a.selected.size() != b.selected.size()) return false;
  for (size_t e = 0; e < a.selected.size(); ++e)
    if (a.selected[e].sample != b.selected[e].sample || a.selected[e].row != b.selected[e].row ||
        a.selected[e].argmax != b.selected[e].argmax || a.selected[e].margin != b.selected[e].margin)
      return false;
  return a.w_sum == b.w_sum && a.report.standard_error == b.report.standard_error;
}
}  // namespace

TEST_CASE("stage 3's loop shared by 2 and 3 processes gives the events and W_sum of one process", "[stage3][determinism]") {
  const MarginCase c;
  const SampleOracle oracle(c.inst, 3);
  const MarginResult one = refine_wsum(oracle, c.proxy, c.options, &c.inst.layer);
  REQUIRE(one.report.events > 0);
  REQUIRE(one.report.samples_by_process == std::vector<int64_t>{one.report.samples});
  for (int size : {2, 3}) {
    std::vector<MarginResult> shared(static_cast<size_t>(size));
    test::run_as_ranks(size, [&](const Processes& p) {
      MarginOptions o = c.options;
      o.processes = p;
      shared[static_cast<size_t>(p.rank)] = refine_wsum(oracle, c.proxy, o, &c.inst.layer);
    });
    for (int r = 0; r < size; ++r) {
      const MarginResult& s = shared[static_cast<size_t>(r)];
      INFO(size << " processes, rank " << r);
      CHECK(same_events(s, one));
      REQUIRE(s.report.truth.has_value());
      CHECK(s.report.truth->true_not_large_margin == one.report.truth->true_not_large_margin);
      int64_t sum = 0;
      for (int64_t n : s.report.samples_by_process) sum += n;
      CHECK(s.report.samples_by_process.size() == static_cast<size_t>(size));
      CHECK(sum == one.report.samples);
    }
  }
  // The tester: a process that keeps only its own events finds other ones.
  MarginOptions alone = c.options;
  alone.processes.rank = 0;
  alone.processes.size = 2;
  alone.processes.all_gather = [](const std::vector<double>& mine) { return mine; };
  CHECK_FALSE(same_events(refine_wsum(oracle, c.proxy, alone, &c.inst.layer), one));
}
