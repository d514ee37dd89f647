// Output and evaluation (MATH.md §3; proofs/end_to_end_recovery.md): the
// learned heads are matched to the true ones by the best permutation, so the
// reported errors do not depend on the order in which the learner returns its
// heads — heads are the layer's only symmetry (F is invariant to their order,
// property_tests/head_permutation_invariance.cpp). Checked: a perturbed copy of
// the truth, with its heads shuffled, is matched back to the right heads, with
// the same errors as the unshuffled copy, and the truth itself has error 0.
// Test of the tester: a matcher that keeps the learner's order instead of
// searching the best permutation is rejected.
#include "test_tolerances.hpp"
#include "generators.hpp"
#include "learn/evaluate.hpp"
#include "property.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>

using namespace mha;

namespace {

using MatchHeads = std::function<LayerErrors(const Layer&, const Instance&)>;

const MatchHeads best_permutation = [](const Layer& learned, const Instance& truth) {
  return compare_layers(learned, truth, 1, 0, 1);
};

// Mistake: learned head i is matched to true head i (the learner's order kept, no search over permutations).
LayerErrors match_in_given_order(const Layer& learned, const Instance& truth) {
  auto rel = [](const MatD& a, const MatD& b) { return (a - b).norm() / (b.norm() > 0 ? b.norm() : 1.0); };
  LayerErrors e;
  for (int i = 0; i < truth.m(); ++i) {
    e.permutation.push_back(i);
    e.theta_rel.push_back(rel(learned.heads[i].theta, truth.layer.heads[i].theta));
    e.w_rel.push_back(rel(learned.heads[i].w, truth.layer.heads[i].w));
  }
  e.theta_max_rel = *std::max_element(e.theta_rel.begin(), e.theta_rel.end());
  e.w_max_rel = *std::max_element(e.w_rel.begin(), e.w_rel.end());
  return e;
}

auto matched_back(const MatchHeads& match) {
  return [match] {
    auto c = *mha::test::gen_layer_case(3, 8, 5).as("case");
    c.flavour = mha::test::Flavour::generic;  // near-duplicate heads make the best match ambiguous by design
    Instance truth;
    truth.layer = mha::test::make_layer(c);
    truth.k = c.shape.k;
    const int m = c.shape.m;
    // The claim needs heads that are told apart by more than the perturbation:
    // every pair differs by at least 10% in Θ or in W (a stated precondition).
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j)
        if (i != j) {
          const auto& a = truth.layer.heads[i];
          const auto& b = truth.layer.heads[j];
          RC_PRE((a.theta - b.theta).norm() > 0.1 * b.theta.norm() || (a.w - b.w).norm() > 0.1 * b.w.norm());
        }
    // Perturb each head by a relative amount well below the heads' mutual distances.
    Layer copy = truth.layer;
    for (int i = 0; i < m; ++i) {
      copy.heads[i].theta *= 1 + 1e-3 * (i + 1);
      copy.heads[i].w *= 1 - 1e-3 * (i + 1);
    }
    std::vector<int> order(m);
    std::iota(order.begin(), order.end(), 0);
    std::vector<int> shuffled_order = order;
    std::mt19937 rng(*rc::gen::arbitrary<uint32_t>().as("shuffle seed"));
    std::shuffle(shuffled_order.begin(), shuffled_order.end(), rng);
    Layer shuffled;
    for (int i = 0; i < m; ++i) shuffled.heads.push_back(copy.heads[shuffled_order[i]]);
    const LayerErrors plain = match(copy, truth);
    const LayerErrors matched = match(shuffled, truth);
    const LayerErrors self = match(truth.layer, truth);
    for (int i = 0; i < m; ++i) RC_ASSERT(shuffled_order[matched.permutation[i]] == i);
    RC_ASSERT(matched.theta_rel == plain.theta_rel);
    RC_ASSERT(matched.w_rel == plain.w_rel);
    RC_ASSERT(std::abs(matched.theta_max_rel - 1e-3 * m) <=
              tolerance::scaled_copy_relative_error(1e-3 * m, truth.layer.heads[m - 1].theta.size()));
    RC_ASSERT(self.theta_max_rel == 0.0);
    RC_ASSERT(self.w_max_rel == 0.0);
  };
}

}  // namespace

TEST_CASE("matching learned heads to the truth is invariant to head order", "[property][learn]") {
  mha::test::property("shuffled, perturbed copies are matched back (m ≤ 5)", 200, matched_back(best_permutation));
}

TEST_CASE("test of the tester: head matching rejects keeping the given order", "[property][learn][tester]") {
  mha::test::property_rejects("learned heads matched in the given order", 40, matched_back(match_in_given_order));
}
