#include "test_tolerances.hpp"
#include "model/conditions.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

using namespace mha;

namespace {

MatD gaussian(int d, std::mt19937_64& rng, double scale = 1.0) {
  std::normal_distribution<double> n(0.0, 1.0);
  MatD a(d, d);
  for (Eigen::Index r = 0; r < d; ++r)
    for (Eigen::Index c = 0; c < d; ++c) a(r, c) = scale * n(rng);
  return a;
}

// m heads with Θ entries N(0, 1/d) (so ‖Θ‖_F ≈ sqrt(d)) and W entries N(0, 1).
Instance random_instance(int d, int k, int m, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Instance inst;
  inst.k = k;
  for (int i = 0; i < m; ++i) {
    Head h;
    h.theta = gaussian(d, rng, 1.0 / std::sqrt(static_cast<double>(d)));
    h.w = gaussian(d, rng);
    inst.layer.heads.push_back(h);
  }
  return inst;
}

const ConditionCheck& get(const ConditionReport& r, const std::string& name) {
  const ConditionCheck* c = r.find(name);
  REQUIRE(c != nullptr);
  return *c;
}

const std::vector<std::string> kNames = {
    "theta_incoherence", "theta_stable_rank", "theta_diagonal",  "theta_heavy_column", "theta_norm_ratio",
    "theta_norm_bound",  "theta_non_arithmetic", "w_incoherence", "w_stable_rank",     "w_norm_ratio",
    "heads_vs_log_d",    "k_le_d",            "km_le_d"};

void require_finite(const ConditionReport& r) {
  for (const auto& c : r.checks) {
    INFO(c.name);
    REQUIRE_FALSE(std::isnan(c.value));
    REQUIRE_FALSE(std::isnan(c.threshold));
  }
}

// A d × d matrix of random ±1 entries: an arithmetic Θ (every logit on a lattice).
MatD random_signs(int d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  MatD s(d, d);
  for (Eigen::Index r = 0; r < d; ++r)
    for (Eigen::Index c = 0; c < d; ++c) s(r, c) = (rng() & 1) ? 1.0 : -1.0;
  return s;
}

}  // namespace

TEST_CASE("random Gaussian instance passes every check", "[conditions]") {
  const Instance inst = random_instance(16, 2, 2, 20240601);
  REQUIRE(validate_instance(inst).empty());
  const ConditionReport r = check_conditions(inst);
  INFO(format_table(r));
  REQUIRE(r.checks.size() == kNames.size());
  for (size_t i = 0; i < kNames.size(); ++i) {
    INFO(kNames[i]);
    CHECK(r.checks[i].name == kNames[i]);
    CHECK(r.checks[i].pass);
    CHECK((r.checks[i].comparison == "<=" || r.checks[i].comparison == ">="));
    CHECK_FALSE(r.checks[i].description.empty());
    CHECK_FALSE(r.checks[i].worst.empty());
  }
  CHECK(r.all_pass());
  CHECK(get(r, "theta_stable_rank").comparison == ">=");
  CHECK(get(r, "theta_stable_rank").threshold == 2.0);
  CHECK(get(r, "theta_diagonal").threshold == 4.0);
  CHECK(get(r, "theta_non_arithmetic").threshold == Approx(1.0 / 1024));
  CHECK(get(r, "theta_incoherence").worst == "heads 0,1");
  // Monte Carlo mode (2d = 32 > 20): a generic Θ reads at the resolution 1/N.
  CHECK(get(r, "theta_non_arithmetic").value <= 4.0 / 65536);
  CHECK(get(r, "km_le_d").value == 4.0);
}

TEST_CASE("parallel heads fail incoherence and norm ratio", "[conditions]") {
  Instance inst = random_instance(16, 2, 2, 7);
  inst.layer.heads[1].theta = 3.0 * inst.layer.heads[0].theta;
  const ConditionReport r = check_conditions(inst);
  const auto& inc = get(r, "theta_incoherence");
  CHECK(inc.value == Approx(1.0));
  CHECK_FALSE(inc.pass);
  CHECK(inc.worst == "heads 0,1");
  const auto& ratio = get(r, "theta_norm_ratio");
  CHECK(ratio.value == Approx(3.0));
  CHECK_FALSE(ratio.pass);
  CHECK(ratio.worst == "heads 1,0");
  CHECK(get(r, "w_incoherence").pass);  // W untouched
  CHECK_FALSE(r.all_pass());

  // Ratio exactly 2 sits on the boundary and passes.
  inst.layer.heads[1].theta = 2.0 * inst.layer.heads[0].theta;
  const ConditionReport r2 = check_conditions(inst);
  CHECK(get(r2, "theta_norm_ratio").value == Approx(2.0));
  CHECK_FALSE(get(r2, "theta_incoherence").pass);

  // Parallel W heads (with opposite sign: |cos| = 1) fail w_incoherence.
  inst.layer.heads[1].w = -0.5 * inst.layer.heads[0].w;
  const ConditionReport r3 = check_conditions(inst);
  CHECK(get(r3, "w_incoherence").value == Approx(1.0));
  CHECK_FALSE(get(r3, "w_incoherence").pass);
  CHECK(get(r3, "w_norm_ratio").value == Approx(2.0));
}

