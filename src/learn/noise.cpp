#include "learn/noise.hpp"

#include "util/format.hpp"
#include "numeric/tolerance.hpp"

#include <algorithm>
#include <cmath>

namespace mha {

bool labels_are_float32(const std::vector<double>& y) {
  if (y.empty()) return false;
  for (double v : y)
    if (!std::isfinite(v) || static_cast<double>(static_cast<float>(v)) != v) return false;
  return true;
}

double final_fit_bytes_per_sample(int k, int d, int m) {
  // Per sample: X and Y, the design (N·k × m·d) and its Q, two states' designs,
  // three residual-sized matrices, two CG products, the linearization's A_i and
  // X W_i, each matrix with ~48 bytes of heap bookkeeping.
  const double kd = double(k) * d;
  return 8.0 * (kd * (8 + 4.0 * m) + double(m) * k * k) + 48.0 * (1 + 2.0 * m);
}

FinalFitPlan plan_final_fit(const PolishReport& polish, int64_t polish_train_samples, int k, int d, int m,
                            const FinalFitLimits& limits) {
  FinalFitPlan plan;
  plan.available = std::max<int64_t>(limits.available, 0);
  plan.memory_cap = static_cast<int64_t>(limits.max_bytes / final_fit_bytes_per_sample(k, d, m));
  if (!polish.noise_floor) {
    plan.reason = "none: polishing reached the rounding floor, where more samples do not lower the error";
    return plan;
  }
  if (!polish.reached_floor) {  // its residual is the fit's own error, not noise: more samples would not help
    plan.reason = "none: polishing stopped at its iteration limit, not at a noise floor";
    return plan;
  }
  if (limits.noiseless) {  // measured at (10,2,3): a 512-sample local minimum's floor asked for 131072 samples, 800 s
    plan.reason = "none: the labels are noiseless (an oracle without --label-noise), so the floor is the fit's own error";
    return plan;
  }
  // The statistical error falls as ε̂/√N: it reaches the rounding level L at n₀·(ε̂/L)².
  const double ratio = polish.noise_train / polish.rounding_level;
  const double needed = static_cast<double>(polish_train_samples) * ratio * ratio;
  plan.needed = needed >= 9e18 ? int64_t{9000000000000000000} : static_cast<int64_t>(std::ceil(needed));
  plan.samples = std::min({plan.needed, plan.available, plan.memory_cap});
  if (plan.samples <= polish_train_samples) {
    plan.samples = 0;
    plan.reason = plan.available <= polish_train_samples
                      ? format("none: %lld samples available, no more than polishing used (%lld)",
                               (long long)plan.available, (long long)polish_train_samples)
                      : format("none: the noise calls for %lld samples, no more than polishing used",
                               (long long)plan.needed);
    return plan;
  }
  if (plan.samples == plan.needed)
    plan.reason = format("what the noise calls for (ε̂/L = %.1e)", ratio);
  else if (plan.samples == plan.available)
    plan.reason = limits.dataset ? "all remaining samples of the dataset" : "the oracle budget, --final-fit-samples";
  else
    plan.reason = format("the memory cap (%.1f GB at %.0f bytes per sample)", limits.max_bytes / 1e9,
                         final_fit_bytes_per_sample(k, d, m));
  return plan;
}

namespace {
constexpr int kFinalFitIterations = 10;
constexpr int64_t kFinalFitCgIterations = 200;
}  // namespace

PolishOptions final_fit_options(const PolishOptions& polish, const FinalFitPlan& plan, int64_t validation_samples,
                                uint64_t first_sample, int threads) {
  PolishOptions o = polish;
  o.samples = plan.samples;
  o.validation_samples = validation_samples;
  o.first_sample = first_sample;
  o.threads = threads;
  o.linear_solver = PolishSolver::matrix_free;  // the dense Jacobian of N samples would not fit
  if (o.statistical_stop <= 0) o.statistical_stop = PolishOptions().statistical_stop;
  // It starts at polishing's noise floor, a few Gauss–Newton steps from its own
  // (measured: 2–3 steps of 17–20 CG iterations at (16,2,2)); the caps bound the
  // cost of a run that is not, whose result validation then rejects.
  o.max_iterations = std::min(o.max_iterations, kFinalFitIterations);
  o.cg_max_iterations = std::min(o.cg_max_iterations, kFinalFitCgIterations);
  return o;
}

namespace {
// Float32 rounding: |fl32(y) − y| ≤ 2⁻²⁴|y| per entry, so its relative rms is at most 2⁻²⁴.
constexpr double kFloat32Rounding = 0x1p-24;

// The spread of the training estimate ε̂² (tolerance::noise_estimate_band) with
// max_ratio = 4: max_n ‖y_n‖²/mean_n ‖y_n‖² measured 3.3 at (16,2,2) (131072
// samples) and 3.8 at (8,2,2) (8192).
double noise_band(int64_t train_samples, int k, int d, int m) {
  return tolerance::noise_estimate_band(train_samples * k * d, 2LL * m * d * d, 4.0);
}
}  // namespace

NoiseReport assess_noise(const PolishReport& fit, int64_t train_samples, int k, int d, int m, bool float32_labels,
                         double declared, bool noiseless) {
  NoiseReport r;
  r.estimated = true;
  r.float32_labels = float32_labels;
  r.declared = declared;
  r.heldout_residual = fit.noise_heldout;
  r.heldout_samples = fit.samples - train_samples;
  const double entries = static_cast<double>(train_samples) * k * d;
  r.fit_share = 2.0 * m * d * d / entries;
  r.noise = fit.noise_train;
  r.rounding_measured = fit.rounding_measured;
  r.rounding_level = fit.rounding_level;
  r.rounding_bound = fit.rounding_bound;
  if (!fit.noise_floor) {
    r.limit = format("rounding: the residual (%.1e) is within %.0f× the rounding measured at the fit (%.1e: its "
                     "evaluation and its parameters); no label noise above it limits the error",
                     r.noise, tolerance::rounding_floor_factor(), r.rounding_measured);
    return r;
  }
  // What certification assumed: the declared level, or for float32 labels their rounding.
  const double covered = std::max(declared, float32_labels ? kFloat32Rounding : 0.0);
  const bool above_covered = r.noise * r.noise > covered * covered * (1 + noise_band(train_samples, k, d, m));
  if (!fit.reached_floor)
    r.limit = format("the fit: it stopped before a floor, so the residual (%.1e) is the noise plus the fit's own error",
                     r.noise);
  else if (noiseless)
    r.limit = format("the fit: the labels are noiseless (an oracle without --label-noise), so the residual (%.1e) above "
                     "rounding is the fit's own error (a local minimum, or too few samples)", r.noise);
  else if (covered > 0 && above_covered)
    r.limit = format("the fit, or undeclared noise: the residual (%.1e) is above the labels' known noise (%.1e) — a "
                     "local minimum of the fit, or labels noisier than declared", r.noise, covered);
  else if (float32_labels && r.noise <= kFloat32Rounding)
    r.limit = format("label noise, not the algorithm: the labels are float32 values, whose rounding (at most 2^-24 = "
                     "%.1e relative per entry) is the noise (estimated %.1e)", kFloat32Rounding, r.noise);
  else
    r.limit = format("label noise (estimated %.1e relative), not the algorithm: the fit's statistical error falls as "
                     "1/sqrt(N) with the samples it fits", r.noise);
  if (fit.reached_floor && above_covered && !noiseless)
    r.warning = format("the residual (%.1e) exceeds the noise certification assumed (%.1e): if it is noise, the slabs "
                       "may be too thin for the truth; rerun with --assume-label-noise %.1e", r.noise, covered, r.noise);
  return r;
}

NoiseReport unpolished_noise(double heldout_error, int64_t heldout_samples, bool float32_labels, double declared) {
  NoiseReport r;
  r.float32_labels = float32_labels;
  r.declared = declared;
  r.heldout_residual = std::sqrt(heldout_error);
  r.heldout_samples = heldout_samples;
  r.limit = format("undetermined: without polishing the held-out residual (%.1e) is the noise plus the paper's "
                   "stages' own error, an upper bound on the noise", r.heldout_residual);
  return r;
}

nlohmann::json to_json(const NoiseReport& n) {
  nlohmann::json j = {{"estimated", n.estimated}, {"float32_labels", n.float32_labels}, {"declared", n.declared},
                      {"heldout_residual", n.heldout_residual}, {"heldout_samples", n.heldout_samples},
                      {"limit", n.limit}};
  if (n.estimated) {
    j["fit_share"] = n.fit_share;
    j["noise"] = n.noise;
    j["rounding_measured"] = n.rounding_measured;
    j["rounding_level"] = n.rounding_level;
    j["rounding_bound"] = n.rounding_bound;
    j["final_fit"] = {{"samples", n.final_fit.samples}, {"needed", n.final_fit.needed},
                      {"available", n.final_fit.available}, {"memory_cap", n.final_fit.memory_cap},
                      {"reason", n.final_fit.reason}};
  }
  if (!n.warning.empty()) j["warning"] = n.warning;
  return j;
}

std::string format_noise(const NoiseReport& n) {
  std::string out;
  if (n.estimated)
    out += format("label noise: %.2e relative (training residual, corrected for the fit's parameters); held-out "
                  "residual %.2e on %lld samples (noise ⊕ the fit's own error; expected share p/n = %.1e); rounding "
                  "level %.1e (measured %.1e, a priori bound %.1e)%s\n",
                  n.noise, n.heldout_residual, (long long)n.heldout_samples, n.fit_share, n.rounding_level,
                  n.rounding_measured, n.rounding_bound, n.float32_labels ? "; float32 labels" : "");
  else
    out += format("label noise: at most %.2e relative (held-out residual on %lld samples)%s\n", n.heldout_residual,
                  (long long)n.heldout_samples, n.float32_labels ? "; float32 labels" : "");
  out += "limited by: " + n.limit + "\n";
  if (n.estimated) out += "final fit: " + (n.final_fit.samples > 0 ? format("%lld samples, ", (long long)n.final_fit.samples) : std::string()) + n.final_fit.reason + "\n";
  if (!n.warning.empty()) out += "warning: " + n.warning + "\n";
  return out;
}

}  // namespace mha
