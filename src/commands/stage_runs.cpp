#include "commands/stage_runs.hpp"

#include "data/enumerate.hpp"
#include "data/population.hpp"
#include "stages/stage1/reference.hpp"
#include "stages/stage1/wsum.hpp"
#include "stages/stage4/resculpt.hpp"
#include "util/format.hpp"
#include "util/progress.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace mha::commands {

using nlohmann::json;

namespace {

json matrix_json(const MatD& a) {
  json rows = json::array();
  for (Eigen::Index r = 0; r < a.rows(); ++r) rows.push_back(std::vector<double>(a.row(r).data(), a.row(r).data() + a.cols()));
  return rows;
}

json stage1_json(const Stage1Result& r, const Instance* truth) {
  json j = {{"name", "stage1_wsum"}, {"samples", r.samples}, {"seconds", r.seconds}, {"budget_exhausted", r.budget_exhausted},
            {"standard_error_max", r.standard_error.maxCoeff()}, {"standard_error_fro", r.standard_error.norm()}};
  if (truth) {
    const MatD w_sum = truth->layer.w_sum();
    j["w_sum_rel_error"] = (r.w_hat - w_sum).norm() / w_sum.norm();
  }
  return j;
}

std::string stage1_text(const Stage1Result& r, const Instance* truth) {
  std::string text = format("[stage 1] Ŵ from %lld samples in %.2f s; max standard error %.3e%s\n", (long long)r.samples,
                            r.seconds, r.standard_error.maxCoeff(), r.budget_exhausted ? " (budget exhausted)" : "");
  if (truth) {
    const MatD w_sum = truth->layer.w_sum();
    text += format("  ‖Ŵ − W_Σ‖_F / ‖W_Σ‖_F = %.4g\n", (r.w_hat - w_sum).norm() / w_sum.norm());
  }
  return text;
}

// The fast statistic against MPFR labels on the same first samples: recorded in
// `stage`; false when they differ beyond the derived bound.
bool add_stage1_same_sample_check(const Stage1Args& a, const Instance& truth, uint64_t seed, json& stage, std::string& text) {
  // The instance's own oracle, without label noise: the MPFR labels are the layer's exact outputs.
  const SampleOracle oracle(truth, seed);
  const Stage1SameSampleCheck c = stage1_same_sample_check(oracle, &truth.layer, 0, a.reference_samples, a.precision);
  text += format("  reference, same %lld samples with MPFR labels (%u bits): max |fast − ref| = %.3e, max ratio to the derived "
                 "bound %.3g (fast %.3f s, reference %.3f s: %.0fx)\n",
                 (long long)c.samples, a.precision, c.max_abs_diff, c.max_ratio, c.seconds_fast, c.seconds_reference,
                 c.seconds_reference / std::max(c.seconds_fast, 1e-9));
  stage["reference_same_sample"] = {{"samples", c.samples}, {"max_abs_diff", c.max_abs_diff}, {"max_ratio", c.max_ratio},
                                    {"seconds_fast", c.seconds_fast}, {"seconds_reference", c.seconds_reference}};
  return c.max_ratio <= 1;
}

// E[Ŵ] by exact enumeration in MPFR: the W-sum lemma's bias, and Ŵ's distance
// from it in standard errors (a diagnostic: a statistic, not a disagreement).
void add_stage1_enumeration(const Stage1Args& a, const Stage1Result& r, const Instance& truth, json& stage, std::string& text) {
  std::optional<Activity> enumerating;
  enumerating.emplace("stage1: exact enumeration of all 2^" + std::to_string(truth.k * truth.d()) + " inputs in MPFR");
  const MatD pop = population_stage1_mpfr(truth.layer, truth.k, a.precision);
  enumerating.reset();
  const MatD z = (r.w_hat - pop).cwiseAbs().cwiseQuotient(r.standard_error.cwiseMax(1e-300));
  const MatD w_sum = truth.layer.w_sum();
  text += format("  reference (exact enumeration, %u bits): ‖E[Ŵ] − W_Σ‖_F/‖W_Σ‖_F = %.4g (the W-sum lemma's bias);\n"
                 "  fast vs reference: max |Ŵ − E[Ŵ]| / SE = %.2f over %d entries\n",
                 a.precision, (pop - w_sum).norm() / w_sum.norm(), z.maxCoeff(), int(z.size()));
  stage["reference_bias_rel"] = (pop - w_sum).norm() / w_sum.norm();
  stage["reference_max_z"] = z.maxCoeff();
}

}  // namespace