TEST_CASE("rank-one attention matrix fails stable rank", "[conditions]") {
  Instance inst = random_instance(16, 2, 2, 11);
  std::mt19937_64 rng(3);
  const MatD u = gaussian(16, rng).col(0);
  const MatD v = gaussian(16, rng).col(0);
  inst.layer.heads[1].theta = u * v.transpose();
  const ConditionReport r = check_conditions(inst);
  const auto& sr = get(r, "theta_stable_rank");
  CHECK(sr.value == Approx(1.0));
  CHECK_FALSE(sr.pass);
  CHECK(sr.worst == "head 1");
  CHECK(get(r, "w_stable_rank").pass);
}

TEST_CASE("scaled identity fails the diagonal check", "[conditions]") {
  Instance inst = random_instance(16, 2, 1, 13);
  inst.layer.heads[0].theta = 0.3 * MatD::Identity(16, 16);
  const ConditionReport r = check_conditions(inst);
  const auto& diag = get(r, "theta_diagonal");
  CHECK(diag.value == Approx(256.0));  // Tr² / ‖·‖_op² = d²
  CHECK_FALSE(diag.pass);
  CHECK(diag.worst == "head 0");
  CHECK(get(r, "theta_stable_rank").value == Approx(16.0));
  CHECK(get(r, "theta_stable_rank").pass);
  // c·Σ x_a x'_a is a scaled binomial: heaviest atom C(16,8)/2^16 ≈ 0.196.
  CHECK_FALSE(get(r, "theta_non_arithmetic").pass);
}

TEST_CASE("arithmetic attention matrices fail non_arithmetic", "[conditions]") {
  SECTION("all entries ±1 with random signs") {
    Instance inst = random_instance(16, 2, 1, 17);
    inst.layer.heads[0].theta = random_signs(16, 5);
    const ConditionReport r = check_conditions(inst);
    const auto& na = get(r, "theta_non_arithmetic");
    CHECK_FALSE(na.pass);
    CHECK(na.value > 0.01);  // order 1/d
    CHECK(na.worst.rfind("head 0", 0) == 0);
  }
  SECTION("SQ family head -(ln 2 / 2) diag(1_S), |S| = 2") {
    const int d = 16;
    Instance inst;
    inst.k = 2;
    Head h;
    h.theta = MatD::Zero(d, d);
    h.theta(2, 2) = h.theta(5, 5) = -std::log(2.0) / 2;
    h.w = MatD::Zero(d, d);
    h.w(0, 1) = 3.0;  // w_i e_p e_qᵀ
    inst.layer.heads.push_back(h);
    const ConditionReport r = check_conditions(inst);
    // Logit takes -ln 2, 0, ln 2 with probabilities 1/4, 1/2, 1/4.
    CHECK(get(r, "theta_non_arithmetic").value ==
          Approx(0.5).margin(tolerance::monte_carlo_frequency_margin(0.5, ConditionThresholds{}.atom_samples)));
    CHECK_FALSE(get(r, "theta_non_arithmetic").pass);
    CHECK(get(r, "theta_heavy_column").value == Approx(8.0));  // c² / (2c²/16)
    CHECK_FALSE(get(r, "theta_heavy_column").pass);
    CHECK(get(r, "theta_stable_rank").value == Approx(2.0));  // boundary at d = 16
    CHECK(get(r, "theta_diagonal").value == Approx(4.0));     // boundary at d = 16
    CHECK(get(r, "w_stable_rank").value == Approx(1.0));
    CHECK_FALSE(get(r, "w_stable_rank").pass);
    // m = 1: the pairwise checks are vacuous.
    CHECK(get(r, "theta_incoherence").value == 0.0);
    CHECK(get(r, "theta_incoherence").pass);
    CHECK(get(r, "theta_incoherence").worst == "n/a");
    CHECK(get(r, "w_incoherence").worst == "n/a");
    CHECK(get(r, "theta_norm_ratio").value == 1.0);
    CHECK(get(r, "theta_norm_ratio").pass);
  }
  SECTION("SQ family with q_0 = 1: a zero head, no NaN") {
    const int d = 16;
    Instance inst;
    inst.k = 2;
    for (double q : {1.0, 2.0}) {
      Head h;
      h.theta = MatD::Zero(d, d);
      h.theta(2, 2) = h.theta(5, 5) = -std::log(q) / 2;  // q = 1 gives Θ = 0
      h.w = MatD::Zero(d, d);
      h.w(0, 1) = q;
      inst.layer.heads.push_back(h);
    }
    const ConditionReport r = check_conditions(inst);
    require_finite(r);
    CHECK(get(r, "theta_incoherence").value == 1.0);
    CHECK_FALSE(get(r, "theta_incoherence").pass);
    CHECK(get(r, "theta_stable_rank").value == 0.0);
    CHECK(get(r, "theta_stable_rank").worst == "head 0");
    CHECK_FALSE(get(r, "theta_stable_rank").pass);
    CHECK(std::isinf(get(r, "theta_norm_ratio").value));
    CHECK_FALSE(get(r, "theta_norm_ratio").pass);
    CHECK(get(r, "theta_non_arithmetic").value == 1.0);  // ℓ ≡ 0
    CHECK(get(r, "theta_non_arithmetic").worst.rfind("head 0", 0) == 0);
    const nlohmann::json j = to_json(r);
    CHECK(j["checks"][4]["name"] == "theta_norm_ratio");
    CHECK(j["checks"][4]["value"] == "inf");
    CHECK(j.dump().find("null") == std::string::npos);
    CHECK(format_table(r).find("inf") != std::string::npos);
  }
}

