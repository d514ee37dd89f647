// NaN and ±∞ fed to every stage's check (the check_* of `verify`, on a small
// instance): one entry of the fast path's output replaced by NaN, +∞ or −∞ is never
// counted as agreement — the row disagrees, or that item is undecided (the row has
// more undecided items than without it). Test of the tester: stage 1's comparison
// re-done with the fault `if (difference > bound) agree = false;` on the same
// corrupted estimate, which the property rejects.
#include "instances.hpp"
#include "property.hpp"
#include "stages/stage1/reference.hpp"
#include "verify/verify.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <string>

using namespace mha;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Small sample sizes: the property is about the comparison, not the statistics.
VerifyOptions small_options() {
  VerifyOptions o;
  o.forward_samples = 4;
  o.stage1_samples = 100;
  o.certify_samples = 60;
  o.w_samples = 32;
  o.selection_samples = 50;
  o.polish_samples = 32;
  return o;
}

// Entry `at` (modulo its size) of v set to `bad`.
template <class Vector>
void corrupt(Vector& v, size_t at, double bad) {
  if (v.size() > 0) v.data()[at % static_cast<size_t>(v.size())] = bad;
}

// Each stage's fast path with one output entry replaced.
FastPaths corrupted(const std::string& stage, size_t at, double bad) {
  FastPaths f;
  const FastPaths ok;
  if (stage == "forward")
    f.forward = [=](const Layer& l, const InputBatch& x) {
      std::vector<double> y = ok.forward(l, x);
      y[at % y.size()] = bad;
      return y;
    };
  if (stage == "1")
    f.stage1 = [=](const SampleSource& s, const Stage1Options& o) {
      Stage1Result r = ok.stage1(s, o);
      corrupt(r.w_hat, at, bad);
      return r;
    };
  if (stage == "2")
    f.certify = [=](const MatD& x, const MatD& y, const MatD& b, int row, const CertifyOptions& co) {
      RowCertificate c = ok.certify(x, y, b, row, co);
      corrupt(c.v, at, bad);
      return c;
    };
  if (stage == "2 slabs")
    f.slabs = [=](const MatD& x, int row, const RowCertificate& c) {
      std::vector<SlabConstraint> slabs = ok.slabs(x, row, c);
      if (!slabs.empty()) slabs[at % slabs.size()].b = bad;
      return slabs;
    };
  if (stage == "3 proxy")
    f.min_norm = [=](const ConvexBody& body) {
      ActiveSetResult r = ok.min_norm(body);
      corrupt(r.x, at, bad);
      return r;
    };
  if (stage == "6 net")
    f.net = [=](const SampleSource& s, const Eigen::VectorXd& x0, const Eigen::MatrixXd& dirs, int m, const NetOptions& no) {
      NetCandidates c = ok.net(s, x0, dirs, m, no);
      if (!c.errors.empty()) c.errors[at % c.errors.size()] = bad;
      return c;
    };
  if (stage == "3")
    f.margin = [=](const SampleSource& s, const std::vector<MatD>& p, const MarginOptions& o, const Layer* truth) {
      MarginResult r = ok.margin(s, p, o, truth);
      corrupt(r.w_sum, at, bad);
      return r;
    };
  if (stage == "5")
    f.span = [=](const ConvexBody& body, const ConvexBody::Centre& c, int m, const SpanOptions& o) {
      SpanResult r = ok.span(body, c, m, o);
      corrupt(r.singular_values, at, bad);
      return r;
    };
  if (stage == "6")
    f.w_least_squares = [=](const MatD& d, const MatD& y) {
      std::optional<MatD> w = ok.w_least_squares(d, y);
      if (w) corrupt(*w, at, bad);
      return w;
    };
  if (stage == "polish")
    f.polish_iteration = [=](const LabelledBatch& b, const Layer& l, const PolishOptions& o) {
      PolishIteration it = ok.polish_iteration(b, l, o);
      corrupt(it.gradient, at, bad);
      return it;
    };
  return f;
}

// Never agreement: the row disagrees, or the corrupted item is one more undecided one.
bool never_agrees(const Comparison& corrupted_row, const Comparison& clean_row) {
  return disagrees(corrupted_row) || corrupted_row.undecided > clean_row.undecided;
}

}  // namespace

TEST_CASE("every check: a NaN or ±∞ in the fast path's output never agrees", "[verify][nonfinite]") {
  // The instance of test_verify.cpp's every-stage test: every stage compares on it.
  const Instance inst = mha::test::generated_instance(10, 2, 2, 3.0, 12);
  const VerifyOptions o = small_options();
  // Each fast path (and the parts' own: slabs, the proxy, the net), and the verify row it feeds.
  const std::vector<std::string> stages = {"forward", "1", "2", "2 slabs", "3", "3 proxy", "5", "6", "6 net", "polish"};
  auto row_of = [](const std::string& s) { return s.substr(0, s.find(' ')); };
  std::map<std::string, Comparison> clean;
  for (const std::string& s : stages) {
    clean[s] = verify_instance(inst, {row_of(s)}, o)[0];
    INFO("stage " << s << ": " << clean[s].detail);
    REQUIRE(clean[s].compared > 0);
    REQUIRE_FALSE(disagrees(clean[s]));
    if (s == "2 slabs") REQUIRE(clean[s].parts.at(0).compared > 0);  // certified rows: slabs to corrupt
  }
  int cases = 0;
  mha::test::property("a NaN or ±∞ in a fast path's output never agrees", 2 * static_cast<int>(stages.size()), [&] {
    const std::string stage = *rc::gen::elementOf(stages);
    const size_t at = *rc::gen::inRange<size_t>(0, 64);
    const double bad = *rc::gen::element(kNaN, kInf, -kInf);
    const Comparison row = verify_instance(inst, {row_of(stage)}, o, corrupted(stage, at, bad))[0];
    RC_LOG() << "stage " << stage << ", entry " << at << " = " << bad << ": " << verdict(row) << "; " << row.detail;
    ++cases;
    RC_ASSERT(never_agrees(row, clean[stage]));
  });
  CHECK(cases >= 2 * static_cast<int>(stages.size()));
}

TEST_CASE("test of the tester: stage 1 compared with `difference > bound` lets a NaN agree", "[verify][nonfinite]") {
  const Instance inst = mha::test::generated_instance(6, 2, 2, 3.0, 5);
  const SampleOracle oracle(inst, 1, Stream::inputs);
  const FastPaths ok;
  mha::test::property_rejects("stage 1 with the fault `difference > bound`", 6, [&] {
    const size_t at = *rc::gen::inRange<size_t>(0, 36);
    const double bad = *rc::gen::element(kNaN, kInf, -kInf);
    const Stage1Fast fast = [&](const SampleSource& s, const Stage1Options& so) {
      Stage1Result r = ok.stage1(s, so);
      corrupt(r.w_hat, at, bad);
      return r;
    };
    const Stage1SameSampleCheck s = stage1_same_sample_check(oracle, nullptr, 0, 100, 128, fast);
    Comparison wrong;  // the comparison of check_stage1 with the fault
    wrong.stage = "1";
    for (Eigen::Index e = 0; e < s.fast.size(); ++e) {
      const double difference = std::abs(s.fast.data()[e] - s.reference.data()[e]);
      ++wrong.compared;
      if (difference > s.bound.data()[e]) wrong.agree = false;
    }
    RC_ASSERT(never_agrees(wrong, Comparison{}));
  });
}