StageRun run_stage1_command(const Stage1Args& a, const SampleSource& source, const Instance* truth, uint64_t seed,
                            const json& source_options, const Context& ctx) {
  StageRun run;
  Stage1Options o;
  o.samples = a.samples;
  o.threads = a.threads;
  o.max_seconds = a.max_seconds;
  const Stage1Result r = stage1_estimate_wsum(source, o);
  run.text = stage1_text(r, truth);
  json stage = stage1_json(r, truth);
  json options = source_options;
  options["samples"] = a.samples;
  options["max_seconds"] = a.max_seconds;
  const json prov = ctx.provenance("stage1", options);
  run.output = {{"format", "mhalearn.matrix"}, {"name", "w_hat"}, {"matrix", matrix_json(r.w_hat)},
                {"standard_error", matrix_json(r.standard_error)}, {"provenance", prov}};
  bool agree = true;
  if (a.reference) agree = add_stage1_same_sample_check(a, *truth, seed, stage, run.text);
  // The population is enumerated over {±1}^{k×d}: Boolean instances only (a Gaussian one has no finite population).
  if (agree && a.reference && truth->inputs == InputKind::boolean && truth->k * truth->d() <= kMaxEnumerationBits)
    add_stage1_enumeration(a, r, *truth, stage, run.text);
  run.report = {{"stages", json::array({stage})}, {"provenance", prov}};
  if (!agree) return std::move(run).failed(kExitDisagreement, "fast and reference stage 1 disagree beyond the derived bound");
  if (r.samples == 0) return std::move(run).failed(kExitFailedRun, "no samples were available");
  return run;
}