// Gaussian inputs: the logit has a density when Θ ≠ 0, so the heaviest atom is 0
// exactly, and 1 only for a zero head (proofs/gaussian_inputs.md). The ±1 head that
// fails on Boolean inputs passes here: reading the Boolean atoms (the code before the
// fix) fails this case.
TEST_CASE("non_arithmetic on Gaussian inputs reads the Gaussian logit", "[conditions]") {
  Instance inst = random_instance(16, 2, 2, 17);
  inst.layer.heads[1].theta = random_signs(16, 5);
  REQUIRE_FALSE(get(check_conditions(inst), "theta_non_arithmetic").pass);  // Boolean: atoms of order 1/d
  inst.inputs = InputKind::gaussian;
  const ConditionReport g = check_conditions(inst);
  const auto& na = get(g, "theta_non_arithmetic");
  CHECK(na.value == 0.0);
  CHECK(na.pass);
  CHECK(na.description.find("N(0, I_d)") != std::string::npos);
  inst.layer.heads[1].theta.setZero();
  const ConditionReport zero = check_conditions(inst);
  CHECK(get(zero, "theta_non_arithmetic").value == 1.0);
  CHECK(get(zero, "theta_non_arithmetic").worst == "head 1");
  CHECK_FALSE(get(zero, "theta_non_arithmetic").pass);
}

TEST_CASE("regime checks", "[conditions]") {
  SECTION("k·m > d fails km_le_d only") {
    const ConditionReport r = check_conditions(random_instance(16, 6, 3, 19));
    CHECK(get(r, "km_le_d").value == 18.0);
    CHECK_FALSE(get(r, "km_le_d").pass);
    CHECK(get(r, "k_le_d").pass);
    CHECK(get(r, "heads_vs_log_d").pass);
  }
  SECTION("m > log2 d fails heads_vs_log_d") {
    const ConditionReport r = check_conditions(random_instance(16, 2, 5, 23));
    CHECK(get(r, "heads_vs_log_d").value == 5.0);
    CHECK(get(r, "heads_vs_log_d").threshold == 4.0);
    CHECK_FALSE(get(r, "heads_vs_log_d").pass);
    CHECK(get(r, "km_le_d").pass);
  }
  SECTION("k > d fails k_le_d") {
    const ConditionReport r = check_conditions(random_instance(4, 5, 1, 29));
    CHECK_FALSE(get(r, "k_le_d").pass);
  }
  SECTION("thresholds can be overridden") {
    ConditionThresholds t;
    t.max_heads = 8;
    t.theta_norm_bound = 1.0;
    const ConditionReport r = check_conditions(random_instance(16, 2, 5, 23), t);
    CHECK(get(r, "heads_vs_log_d").pass);
    CHECK_FALSE(get(r, "theta_norm_bound").pass);
  }
}

