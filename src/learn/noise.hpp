// Labels as users have them (proofs/label_noise.md): after the paper's stages
// and polishing, how noisy the labels are, whether the noise — not the
// algorithm — limits the error, and the final fit on as many samples as the
// noise calls for.
//
// The estimate. The realizable model has zero residual, so at a converged fit
// the residual is the labels' noise. On the training samples its expected
// relative power is ε²(1 − p/n) (p = 2md² parameters fitted on n = N·k·d
// residual entries), so ε̂ = √(cost·n/(n − p)) — the report's `noise`. On
// held-out samples the relative rms is √(ε² + e_fit²), the noise ⊕ the fit's
// own error, an upper bound that needs no assumption about the fit; at a
// well-conditioned optimum e_fit² ≈ ε²·p/n (`fit_share`), but on polishing's
// few samples the fit's error can be many times that, which is one more reason
// for the final fit. Relative means what --label-noise means: rms of the noise
// over rms of the labels.
//
// The floor. Polishing compares the residual with its rounding level (the fit's
// evaluation measured against MPFR, tolerance::rounding_floor_factor): below it
// the floor is rounding; above it, noise. Labels that are all float32 values
// (stored as float32, or float32 cast to float64) carry rounding noise of at most
// 2⁻²⁴ relative per entry (~2⁻²⁴/√3 rms): the floor is then named as that.
//
// The final fit. With noise σ the parameter error of the least-squares fit on N
// samples falls like σ/√N, so the 512-odd samples of polishing leave an error
// of order ε. The final fit is polishing again (matrix-free solver, statistical
// stop) on N samples: what the noise calls for — n₀·(ε̂/L)², the samples at
// which the statistical error would reach the rounding level L from polishing's
// n₀ — capped by the data (all remaining samples of a dataset) or the oracle
// budget, and by memory. It replaces the layer when its held-out error is lower.
#pragma once

#include "data/oracle.hpp"
#include "stages/polish/polish.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace mha {

// True when there are labels and every one is finite and exactly a float32 value.
// Double labels pass by chance with probability ~2⁻²⁹ per entry.
bool labels_are_float32(const std::vector<double>& y);

// Bytes per training sample of a matrix-free polishing run (Data, design, its Q,
// the states' residuals, the linearization's caches, CG's products), measured
// 4.3 KB at (16,2,2) against this formula's 4.4 KB.
double final_fit_bytes_per_sample(int k, int d, int m);

struct FinalFitPlan {
  int64_t samples = 0;       // training samples of the final fit (0: none)
  int64_t needed = 0;        // what the noise calls for: n₀·(ε̂/L)²
  int64_t available = 0;     // what the data or the budget allow (after the held-out samples)
  int64_t memory_cap = 0;    // what max_bytes allows
  std::string reason;        // why this many, or why none
};

struct FinalFitLimits {
  int64_t available = 0;          // training samples the source can give (dataset: remaining; oracle: budget)
  bool dataset = false;           // available counts a dataset's remaining samples (else an oracle budget)
  double max_bytes = 4e9;
  int64_t validation_samples = 1024;
  bool noiseless = false;         // the source's labels are noiseless (SampleSource::noiseless): no final fit
};

// The plan from polishing's report: no final fit unless polishing reached a
// noise floor; otherwise min(needed, available, memory cap), when that exceeds
// what polishing used.
FinalFitPlan plan_final_fit(const PolishReport& polish, int64_t polish_train_samples, int k, int d, int m,
                            const FinalFitLimits& limits);

// The final fit's options: polishing's, with N training samples, the plan's
// validation samples, the matrix-free solver and the statistical stop.
PolishOptions final_fit_options(const PolishOptions& polish, const FinalFitPlan& plan, int64_t validation_samples,
                                uint64_t first_sample, int threads);

struct NoiseReport {
  bool estimated = false;          // from a polished fit (else only the held-out residual's upper bound)
  bool float32_labels = false;
  double declared = 0;             // the level certification assumed (--assume-label-noise / --label-noise)
  double heldout_residual = 0;     // √(held-out error) at the final layer: the noise ⊕ the fit's own error
  int64_t heldout_samples = 0;
  double fit_share = 0;            // p/n: the fit's expected share of heldout² at a well-conditioned optimum
  double noise = 0;                // √(cost·n/(n − p)) from the training residual at the fit
  double rounding_measured = 0, rounding_level = 0, rounding_bound = 0;
  std::string limit;               // what limits the achievable error, one line
  std::string warning;             // "" or: the estimate exceeds the level certification assumed
  FinalFitPlan final_fit;
};

// The report from the last fit (polishing, or the final fit when it ran and was
// kept) with `train_samples` training samples.
// `noiseless`: the source's labels are known to be noiseless (SampleSource::noiseless),
// so a floor above rounding is the fit's own error.
NoiseReport assess_noise(const PolishReport& fit, int64_t train_samples, int k, int d, int m, bool float32_labels,
                         double declared, bool noiseless = false);
// Without polishing: only the held-out residual at the paper's layer, an upper bound.
NoiseReport unpolished_noise(double heldout_error, int64_t heldout_samples, bool float32_labels, double declared);

nlohmann::json to_json(const NoiseReport& noise);
// Lines for the learner's table.
std::string format_noise(const NoiseReport& noise);

}  // namespace mha
