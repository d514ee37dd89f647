// A second baseline: the learner's polishing step alone (stages/polish/polish.hpp,
// Levenberg–Marquardt with variable projection) started from random layers
// instead of the stage-6 winner, several starts, the best by validation error
// kept. It measures what stages 1–6 add: where local search from random starts
// already recovers the heads, the paper's stages are not what recovers them.
//
// Starting point of start s (s = 0, 1, …), head i: Θ_i = r · G/‖G‖_F with G
// the d×d standard normal matrix gaussian_matrix(init_seed,
// Stream::polish_start, s, i) and r = init_theta_norm when it is positive,
// else r = radius · u with u uniform in [0, 1) from the same stream's counter
// (s, i, 0, 1) (docs/formats.md, "Random streams"): a random direction at a
// random norm inside the ball ‖Θ‖_F ≤ R the paper's learner also assumes. W_i
// is not drawn: polishing solves W for the current Θ by least squares, so the
// start's W (set to 0) never enters a fit.
//
// Samples: the first `validation_samples` of the stream are the shared
// validation set that picks the best start; start s fits on the next chunk of
// P = polish_samples_needed samples (fresh samples per start: chunk s; by
// default each fit trains on 4× polishing's default training set, see
// random_polish.cpp). A
// finite dataset with q whole chunks after the validation set is cycled: start
// s uses chunk s mod q. The run is a function of (source, options) for any
// thread count unless the time budget ends it: no new start after
// max_seconds, and a running fit stops at its next iteration after it (start 0
// always runs, cut by the budget like any other).
#pragma once

#include "data/oracle.hpp"
#include "learn/evaluate.hpp"
#include "stages/polish/polish.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mha {

struct RandomPolishOptions {
  int m = 0;
  int threads = 1;
  int starts = 8;                    // most starts
  int64_t max_samples = 0;           // most samples drawn, validation set included (0: no sample budget)
  double max_seconds = 0;            // no new start, nor fit iteration, after this (0: none)
  int64_t validation_samples = 1000;
  uint64_t init_seed = 1;
  double init_theta_norm = 0;        // ‖Θ_i‖_F of every start head (0: radius · uniform[0, 1) per head)
  double radius = 20;                // R, as the paper's learner's --radius
  PolishOptions polish;              // each fit's options; samples 0: 4× polishing's default (first_sample, threads, max_seconds set per start)
  int64_t test_samples = 20000;      // for the report's test error (truth only)
  uint64_t test_seed = 1;
};

struct RandomPolishStart {
  int start = 0;
  uint64_t first_sample = 0;         // the fit's chunk: samples first_sample .. first_sample + P − 1
  int64_t samples = 0;               // fresh samples this start drew (0 when it reused a dataset's chunk)
  double seconds = 0;
  std::vector<double> theta_norms;   // ‖Θ_i‖_F of the starting point
  int iterations = 0;
  std::string stop_reason;           // polishing's
  double train_error = NAN;          // polishing's relative training error at its end
  double fit_validation_error = NAN; // on the fit's own validation samples (polishing's)
  double validation_error = NAN;     // on the shared validation set: what picks the best start
  double theta_max_rel = NAN, w_max_rel = NAN;  // against the truth, when given (report only)
};

struct RandomPolishReport {
  std::vector<RandomPolishStart> starts;
  int best_start = -1;               // the returned layer's start (smallest shared validation error)
  int64_t samples_per_fit = 0, samples_total = 0, validation_samples = 0;
  double seconds = 0;
  std::string stop_reason;           // "starts", "samples", "time"
  bool ok = false;
  std::string message;
  std::optional<LayerErrors> errors;
};

struct RandomPolishResult {
  Layer layer;
  RandomPolishReport report;
};

// One-line problem with the options on this source (too few samples for the
// validation set and one fit, in the data or the budget), "" when usable.
std::string check_random_polish(const SampleSource& source, const RandomPolishOptions& options);

// Start s's starting point (exposed for the tests).
Layer random_polish_start(int d, int start, const RandomPolishOptions& options);

RandomPolishResult random_polish(const SampleSource& source, const RandomPolishOptions& options,
                                 const Instance* truth = nullptr);

nlohmann::json to_json(const RandomPolishReport& report);
std::string format_table(const RandomPolishReport& report);

}  // namespace mha
