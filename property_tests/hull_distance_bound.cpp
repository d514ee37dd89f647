// The hull from the body (proofs/certification.md, "The hull from the body"):
// when every true Θ_i lies in every slab of K, each head's distance from the
// estimated hull x0 + span(free directions) is at most √N/s_con, N the number of
// slabs and s_con the smallest constrained singular value of the weighted
// constraint matrix (SculptReport::hull_distance_bound). On random instances
// sculpted with the exact W_Σ: the premise (no slab violation) is checked and
// counted, and where it holds every head's distance is within the bound, widened
// only by the rounding of the distance and of the SVD (tolerance::hull_distance_rounding).
// Test of the tester: the bound computed with the largest singular value in place
// of s_con is rejected.
#include "test_tolerances.hpp"
#include "instances.hpp"
#include "property.hpp"
#include "stages/stage2/sculpt.hpp"

#include <cmath>
#include <functional>

using namespace mha;

namespace {
// The bound from a body's centre (mutated in the test of the tester).
using HullBound = std::function<double(const SculptResult&, int free)>;
const HullBound library_bound = [](const SculptResult& r, int) { return r.report.hull_distance_bound; };

struct HullTally {
  int cases = 0, premise_held = 0;
};

auto distance_within_bound(const HullBound& bound, HullTally* tally) {
  return [bound, tally] {
    const int d = *rc::gen::element(8, 10).as("d");
    const double scale = *rc::gen::element(2.0, 3.0).as("logit scale");
    const uint64_t seed = *rc::gen::inRange<uint64_t>(1, 1000).as("instance seed");
    const Instance inst = test::generated_instance(d, 2, 2, scale, seed);
    const SampleOracle oracle(inst, seed);
    SculptOptions o;
    o.certify.sigma_min = default_sigma_min(d, 2, 2);
    o.max_samples = 60000;
    o.selection = SculptOptions::Selection::best_rows;
    o.distinct_constraints = true;
    o.target_constraints = 2 * d * d;
    const SculptResult r = sculpt_body(oracle, inst.layer.w_sum(), 2, o, &inst.layer);
    RC_PRE(r.body.size() > 0);
    if (tally) ++tally->cases;
    bool premise = true;
    for (double v : r.report.truth->theta_violation) premise &= v == 0.0;
    if (!premise) return;  // the lemma's assumption (σ_min(C)) failed for some row: no promise
    if (tally) ++tally->premise_held;
    const double b = bound(r, 1);
    for (const auto& h : inst.layer.heads) {
      const Eigen::VectorXd th = Eigen::Map<const Eigen::VectorXd>(h.theta.data(), d * d);
      const Eigen::VectorXd rel = th - r.centre.x0;
      const double distance = (rel - r.centre.free_basis.transpose() * (r.centre.free_basis * rel)).norm();
      RC_LOG() << "distance " << distance << ", bound " << b << "\n";
      const Eigen::VectorXd& sv = r.centre.singular_values;  // ascending; s_con = sv(free), free = 1
      const double rounding = tolerance::hull_distance_rounding(std::max<long long>(r.body.size(), d * d), d * d,
                                                                sv.norm() * tolerance::bound_evaluation_factor(2 * sv.size()),
                                                                sv(1), th.norm(), r.centre.x0.norm());
      RC_ASSERT(distance <= b + rounding);
    }
  };
}
}  // namespace

TEST_CASE("every head lies within the lemma's distance of the sculpted hull", "[property][stage2]") {
  HullTally tally;
  test::property("hull distance within √N/s_con", 12, distance_within_bound(library_bound, &tally));
  INFO("cases " << tally.cases << ", premise held " << tally.premise_held);
  CHECK(tally.premise_held * 2 >= tally.cases);  // the premise must hold often enough to test anything
}

TEST_CASE("test of the tester: a hull bound from the largest singular value is rejected", "[property][stage2]") {
  const HullBound wrong = [](const SculptResult& r, int) {
    return std::sqrt(double(r.body.size())) / r.centre.singular_values(r.centre.singular_values.size() - 1);
  };
  test::property_rejects("hull bound with s_max", 12, distance_within_bound(wrong, nullptr));
}