namespace {

// τ is chosen by exactly one of: --tau, --selection best (from the data), the
// pilot. "" or which options contradict that.
std::string sculpt_tau_rule_problem(const SculptArgs& a) {
  const auto name = [&a](const char* option) { return spell(option, a.spelling); };
  const bool best = a.selection && *a.selection == SculptOptions::Selection::best_rows;
  if (best && a.tau) return name("tau") + " does not apply to " + name("selection") + " best (it chooses τ from the data)";
  if ((best || a.tau) && a.pilot_samples_given)
    return name("pilot-samples") + " does not apply with " + (best ? name("selection") + " best" : name("tau")) +
           " (no pilot chooses τ)";
  return "";
}

// Ŵ for stage 2 and the samples stage 1 used to make it (none with the oracle's W_Σ).
struct SculptW {
  MatD w_hat;
  int64_t used = 0;
};

SculptW sculpt_w_hat(const SculptArgs& a, const SampleSource& source, const Instance* truth, json& stages, std::string& text) {
  SculptW w;
  if (a.w_source == "oracle") {
    w.w_hat = truth->layer.w_sum();
    text += "[stage 1] skipped: W_Σ given exactly by the instance (oracle)\n";
    return w;
  }
  Stage1Options o1;
  o1.samples = a.learn.stage1_samples;
  o1.threads = a.learn.threads;
  const Stage1Result r1 = stage1_estimate_wsum(source, o1);
  text += stage1_text(r1, truth);
  stages.push_back(stage1_json(r1, truth));
  w.w_hat = r1.w_hat;
  w.used = r1.samples;
  return w;
}

// The learner's stage-2 options for this round, then the arguments' overrides.
ResculptOptions sculpt_options(const SculptArgs& a, const LearnOptions& lo, const SampleSource& source, int m, int64_t used) {
  // The stage-1 Ŵ is what the learner's round 0 sculpts with; the exact W_Σ
  // is what later rounds approach (with no W error).
  const int round = a.w_source == "oracle" ? 1 : 0;
  ResculptOptions ro = sculpt_round_options(lo, round, source.d(), source.k(), 0.0);
  SculptOptions& o = ro.sculpt;
  if (a.max_samples) o.max_samples = *a.max_samples;
  if (a.sigma_min) o.certify.sigma_min = *a.sigma_min > 0 ? *a.sigma_min : default_sigma_min(source.d(), source.k(), m);
  if (a.w_error) o.certify.w_error = *a.w_error;
  o.all_rows = a.rows == "all";
  o.first_sample = used;  // fresh samples for stage 2
  // The learner's round decides the rest; these override it.
  if (a.v_min_rule) o.certify.v_min_rule = *a.v_min_rule;
  if (a.selection) o.selection = *a.selection;
  if (a.distinct) o.distinct_constraints = true;
  if (a.tau) {
    o.certify.tau = *a.tau;
    o.selection = SculptOptions::Selection::threshold;  // a given τ is the threshold rule
  }
  return ro;
}

std::string sculpt_text(const SculptReport& r, const SculptOptions& o, const SampleSource& source, int m) {
  std::string text;
  if (r.duplicate_constraints > 0 || o.selection == SculptOptions::Selection::best_rows)
    text += format("[stage 2] τ_effective = %.3e, %lld duplicate slabs dropped\n", r.tau_effective, (long long)r.duplicate_constraints);
  text += format("[stage 2] %lld samples, %lld rows examined, %lld certified (%lld from row 0 alone: all rows give %.2fx), "
                 "%lld constraints, %.2f s, %.3g rows/s%s\n",
                 (long long)r.samples, (long long)r.rows_examined, (long long)r.rows_certified, (long long)r.rows_certified_first_row,
                 r.rows_certified_first_row ? double(r.rows_certified) / r.rows_certified_first_row : 0.0,
                 (long long)r.constraints, r.seconds, r.rows_per_second, r.budget_exhausted ? " (budget exhausted before the target)" : "");
  text += "  verdicts:";
  for (int v = 0; v < 6; ++v) text += format(" %s %lld", to_string(static_cast<RowVerdict>(v)), (long long)r.verdicts[v]);
  text += format("\n  numerical rank %d of %d, gap s_%d/s_%d = %.3g; assumed σ_min(C) = %.3g\n", r.numerical_rank,
                 source.d() * source.d(), m - 1, m - 2, r.gap, o.certify.sigma_min);
  return text;
}

json sculpt_stage_json(const SculptArgs& a, const ResculptResult& rs, const SculptOptions& o) {
  const SculptReport& r = rs.sculpt.report;
  json stage = {{"name", "stage2_sculpt"}, {"samples", r.samples}, {"seconds", r.seconds}, {"rows_examined", r.rows_examined},
                {"rows_certified", r.rows_certified}, {"rows_certified_first_row", r.rows_certified_first_row},
                {"constraints", r.constraints}, {"numerical_rank", r.numerical_rank}, {"gap", r.gap},
                {"smallest_singular_values", r.smallest_singular_values}, {"rows_per_second", r.rows_per_second},
                {"budget_exhausted", r.budget_exhausted}, {"tau", o.certify.tau}, {"tau_rule", a.tau ? "fixed" : "adaptive"},
                {"pilot_samples", rs.pilot_samples}, {"pilot_eligible_rows", rs.pilot_eligible_rows}, {"v_min", o.certify.v_min},
                {"sigma_min_assumed", o.certify.sigma_min}, {"w_error_assumed", o.certify.w_error}, {"w_sum_source", a.w_source}};
  json verdicts;
  for (int v = 0; v < 6; ++v) verdicts[to_string(static_cast<RowVerdict>(v))] = r.verdicts[v];
  stage["verdicts"] = verdicts;
  return stage;
}

// How the body stands against the true heads: in the text, and recorded in `stage`.
void add_sculpt_truth(const SculptTruth& t, json& stage, std::string& text) {
  double worst = 0;
  for (double v : t.theta_violation) worst = std::max(worst, v);
  text += format("  truth: hull error max_i dist(Θ_i, hull)/‖Θ_i‖ = %.3e, hull angle %.3e rad, max slab violation of a true Θ_i %.3e, "
                 "rows with σ_min(C) below the assumption %lld\n",
                 t.hull_error, t.hull_angle, worst, (long long)t.sigma_assumption_violated);
  stage["truth"] = {{"hull_error", t.hull_error}, {"hull_angle", t.hull_angle}, {"theta_violation", t.theta_violation},
                    {"theta_in_ball", t.theta_in_ball}, {"sigma_assumption_violated", t.sigma_assumption_violated}};
}

json body_json(const ConvexBody& body, const json& prov) {
  json slabs = json::array();
  for (const auto& sl : body.slabs()) slabs.push_back({{"a", sl.a}, {"b", sl.b}, {"eta", sl.eta}});
  return {{"format", "mhalearn.body"}, {"schema_version", 1}, {"dim", body.dim()}, {"radius", body.radius()},
          {"slabs", slabs}, {"provenance", prov}};
}

// "" or why the arguments cannot run on this source.
std::string sculpt_input_problem(const SculptArgs& a, const Instance* truth) {
  const auto name = [&a](const char* option) { return spell(option, a.spelling); };
  if (auto e = sculpt_tau_rule_problem(a); !e.empty()) return e;
  const int m = truth ? truth->m() : a.m;
  if (m < 1) return "with " + name("x") + "/" + name("y") + " give the number of heads with " + name("m");
  if (truth && a.m > 0 && a.m != m) return name("m") + " differs from the instance's number of heads";
  if (a.w_source == "oracle" && !truth) return name("w-sum") + " oracle needs an instance";
  return "";
}

}  // namespace

