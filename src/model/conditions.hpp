// The non-degeneracy conditions of MATH.md §2, measured on an instance.
//
// Every condition the paper states "up to poly/polylog factors" becomes one
// check: a measured worst case (over heads or pairs of heads), a configurable
// threshold, a comparison and a verdict. Definitions, default thresholds and
// their rationale: proofs/conditions.md.
//
// Check ids, in report order:
//   theta_incoherence, theta_stable_rank, theta_diagonal, theta_heavy_column,
//   theta_norm_ratio, theta_norm_bound, theta_non_arithmetic,
//   w_incoherence, w_stable_rank, w_norm_ratio,
//   heads_vs_log_d, k_le_d, km_le_d
#pragma once

#include "model/layer.hpp"
#include "numeric/scalar.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mha {

// Thresholds. A field left unset (std::nullopt) takes its d-dependent default,
// given by the matching default_* function below.
struct ConditionThresholds {
  // --- Θ ---
  double theta_incoherence = 0.5;             // max pairwise |cos| <= this
  std::optional<double> theta_stable_rank;    // min stable rank >= this; default max(min(2, d/3), d/8)
  std::optional<double> theta_diagonal;       // max Tr²/‖·‖_op² <= this; default max(4, log2 d)
  double theta_heavy_column = 4.0;            // max column mass / average column mass <= this
  double theta_norm_ratio = 2.0;              // max ‖Θ_i‖_F / min ‖Θ_i‖_F <= this
  double theta_norm_bound = 20.0;             // max ‖Θ_i‖_F <= this (logit scale)
  // max δ-atom mass <= this; default max(1/(4 d²), 4·2^{−2d}), floored at 8/N in Monte Carlo
  // mode (the estimator's noise floor: a generic Θ reads 1/N–3/N there).
  std::optional<double> theta_atom_mass;

  // How the δ-atom mass of the Boolean logit x Θ x'ᵀ is measured.
  double atom_delta = 1e-9;            // atom half-width, relative to ‖Θ‖_F
  int atom_exact_max_bits = 20;        // enumerate all 2^{2d} pairs when 2d <= this
  std::int64_t atom_samples = 65536;   // Monte Carlo sample count otherwise
  // Fixed seed of the std::mt19937_64 used in Monte Carlo mode, so that the
  // report of a given instance is reproducible bit for bit.
  std::uint64_t atom_seed = 0x6d68616c6561726eULL;  // "mhalearn"

  // --- W ---
  double w_incoherence = 0.5;
  std::optional<double> w_stable_rank;        // default max(min(2, d/3), d/8)
  double w_norm_ratio = 2.0;

  // --- regime ---
  std::optional<double> max_heads;            // m <= this; default max(1, log2 d)
  // k <= d and k·m <= d are structural (threshold d), not configurable.
};

double default_stable_rank_threshold(int d);   // max(min(2, d/3), d/8)
double default_diagonal_threshold(int d);      // max(4, log2 d)
// max(1/(4 d²), 4·2^{−2d}) (twice the symmetry's atoms, so that d ≤ 3 passes);
// with mc_samples = N > 0 (Monte Carlo mode) at least 8/N, since
// below that a generic Θ could not pass (for N = 65536 the floor acts from d = 46).
double default_atom_mass_threshold(int d, std::int64_t mc_samples = 0);
// True when logit_atom_mass enumerates all pairs for this d (2d <= min(t.atom_exact_max_bits, 24)).
bool atom_mass_is_exact(int d, const ConditionThresholds& t);
double default_max_heads(int d);               // max(1, log2 d)

struct ConditionCheck {
  std::string name;         // stable snake_case id, e.g. "theta_incoherence"
  std::string description;  // one line, what it measures, in MATH.md notation
  double value = 0;         // the measured worst case over heads / pairs (never NaN; may be +inf)
  std::string comparison;   // "<=" or ">="
  double threshold = 0;
  bool pass = false;
  std::string worst;        // which head or pair attains the worst value, e.g. "heads 0,1" or "head 1"
};

struct ConditionReport {
  std::vector<ConditionCheck> checks;
  bool all_pass() const;
  // nullptr when no check has that name.
  const ConditionCheck* find(const std::string& name) const;
};

// Measures every check of MATH.md §2. Assumes validate_instance(inst) is empty
// except that k > d is reported (as a failed k_le_d) rather than assumed away.
// Zero matrices are handled without NaN: incoherence with a zero head is 1,
// its stable rank 0, Tr²/‖·‖_op² and the column ratio 0, a norm ratio with a
// zero minimum +inf, and its logit has a single atom of mass 1.
ConditionReport check_conditions(const Instance& inst, const ConditionThresholds& t = {});

// {"all_pass": bool, "passed": n, "failed": n, "checks": [{"name", "description",
//  "value", "comparison", "threshold", "pass", "worst"}, ...]} in report order.
// A non-finite value or threshold is written as the string "inf" / "-inf".
nlohmann::json to_json(const ConditionReport&);

// Aligned table, one line per check (check, value, cmp, threshold, verdict,
// worst, description) plus a summary line.
std::string format_table(const ConditionReport&);

// The largest δ-atom of the Boolean logit ℓ = x Θ x'ᵀ, x, x' independent
// uniform in {±1}^d: max_v P[|ℓ − v| <= δ‖Θ‖_F] (δ = t.atom_delta). Exact
// (enumeration of all 2^{2d} pairs) when atom_mass_is_exact(d, t), else a
// Monte Carlo estimate from t.atom_samples pairs of the fixed-seed generator
// (resolution 1/N). Exposed for tests and for the instance generator.
struct AtomMass {
  double mass = 0;       // estimated probability of the heaviest atom
  double location = 0;   // centre of that atom (a logit value)
  bool exact = false;    // true: enumeration; false: Monte Carlo
  std::int64_t pairs = 0;  // number of (x, x') pairs evaluated
};
AtomMass logit_atom_mass(const MatD& theta, const ConditionThresholds& t = {});

}  // namespace mha
