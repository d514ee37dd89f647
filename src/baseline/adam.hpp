// The baseline a practitioner would use instead of the paper's learner: a
// student of the same form (m heads Θ_i, W_i) trained by Adam on the squared
// loss, with analytic gradients (baseline/squared_loss_gradient.hpp), on the
// same sample stream and with the same report as `mhalearn learn`.
//
// Defaults (measured while planning, docs/results.md): batch 512 of fresh
// samples, Adam(0.9, 0.999, 1e−8), learning rate 3e−3 with cosine decay to 0
// over the sample budget. At a constant rate the test error fell to 1e−30 and
// then jumped back to 1e−5, so the run also keeps the best checkpoint by
// validation error (early stopping).
//
// Samples: the first `validation_samples` of the stream are the validation set,
// training batches follow in order (a finite dataset is cycled in epochs). The
// run is a function of (source, options) for any thread count when the schedule
// runs on samples; with only a time budget (max_samples = 0) the schedule runs
// on elapsed time and the result depends on the machine.
#pragma once

#include "data/oracle.hpp"
#include "learn/evaluate.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mha {

enum class AdamInit {
  random,     // iid Gaussian heads, ‖Θ_i‖_F ≈ init_theta_norm, W_i entries N(0, init_w_scale²/d)
  symmetric,  // every head equal to head 0 of `random`: the gradient keeps them equal
};
const char* to_string(AdamInit init);
bool parse_adam_init(const std::string& name, AdamInit& out);

struct AdamOptions {
  int m = 0;
  int threads = 1;
  int64_t batch = 512;
  double learning_rate = 3e-3;       // peak rate, decayed by a cosine to 0 over the budget
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  int64_t max_samples = 20000000;    // training samples: the schedule's horizon (0: the schedule runs on max_seconds)
  double max_seconds = 0;            // stop after this (0: none)
  int64_t validation_samples = 1000;
  double target = 1e-30;             // stop once the relative validation error is below this
  // Studies only (needs the truth): stop at the first checkpoint whose max Θ and W
  // errors are both at most this (0: never). It measures "samples to reach ε".
  double stop_parameter_error = 0;
  double checkpoint_growth = 1.05;   // checkpoints at steps 1, 2, …, growing geometrically by this factor
  AdamInit init = AdamInit::random;
  double init_theta_norm = 0.1;
  double init_w_scale = 0.1;
  uint64_t init_seed = 1;
  int64_t test_samples = 20000;      // for the report's test error (truth only)
  uint64_t test_seed = 1;
};

struct AdamCheckpoint {
  int64_t step = 0, samples = 0;     // samples: validation + training drawn so far
  double seconds = 0, learning_rate = 0, train_loss = 0, validation_error = 0;
  double theta_max_rel = NAN, w_max_rel = NAN;  // against the truth, when given (report only)
};

struct AdamReport {
  std::vector<AdamCheckpoint> trajectory;
  int best_checkpoint = -1;          // the returned layer's checkpoint (smallest validation error)
  int64_t steps = 0, samples_total = 0, validation_samples = 0;
  double seconds = 0;
  std::string stop_reason;           // "budget", "time", "target", "parameter_error", "diverged"
  bool ok = false;
  std::string message;
  std::optional<LayerErrors> errors;
};

struct AdamResult {
  Layer layer;
  AdamReport report;
};

// The student's starting point (exposed for the tests and the phase-diagram study).
Layer adam_initial_layer(int d, const AdamOptions& options);

AdamResult train_adam(const SampleSource& source, const AdamOptions& options, const Instance* truth = nullptr);

nlohmann::json to_json(const AdamReport& report);
std::string format_table(const AdamReport& report);

}  // namespace mha
