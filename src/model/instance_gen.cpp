#include "model/instance_gen.hpp"

#include "numeric/rng.hpp"

#include <cmath>

namespace mha {

bool condition_depends_on_draw(const std::string& name) {
  return name != "heads_vs_log_d" && name != "k_le_d" && name != "km_le_d" && name != "theta_norm_bound";
}

std::string validate_generate_options(const GenerateOptions& o) {
  if (o.m < 1) return "m must be at least 1, got " + std::to_string(o.m);
  if (o.d < 1) return "d must be at least 1, got " + std::to_string(o.d);
  if (o.d > 1024) return "d = " + std::to_string(o.d) + " is larger than the supported 1024";
  if (o.m > 64) return "m = " + std::to_string(o.m) + " is larger than the supported 64";
  if (o.k < 1) return "k must be at least 1, got " + std::to_string(o.k);
  if (o.k > o.d) return "k = " + std::to_string(o.k) + " exceeds d = " + std::to_string(o.d) + " (MATH.md §2 needs k <= d)";
  if (!std::isfinite(o.scale) || o.scale <= 0 || o.scale > 1e6)
    return "scale must be a positive number at most 1e6, got " + std::to_string(o.scale);
  if (o.max_attempts < 1) return "max_attempts must be at least 1";
  if (!(o.coherence >= 0 && o.coherence < 1)) return "coherence must be in [0, 1), got " + std::to_string(o.coherence);
  return "";
}

GenerateResult generate_instance(const GenerateOptions& o, const ConditionThresholds& thresholds) {
  GenerateResult result;
  if (auto e = validate_generate_options(o); !e.empty()) {
    result.error = e;
    return result;
  }
  std::string last_failure;
  for (int attempt = 0; attempt < o.max_attempts; ++attempt) {
    Instance inst;
    inst.k = o.k;
    inst.inputs = o.inputs;
    for (int i = 0; i < o.m; ++i) {
      MatD theta = gaussian_matrix(o.seed, Stream::instance, attempt, 2 * i, o.d);
      if (o.coherence > 0) {
        const MatD common = gaussian_matrix(o.seed, Stream::instance, attempt, 1u << 20, o.d);
        theta = std::sqrt(o.coherence) * common / common.norm() + std::sqrt(1 - o.coherence) * theta / theta.norm();
      }
      theta *= o.scale / theta.norm();
      MatD w = gaussian_matrix(o.seed, Stream::instance, attempt, 2 * i + 1, o.d) / std::sqrt(double(o.d));
      inst.layer.heads.push_back({theta, w});
    }
    ConditionReport report = check_conditions(inst, thresholds);
    bool acceptable = true;
    for (const auto& c : report.checks)
      if (!c.pass && condition_depends_on_draw(c.name) && !(o.coherence > 0 && c.name == "theta_incoherence")) {
        acceptable = false;
        last_failure = c.name;
      }
    if (acceptable) {
      result.ok = true;
      result.instance = std::move(inst);
      result.attempts = attempt + 1;
      result.report = std::move(report);
      return result;
    }
  }
  result.error = "no draw satisfied condition " + last_failure + " in " + std::to_string(o.max_attempts) +
                 " attempts; relax its threshold or change d, m";
  return result;
}

}  // namespace mha
