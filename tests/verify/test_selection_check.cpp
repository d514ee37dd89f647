// Stage 3's selection on two paths (stages/stage3/selection_check.hpp): the
// reference margin's argmax, runner-up and band pinned on hand-computed logits,
// the joint margin's decided/undecided rule with one proxy undecided, and
// compare_selection's bookkeeping (which samples it re-decides, the later events,
// its counts) from a first sample other than 0. Each case names the fault it rejects.
#include "instances.hpp"
#include "numeric/precision.hpp"
#include "numeric/tolerance.hpp"
#include "stages/stage3/selection_check.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

using namespace mha;
namespace tol = mha::tolerance;

namespace {
// Three tokens on a line of R², proxy I: row 0's logits are x_0·x_b = x_b's first coordinate.
MatD tokens(double x1, double x2) {
  MatD x(3, 2);
  x << 1, 0, x1, 0, x2, 0;
  return x;
}
}  // namespace

TEST_CASE("reference margin: the argmax and the runner-up are found at any index, the band is its formula",
          "[verify][stage3]") {
  const MatD identity = MatD::Identity(2, 2);
  // Logits (1, 2, 3): the argmax is the last token (a loop one short would stop at 1).
  const ReferenceMargin last = reference_margin(tokens(2, 3), identity, 0, 128);
  CHECK(last.argmax == 2);
  CHECK(last.margin == 1.0);
  // Logits (1, 3, 2): the runner-up is the last token (margin 1, not 3 − 1 = 2).
  const ReferenceMargin runner_up = reference_margin(tokens(3, 2), identity, 0, 128);
  CHECK(runner_up.argmax == 1);
  CHECK(runner_up.margin == 1.0);
  // Logits (1, 3, 3): a tie has margin 0 (the argmax is not its own runner-up's rival twice).
  CHECK(reference_margin(tokens(3, 3), identity, 0, 128).margin == 0.0);
  // Logits (1, 5, 2): margin 3, the runner-up not the first token.
  CHECK(reference_margin(tokens(5, 2), identity, 0, 128).margin == 3.0);

  // The band at 64 bits, where the reference's own error term is visible beside the
  // double bound: M = max_b |x_0||P||x_b| = 3, d = 2, the reference's depth 2d + 2 = 6.
  unsigned bits = 0;
  double band64 = 0;
  {
    ScopedPrecision precision(64);
    bits = current_precision_bits();
    band64 = reference_margin(tokens(2, 3), identity, 0, 64).band;
  }
  const double expected = tol::logit_margin_bound(3.0, 1.0, 2) + 2.0 * tol::reference_relative_error(bits, 6) * 3.0;
  CHECK(band64 == expected);
  // The term matters at this precision: without it, or with another depth, the band moves.
  CHECK(band64 != tol::logit_margin_bound(3.0, 1.0, 2));
  CHECK(band64 != tol::logit_margin_bound(3.0, 1.0, 2) + 2.0 * tol::reference_relative_error(bits, 4) * 3.0);
}

TEST_CASE("joint margin: one proxy undecided leaves the row undecided, whatever the decided one says",
          "[verify][stage3]") {
  const MatD x = tokens(2, 3);
  const MatD decided = MatD::Identity(2, 2);  // argmax 2, margin 1, band ~1e-15
  const MatD undecided = MatD::Zero(2, 2);    // every logit 0: margin 0 within its band 0 (not beyond it)
  REQUIRE(reference_margin(x, decided, 0, 128).margin > reference_margin(x, decided, 0, 128).band);
  REQUIRE(reference_margin(x, undecided, 0, 128).argmax == 0);  // not the decided proxy's argmax
  // A decided and an undecided proxy with different argmaxes: undecided, not "never an event"
  // (that takes both decided), and not a joint margin (that takes every proxy decided).
  CHECK_FALSE(reference_joint_margin(x, {decided, undecided}, 0, 128).has_value());
  CHECK_FALSE(reference_joint_margin(x, {undecided, decided}, 0, 128).has_value());
  // Both decided, different argmaxes: never an event.
  MatD swap(2, 2);
  swap << -1, 0, 0, 1;  // logits (−1, −2, −3): argmax 0
  const std::optional<ReferenceMargin> never = reference_joint_margin(x, {decided, swap}, 0, 128);
  REQUIRE(never.has_value());
  CHECK(never->margin == -std::numeric_limits<double>::infinity());
  // Both decided, the same argmax: the smaller margin with the larger band.
  const std::optional<ReferenceMargin> joint = reference_joint_margin(x, {decided, 2.0 * decided}, 0, 128);
  REQUIRE(joint.has_value());
  CHECK(joint->argmax == 2);
  CHECK(joint->margin == 1.0);
  CHECK(joint->band == reference_margin(x, 2.0 * decided, 0, 128).band);
}