StageRun run_sculpt_command(const SculptArgs& a, const SampleSource& source, const Instance* truth, double label_noise,
                            const json& source_options, const Context& ctx) {
  StageRun run;
  if (auto e = sculpt_input_problem(a, truth); !e.empty()) return std::move(run).failed(kExitBadInput, e);
  const int m = truth ? truth->m() : a.m;
  if (source.k() * m > source.d())  // a fact of the run, not a fault: the slabs' widths are then not certified
    run.text += format("k·m = %d > d = %d: the certification lemma does not apply\n", source.k() * m, source.d());
  json stages = json::array();
  const SculptW w = sculpt_w_hat(a, source, truth, stages, run.text);
  LearnOptions lo = a.learn;
  lo.m = m;
  lo.label_noise = label_noise;  // certification accounts for the labels' noise
  ResculptOptions ro = sculpt_options(a, lo, source, m, w.used);
  SculptOptions& o = ro.sculpt;
  const Layer* truth_layer = truth ? &truth->layer : nullptr;
  const ResculptResult rs = a.tau ? ResculptResult{*a.tau, 0, 0, sculpt_body(source, w.w_hat, m, o, truth_layer)}
                                  : resculpt(source, w.w_hat, m, ro, truth_layer);
  if (!a.tau) {
    o.certify.tau = rs.tau;
    run.text += format("[stage 2] adaptive τ = %.3e from a pilot of %lld samples (%lld eligible rows)\n", rs.tau,
                       (long long)rs.pilot_samples, (long long)rs.pilot_eligible_rows);
  }
  const SculptReport& r = rs.sculpt.report;
  run.text += sculpt_text(r, o, source, m);
  json stage = sculpt_stage_json(a, rs, o);
  if (r.truth) add_sculpt_truth(*r.truth, stage, run.text);
  stages.push_back(stage);
  json options = source_options;
  options.update({{"w_sum", a.w_source}, {"tau", a.tau ? json(*a.tau) : json("adaptive")}, {"v_min", o.certify.v_min},
                  {"rows", a.rows}, {"stage1_samples", lo.stage1_samples}, {"max_samples", o.max_samples},
                  {"max_seconds", o.max_seconds}});
  const json prov = ctx.provenance("sculpt", options);
  run.report = {{"stages", stages}, {"provenance", prov}};
  run.output = body_json(rs.sculpt.body, prov);
  if (r.constraints == 0)
    return std::move(run).failed(kExitFailedRun, "no row was certified within the budget; raise " + spell("tau", a.spelling) +
                                                     " or " + spell("max-samples", a.spelling));
  return run;
}

}  // namespace mha::commands
