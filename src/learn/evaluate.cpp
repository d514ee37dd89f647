#include "learn/evaluate.hpp"

#include "data/oracle.hpp"
#include "stages/stage6/net.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace mha {

LayerErrors compare_layers(const Layer& learned, const Instance& truth, uint64_t seed, int64_t test_samples, int threads,
                           const Processes& processes) {
  const int m = truth.m();
  if (learned.m() != m || learned.d() != truth.d()) throw std::invalid_argument("compare_layers: shapes differ");
  if (m > 8) throw std::invalid_argument("compare_layers: m > 8 heads (m! permutations)");
  // Relative error; absolute when the true matrix is 0 (the SQ-hard family's extra head has Θ = 0).
  auto rel = [](const MatD& a, const MatD& b) { return (a - b).norm() / (b.norm() > 0 ? b.norm() : 1.0); };
  std::vector<int> perm(m);
  std::iota(perm.begin(), perm.end(), 0);
  LayerErrors best;
  double best_score = INFINITY;
  do {
    double score = 0;
    for (int i = 0; i < m; ++i) {
      const double t = rel(learned.heads[perm[i]].theta, truth.layer.heads[i].theta);
      const double w = rel(learned.heads[perm[i]].w, truth.layer.heads[i].w);
      score += t * t + w * w;
    }
    if (score < best_score) {
      best_score = score;
      best.permutation = perm;
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  if (best.permutation.empty()) {  // every score NaN (a diverged layer): errors are reported as NaN
    best.permutation.resize(m);
    std::iota(best.permutation.begin(), best.permutation.end(), 0);
  }
  for (int i = 0; i < m; ++i) {
    best.theta_rel.push_back(rel(learned.heads[best.permutation[i]].theta, truth.layer.heads[i].theta));
    best.w_rel.push_back(rel(learned.heads[best.permutation[i]].w, truth.layer.heads[i].w));
  }
  best.theta_max_rel = *std::max_element(best.theta_rel.begin(), best.theta_rel.end());
  best.w_max_rel = *std::max_element(best.w_rel.begin(), best.w_rel.end());
  if (test_samples > 0) {
    // Each process draws and evaluates its block of the test samples only.
    const SampleOracle test(truth, seed, Stream::test_inputs);
    const auto [first, end] = processes.share(test_samples);
    const LabelledBatch mine = test.draw(static_cast<uint64_t>(first), end - first, threads);
    best.test_relative_error =
        relative_error_of_block(learned, mine.x, 0, mine.x.count, mine.y.data(), threads, processes);
    best.test_samples = test_samples;
  }
  return best;
}

nlohmann::json errors_json(const LayerErrors& e) {
  return {{"theta_max_rel", e.theta_max_rel}, {"w_max_rel", e.w_max_rel}, {"theta_rel", e.theta_rel}, {"w_rel", e.w_rel},
          {"permutation", e.permutation}, {"test_rel", e.test_relative_error},
          {"test_relative_error", e.test_relative_error}, {"test_samples", e.test_samples}};
}

}  // namespace mha
