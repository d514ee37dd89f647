// Output and evaluation (MATH.md §3.8): the learned heads are matched to the true
// ones by the best permutation; reported are max_i ‖Θ̂_i − Θ_i‖_F/‖Θ_i‖_F (absolute
// when Θ_i = 0), the
// same for W, and the relative test error E‖F̂ − F‖² / E‖F‖² on fresh samples
// (the test stream, never seen by the learner).
#pragma once

#include "model/layer.hpp"
#include "util/processes.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace mha {

struct LayerErrors {
  std::vector<int> permutation;  // learned head permutation[i] is matched to true head i
  std::vector<double> theta_rel, w_rel;
  double theta_max_rel = 0, w_max_rel = 0;
  double test_relative_error = 0;
  int64_t test_samples = 0;
};

// The permutation minimises Σ_i (‖Θ̂_π(i) − Θ_i‖²/‖Θ_i‖² + ‖Ŵ_π(i) − W_i‖²/‖W_i‖²) over all m!
// (m ≤ 8). Test samples come from Stream::test_inputs with `seed`; `processes`
// share them, each drawing and evaluating its block (the same bytes for any number).
LayerErrors compare_layers(const Layer& learned, const Instance& truth, uint64_t seed, int64_t test_samples, int threads,
                           const Processes& processes = {});

// The reports' "errors" object (both learners; docs/formats.md).
nlohmann::json errors_json(const LayerErrors& e);

}  // namespace mha