TEST_CASE("exact enumeration of the logit atoms", "[conditions]") {
  // d = 4: 2d = 8 <= 20, all 256 pairs enumerated. A generic Θ has only the
  // atoms of the symmetry (x, x') -> (−x, −x'): mass exactly 2/256.
  std::mt19937_64 rng(31);
  const MatD theta = gaussian(4, rng);
  const AtomMass a = logit_atom_mass(theta);
  CHECK(a.exact);
  CHECK(a.pairs == 256);
  CHECK(a.mass == 2.0 / 256);

  Instance inst = random_instance(4, 2, 1, 37);
  inst.layer.heads[0].theta = theta;
  const ConditionReport r = check_conditions(inst);
  CHECK(get(r, "theta_non_arithmetic").value == 2.0 / 256);
  CHECK(get(r, "theta_non_arithmetic").threshold == 1.0 / 64);
  CHECK(get(r, "theta_non_arithmetic").pass);

  // Monte Carlo mode on the same matrix (forced) is reproducible.
  ConditionThresholds mc;
  mc.atom_exact_max_bits = 0;
  mc.atom_samples = 20000;
  const AtomMass b1 = logit_atom_mass(theta, mc), b2 = logit_atom_mass(theta, mc);
  CHECK_FALSE(b1.exact);
  CHECK(b1.pairs == 20000);
  CHECK(b1.mass == b2.mass);
  CHECK(b1.mass == Approx(2.0 / 256).margin(tolerance::monte_carlo_frequency_margin(2.0 / 256, mc.atom_samples)));

  // Default thresholds: 1/(4d²), floored at 8/N in Monte Carlo mode.
  CHECK(default_atom_mass_threshold(16) == 1.0 / 1024);
  CHECK(default_atom_mass_threshold(16, 65536) == 1.0 / 1024);
  CHECK(default_atom_mass_threshold(128) == 1.0 / 65536);
  CHECK(default_atom_mass_threshold(128, 65536) == 8.0 / 65536);
  CHECK(atom_mass_is_exact(10, ConditionThresholds{}));
  CHECK_FALSE(atom_mass_is_exact(11, ConditionThresholds{}));
  {
    // Large d: without the floor a generic Θ could never pass (1/(4d²) < 1/N).
    ConditionThresholds few;
    few.atom_samples = 2048;
    const ConditionReport big = check_conditions(random_instance(128, 2, 1, 47), few);
    CHECK(get(big, "theta_non_arithmetic").threshold == 8.0 / 2048);
    CHECK(get(big, "theta_non_arithmetic").value <= 3.0 / 2048);
    CHECK(get(big, "theta_non_arithmetic").pass);
  }

  // Exact mode for a ±1 matrix at d = 4: ℓ = Σ s_ab x_a x'_b.
  MatD ones = MatD::Ones(4, 4);  // ℓ = (Σx)(Σx'), P[ℓ = 0] = 1 − (10/16)² ...
  const AtomMass c = logit_atom_mass(ones);
  // Σx ∈ {±4, ±2, 0} w.p. {1,4,6,4,1}/16; ℓ = 0 iff either sum is 0.
  CHECK(c.mass == Approx(1.0 - (10.0 / 16) * (10.0 / 16)));
  CHECK(c.location == 0.0);
}

