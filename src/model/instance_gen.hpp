// Random instances that satisfy the conditions of MATH.md §2.
//
// Θ_i has iid Gaussian entries rescaled to ‖Θ_i‖_F = scale (so a logit
// x Θ x'ᵀ between independent Boolean tokens has standard deviation `scale`);
// W_i has iid N(0, 1/d) entries (coherence: see GenerateOptions). A draw that fails a condition depending on
// the draw is redrawn (attempt a uses counters (a, ...)), so the result is a
// pure function of the options and the seed.
#pragma once

#include "model/conditions.hpp"
#include "model/layer.hpp"

#include <cstdint>
#include <string>

namespace mha {

struct GenerateOptions {
  int d = 16, k = 2, m = 2;
  double scale = 6.0;
  // 0: independent heads. c in (0, 1): Θ_i = √c·U_0 + √(1−c)·U_i (unit-norm Gaussian
  // U's, then rescaled), so every pair of Θ's has cosine ≈ c: nearly parallel heads for
  // the phase-diagram study. theta_incoherence then fails by design and is not redrawn.
  double coherence = 0.0;
  InputKind inputs = InputKind::boolean;
  uint64_t seed = 1;
  int max_attempts = 64;
};

struct GenerateResult {
  bool ok = false;
  std::string error;      // when !ok: one line
  Instance instance;
  int attempts = 0;       // draws made, including the accepted one
  ConditionReport report; // of the accepted draw
};

// Conditions fixed by the options rather than by the draw (regime, scale bound):
// redrawing cannot fix them, so they are reported, not retried.
bool condition_depends_on_draw(const std::string& name);

std::string validate_generate_options(const GenerateOptions& options);
GenerateResult generate_instance(const GenerateOptions& options, const ConditionThresholds& thresholds = {});

}  // namespace mha