TEST_CASE("selection: the examined samples start after the first sample and the pilot; later events are re-decided once",
          "[verify][stage3]") {
  const Instance inst = mha::test::generated_instance(6, 3, 2, 3.0, 5);
  const SampleOracle oracle(inst, 1, Stream::inputs);
  const MatD proxy = (inst.layer.heads[0].theta + inst.layer.heads[1].theta) / 2;
  // Stage 3 ran from sample 4 with a pilot of 1: the examined samples start at 5.
  const uint64_t first = 4;
  const int64_t pilot = 1, examined = 5;
  auto margins = [&](int64_t sample) {
    const MatD x = oracle.draw(static_cast<uint64_t>(sample), 1, 1).x.sample(0);
    std::vector<ReferenceMargin> out;
    for (int a = 0; a < x.rows(); ++a) out.push_back(reference_margin(x, proxy, a, 128));
    return out;
  };
  const std::vector<ReferenceMargin> at5 = margins(examined), at6 = margins(examined + 1);
  REQUIRE(at5.size() == 3);
  // τ just below the last row's margin of sample 5 and sample 6's largest: both are
  // kept, and every row of samples 5 and 6 lies far outside its band of τ (each decides).
  double largest6 = 0;
  for (const ReferenceMargin& r : at6) largest6 = std::max(largest6, r.margin);
  const double tau = std::min(at5[2].margin, largest6) * (1 - 1e-9);
  for (const auto& rows : {at5, at6})
    for (const ReferenceMargin& r : rows) REQUIRE(std::abs(r.margin - tau) > 1e3 * r.band);
  int later_row = -1;
  for (int a = 0; a < 3; ++a)
    if (at6[a].margin >= tau) later_row = a;
  REQUIRE(later_row >= 0);  // sample 6, the first after the examined prefix, has a kept row

  // The fast selection: sample 5's rows as the reference decides them (or with its last
  // row dropped), and one later event at sample 6.
  auto fast = [&](bool drop_last_row) {
    MarginResult r;
    r.report.threshold = tau;
    r.report.pilot_samples = pilot;
    r.report.samples = 100;
    for (int a = 0; a < 3; ++a)
      if (at5[a].margin >= tau && !(drop_last_row && a == 2))
        r.selected.push_back({examined, a, at5[a].argmax, at5[a].margin});
    r.selected.push_back({examined + 1, later_row, at6[later_row].argmax, at6[later_row].margin});
    return r;
  };
  auto detail = [&](int rows, int prefix, int later, int agree, int disagree) {
    char head[64];
    std::snprintf(head, sizeof head, "τ = %.6g; ", tau);
    return std::string(head) + std::to_string(rows) + " rows re-decided (every row of " + std::to_string(prefix) +
           " examined samples and " + std::to_string(later) + " later kept events): " + std::to_string(agree) +
           " agree, 0 undecided, " + std::to_string(disagree) + " disagree";
  };

  const ComparisonPart good = compare_selection(oracle, {proxy}, fast(false), first, 1, 128);
  CHECK(good.agree);
  CHECK(good.undecided == 0);
  CHECK(good.detail == detail(4, 1, 1, 4, 0));

  // Sample 5's last row dropped by the fast path, kept by the reference: one disagreement.
  const ComparisonPart wrong = compare_selection(oracle, {proxy}, fast(true), first, 1, 128);
  CHECK_FALSE(wrong.agree);
  CHECK(wrong.detail == detail(4, 1, 1, 3, 1));

  // No examined prefix: only the kept events are re-decided, each once, from its own sample.
  const MarginResult events = fast(false);
  const ComparisonPart none = compare_selection(oracle, {proxy}, events, first, 0, 128);
  CHECK(none.agree);
  const int kept = static_cast<int>(events.selected.size());
  CHECK(none.detail == detail(kept, 0, kept, kept, 0));
}