TEST_CASE("json and table list every check exactly once", "[conditions]") {
  const ConditionReport r = check_conditions(random_instance(16, 2, 2, 41));
  const nlohmann::json j = to_json(r);
  REQUIRE(j["checks"].is_array());
  REQUIRE(j["checks"].size() == kNames.size());
  CHECK(j["all_pass"].get<bool>() == r.all_pass());
  CHECK(j["passed"].get<int>() + j["failed"].get<int>() == static_cast<int>(kNames.size()));
  const std::string table = format_table(r);
  for (const auto& name : kNames) {
    int count = 0;
    for (const auto& c : j["checks"]) {
      if (c["name"] == name) {
        ++count;
        CHECK(c.contains("description"));
        CHECK(c["value"].is_number());
        CHECK(c["threshold"].is_number());
        CHECK(c["pass"].is_boolean());
        CHECK(c.contains("worst"));
        CHECK((c["comparison"] == "<=" || c["comparison"] == ">="));
      }
    }
    INFO(name);
    CHECK(count == 1);
    CHECK(table.find(name) != std::string::npos);
  }
  // One line per check, a header and a summary line.
  CHECK(std::count(table.begin(), table.end(), '\n') == static_cast<long>(kNames.size()) + 2);
  CHECK(table.find("checks pass") != std::string::npos);

  Instance bad = random_instance(16, 6, 3, 43);
  const std::string t2 = format_table(check_conditions(bad));
  CHECK(t2.find("FAIL") != std::string::npos);
  CHECK(t2.find("km_le_d") != std::string::npos);
  CHECK(t2.find("checks fail: km_le_d") != std::string::npos);
}

TEST_CASE("the default thresholds on both sides of their max()", "[conditions][hardening]") {
  // Stable rank: max(min(2, d/3), d/8).
  CHECK(default_stable_rank_threshold(3) == 1.0);
  CHECK(default_stable_rank_threshold(12) == 2.0);
  CHECK(default_stable_rank_threshold(16) == 2.0);  // d/8 = 2 at the crossover
  CHECK(default_stable_rank_threshold(64) == 8.0);
  // Diagonal dominance: max(4, log₂ d).
  CHECK(default_diagonal_threshold(8) == 4.0);
  CHECK(default_diagonal_threshold(16) == 4.0);
  CHECK(default_diagonal_threshold(1024) == 10.0);
  // Heads: max(1, log₂ d).
  CHECK(default_max_heads(1) == 1.0);
  CHECK(default_max_heads(2) == 1.0);
  CHECK(default_max_heads(16) == 4.0);
}

namespace {
// Sets the configurable threshold of check `name` (false when it has none).
bool set_threshold(ConditionThresholds& t, const std::string& name, double value) {
  if (name == "theta_incoherence") t.theta_incoherence = value;
  else if (name == "theta_stable_rank") t.theta_stable_rank = value;
  else if (name == "theta_diagonal") t.theta_diagonal = value;
  else if (name == "theta_heavy_column") t.theta_heavy_column = value;
  else if (name == "theta_norm_ratio") t.theta_norm_ratio = value;
  else if (name == "theta_norm_bound") t.theta_norm_bound = value;
  else if (name == "theta_non_arithmetic") t.theta_atom_mass = value;
  else if (name == "w_incoherence") t.w_incoherence = value;
  else if (name == "w_stable_rank") t.w_stable_rank = value;
  else if (name == "w_norm_ratio") t.w_norm_ratio = value;
  else if (name == "heads_vs_log_d") t.max_heads = value;
  else return false;
  return true;
}
}  // namespace

TEST_CASE("every condition passes with its threshold at the measured value and fails one ulp past it", "[conditions][hardening]") {
  const Instance inst = random_instance(8, 2, 2, 7);
  const ConditionReport base = check_conditions(inst);
  int configurable = 0;
  for (const ConditionCheck& c : base.checks) {
    INFO(c.name << " = " << c.value << " " << c.comparison << " threshold");
    ConditionThresholds at, past;
    // The failing side: below the value for "<=", above it for ">=".
    const double beyond = std::nextafter(c.value, c.comparison == "<=" ? -INFINITY : INFINITY);
    if (!set_threshold(at, c.name, c.value)) continue;
    set_threshold(past, c.name, beyond);
    ++configurable;
    CHECK(get(check_conditions(inst, at), c.name).pass);
    CHECK_FALSE(get(check_conditions(inst, past), c.name).pass);
  }
  CHECK(configurable == 11);
  // The structural checks: k = d and k·m = d pass (at the threshold), one more fails.
  Instance edge = random_instance(4, 2, 2, 3);
  ConditionReport r = check_conditions(edge);
  CHECK(get(r, "km_le_d").value == 4.0);
  CHECK(get(r, "km_le_d").pass);
  edge = random_instance(4, 4, 1, 3);
  r = check_conditions(edge);
  CHECK(get(r, "k_le_d").pass);
  edge = random_instance(4, 5, 1, 3);
  r = check_conditions(edge);
  CHECK_FALSE(get(r, "k_le_d").pass);
  CHECK_FALSE(get(check_conditions(random_instance(4, 3, 2, 3)), "km_le_d").pass);  // k·m = 6 > 4
}
