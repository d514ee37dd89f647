// stage1, sculpt: the first two stages of the learner on an instance (streaming
// oracle) or on a dataset (.npy), with sample and time budgets.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/input.hpp"
#include "data/instance_io.hpp"
#include "data/npy.hpp"
#include "data/oracle.hpp"
#include "data/population.hpp"
#include "stages/stage1/reference.hpp"
#include "util/progress.hpp"
#include "stages/stage1/wsum.hpp"
#include "stages/stage2/sculpt.hpp"
#include "stages/stage4/resculpt.hpp"
#include "learn/learner.hpp"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

namespace mha::cli {

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

void print_stage1(const Stage1Result& r, const Instance* truth) {
  std::printf("[stage 1] Ŵ from %lld samples in %.2f s; max standard error %.3e%s\n", (long long)r.samples, r.seconds,
              r.standard_error.maxCoeff(), r.budget_exhausted ? " (budget exhausted)" : "");
  if (truth) {
    const MatD w_sum = truth->layer.w_sum();
    std::printf("  ‖Ŵ − W_Σ‖_F / ‖W_Σ‖_F = %.4g\n", (r.w_hat - w_sum).norm() / w_sum.norm());
  }
}
}  // namespace

Runner add_stage1(CLI::App& app) {
  auto* cmd = app.add_subcommand("stage1", "Stage 1: crude estimate Ŵ of W_Σ = Σ_i W_i (MATH.md §3)");
  struct Args { Input in; int64_t samples = 1000000; int threads = default_threads(); double max_seconds = 0;
                bool reference = false; int64_t reference_samples = 2000; unsigned precision = 200; std::string report, out; };
  auto a = std::make_shared<Args>();
  add_input_options(cmd, a->in);
  cmd->add_option("--samples", a->samples, "samples to use")->capture_default_str();
  cmd->add_option("--threads", a->threads, "worker threads (results do not depend on it)")->capture_default_str();
  cmd->add_option("--max-seconds", a->max_seconds, "time budget (0: none)")->capture_default_str();
  auto* reference_opt = cmd->add_flag("--reference", a->reference,
                "also run the reference path: the population value Σ_i M(Θ_i) W_i by exact enumeration when k·d ≤ 20, and in "
                "every case the fast vs MPFR statistic on the same first --reference-samples samples");
  cmd->add_option("--reference-samples", a->reference_samples, "samples of the same-sample cross-check")->capture_default_str()
      ->needs(reference_opt);
  cmd->add_option("--precision", a->precision, "MPFR bits of the reference")->capture_default_str()->needs(reference_opt);
  cmd->add_option("--report", a->report, "JSON report to write");
  cmd->add_option("-o,--output", a->out, "write Ŵ (JSON) here");
  return [a] {
    if (auto r = open_input(a->in); !r.error.empty()) return fail("stage1", r.exit_code, r.error);
    const Instance* truth = a->in.instance ? &*a->in.instance : nullptr;
    if (a->reference && !truth) return fail("stage1", kExitBadInput, "--reference needs an instance (the MPFR labels come from it)");
    Stage1Options o;
    o.samples = a->samples;
    o.threads = a->threads;
    o.max_seconds = a->max_seconds;
    const Stage1Result r = stage1_estimate_wsum(*a->in.source, o);
    print_stage1(r, truth);
    json stage = stage1_json(r, truth);
    if (a->reference) {
      // The instance's own oracle, without label noise: the MPFR labels are the layer's exact outputs.
      const SampleOracle oracle(*truth, a->in.seed);
      const Stage1SameSampleCheck c = stage1_same_sample_check(oracle, &truth->layer, 0, a->reference_samples, a->precision);
      std::printf("  reference, same %lld samples with MPFR labels (%u bits): max |fast − ref| = %.3e, max ratio to the derived "
                  "bound %.3g (fast %.3f s, reference %.3f s: %.0fx)\n",
                  (long long)c.samples, a->precision, c.max_abs_diff, c.max_ratio, c.seconds_fast, c.seconds_reference,
                  c.seconds_reference / std::max(c.seconds_fast, 1e-9));
      stage["reference_same_sample"] = {{"samples", c.samples}, {"max_abs_diff", c.max_abs_diff}, {"max_ratio", c.max_ratio},
                                        {"seconds_fast", c.seconds_fast}, {"seconds_reference", c.seconds_reference}};
      if (c.max_ratio > 1)
        return fail("stage1", kExitDisagreement, "fast and reference stage 1 disagree beyond the derived bound");
    }
    if (a->reference && truth->k * truth->d() <= kMaxEnumerationBits) {
      std::optional<Activity> enumerating;
      enumerating.emplace("stage1: exact enumeration of all 2^" + std::to_string(truth->k * truth->d()) + " inputs in MPFR");
      const MatD pop = population_stage1_mpfr(truth->layer, truth->k, a->precision);
      enumerating.reset();
      const MatD z = (r.w_hat - pop).cwiseAbs().cwiseQuotient(r.standard_error.cwiseMax(1e-300));
      const MatD w_sum = truth->layer.w_sum();
      std::printf("  reference (exact enumeration, %u bits): ‖E[Ŵ] − W_Σ‖_F/‖W_Σ‖_F = %.4g (the W-sum lemma's bias);\n"
                  "  fast vs reference: max |Ŵ − E[Ŵ]| / SE = %.2f over %d entries\n",
                  a->precision, (pop - w_sum).norm() / w_sum.norm(), z.maxCoeff(), int(z.size()));
      stage["reference_bias_rel"] = (pop - w_sum).norm() / w_sum.norm();
      stage["reference_max_z"] = z.maxCoeff();
    }
    json options = {{"instance", a->in.instance_path}, {"x", a->in.x_path}, {"y", a->in.y_path}, {"seed", a->in.seed},
                    {"samples", a->samples}, {"max_seconds", a->max_seconds}};
    if (!a->report.empty()) {
      json rep = {{"stages", json::array({stage})}, {"provenance", make_provenance("stage1", options)}};
      if (auto e = write_json_atomically(a->report, rep); !e.empty()) return fail("stage1", kExitFailedRun, e);
    }
    if (!a->out.empty()) {
      json w = {{"format", "mhalearn.matrix"}, {"name", "w_hat"}, {"matrix", matrix_json(r.w_hat)},
                {"standard_error", matrix_json(r.standard_error)}, {"provenance", make_provenance("stage1", options)}};
      if (auto e = write_json_atomically(a->out, w); !e.empty()) return fail("stage1", kExitFailedRun, e);
    }
    return r.samples > 0 ? kExitOk : fail("stage1", kExitFailedRun, "no samples were available");
  };
}

namespace {

// What `sculpt` was asked. Defaults are the learner's (sculpt_round_options):
// round 0's with the stage-1 Ŵ, a later round's with the exact W_Σ (--w-sum
// oracle); τ is adaptive (stage4_resculpt.hpp) unless --tau fixes it.
struct SculptArgs {
  Input in;
  std::string w_source = "stage1";
  LearnOptions learn;
  std::optional<double> tau, sigma_min, w_error;
  std::optional<int64_t> max_samples;
  std::string rows = "all";
  int m = 0;
  std::string report, out;
  std::optional<CertifyOptions::VMinRule> v_min_rule;
  std::optional<SculptOptions::Selection> selection;
  bool distinct = false;
};

void add_sculpt_options(CLI::App* cmd, SculptArgs& a) {
  SculptOptions& so = a.learn.sculpt.sculpt;
  add_input_options(cmd, a.in);
  cmd->add_option("--m", a.m, "number of heads (needed with --x/--y; taken from the instance otherwise)");
  cmd->add_option("--w-sum", a.w_source, "W_Σ estimate: stage1 (run stage 1 first) or oracle (exact, from the instance)")
      ->capture_default_str()->check(CLI::IsMember({"stage1", "oracle"}));
  cmd->add_option("--stage1-samples", a.learn.stage1_samples, "samples for stage 1")->capture_default_str();
  cmd->add_option("--tau", a.tau, "fix τ: certify when ρ ≤ τ‖y_a‖ (default: adaptive, from a pilot sample, as the learner)");
  cmd->add_option("--pilot-samples", a.learn.sculpt.pilot_samples, "samples of the pilot that chooses the adaptive τ")
      ->capture_default_str();
  cmd->add_option("--v-min", so.certify.v_min, "smallest allowed pattern entry")->capture_default_str();
  cmd->add_option("--v-min-rule", a.v_min_rule,
                  "every: a row is kept only when all its entries are ≥ v_min; pairwise: each pair (a, j) with both entries ≥ v_min gives its slab")
      ->transform(CLI::CheckedTransformer(std::map<std::string, CertifyOptions::VMinRule>{
          {"every", CertifyOptions::VMinRule::every_entry}, {"pairwise", CertifyOptions::VMinRule::pairwise}}));
  cmd->add_option("--selection", a.selection,
                  "threshold: rows with residual ≤ τ until the target; best: the target's worth of rows with the smallest "
                  "residuals over the whole budget (τ from the data, no pilot)")
      ->transform(CLI::CheckedTransformer(std::map<std::string, SculptOptions::Selection>{
          {"threshold", SculptOptions::Selection::threshold}, {"best", SculptOptions::Selection::best_rows}}));
  cmd->add_flag("--distinct", a.distinct, "drop slabs identical to a kept one (repeated rows of a small Boolean domain)");
  cmd->add_option("--sigma-min", a.sigma_min,
                  "assumed lower bound on σ_min(C), 0: 0.5(√d − √(km)) (default: the learner's, optimistic 1e3 with the stage-1 Ŵ, "
                  "0.5(√d − √(km)) with the oracle)");
  cmd->add_option("--w-error", a.w_error, "assumed bound on ‖W_Σ − Ŵ‖_op (default 0, as the learner's round 0)");
  cmd->add_option("--rows", a.rows, "certify all rows or only the first (the paper)")->capture_default_str()->check(CLI::IsMember({"all", "first"}));
  cmd->add_option("--radius", so.radius, "R of the ball ‖Θ‖_F ≤ R")->capture_default_str();
  cmd->add_option("--target", so.target_constraints, "stop once this many constraints are kept (0: 3d²)")->capture_default_str();
  cmd->add_option("--max-samples", a.max_samples,
                  "sample budget of stage 2 (default: the learner's, " + std::to_string(a.learn.crude_sculpt_samples) +
                      " with the stage-1 Ŵ, " + std::to_string(so.max_samples) + " with the oracle)");
  cmd->add_option("--max-seconds", so.max_seconds, "time budget of stage 2 (0: none)")->capture_default_str();
  cmd->add_option("--threads", a.learn.threads, "worker threads (results do not depend on it)")->capture_default_str();
  cmd->add_option("--report", a.report, "JSON report to write");
  cmd->add_option("-o,--output", a.out, "write the body K (JSON) here");
}

// τ is chosen by exactly one of: --tau, --selection best (from the data), the
// pilot. "" or which options contradict that.
std::string sculpt_tau_rule_problem(const SculptArgs& a, CLI::App* cmd) {
  const bool best = a.selection && *a.selection == SculptOptions::Selection::best_rows;
  if (best && cmd->count("--tau")) return "--tau does not apply to --selection best (it chooses τ from the data)";
  if ((best || cmd->count("--tau")) && cmd->count("--pilot-samples"))
    return std::string("--pilot-samples does not apply with ") + (best ? "--selection best" : "--tau") +
           " (no pilot chooses τ)";
  return "";
}

// Ŵ for stage 2 and the samples stage 1 used to make it (none with the oracle's W_Σ).
struct SculptW {
  MatD w_hat;
  int64_t used = 0;
};

SculptW sculpt_w_hat(const SculptArgs& a, const SampleSource& source, const Instance* truth, json& stages) {
  SculptW w;
  if (a.w_source == "oracle") {
    w.w_hat = truth->layer.w_sum();
    std::printf("[stage 1] skipped: W_Σ given exactly by the instance (oracle)\n");
    return w;
  }
  Stage1Options o1;
  o1.samples = a.learn.stage1_samples;
  o1.threads = a.learn.threads;
  const Stage1Result r1 = stage1_estimate_wsum(source, o1);
  print_stage1(r1, truth);
  stages.push_back(stage1_json(r1, truth));
  w.w_hat = r1.w_hat;
  w.used = r1.samples;
  return w;
}

// The learner's stage-2 options for this round, then the flags' overrides.
ResculptOptions sculpt_options(const SculptArgs& a, const LearnOptions& lo, const SampleSource& source, int m,
                               int64_t used) {
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
  // The learner's round decides the rest; these flags override it.
  if (a.v_min_rule) o.certify.v_min_rule = *a.v_min_rule;
  if (a.selection) o.selection = *a.selection;
  if (a.distinct) o.distinct_constraints = true;
  if (a.tau) {
    o.certify.tau = *a.tau;
    o.selection = SculptOptions::Selection::threshold;  // a given τ is the threshold rule
  }
  return ro;
}

void print_sculpt(const SculptReport& r, const SculptOptions& o, const SampleSource& source, int m) {
  if (r.duplicate_constraints > 0 || o.selection == SculptOptions::Selection::best_rows)
    std::printf("[stage 2] τ_effective = %.3e, %lld duplicate slabs dropped\n", r.tau_effective, (long long)r.duplicate_constraints);
  std::printf("[stage 2] %lld samples, %lld rows examined, %lld certified (%lld from row 0 alone: all rows give %.2fx), "
              "%lld constraints, %.2f s, %.3g rows/s%s\n",
              (long long)r.samples, (long long)r.rows_examined, (long long)r.rows_certified, (long long)r.rows_certified_first_row,
              r.rows_certified_first_row ? double(r.rows_certified) / r.rows_certified_first_row : 0.0,
              (long long)r.constraints, r.seconds, r.rows_per_second, r.budget_exhausted ? " (budget exhausted before the target)" : "");
  std::printf("  verdicts:");
  for (int v = 0; v < 6; ++v) std::printf(" %s %lld", to_string(static_cast<RowVerdict>(v)), (long long)r.verdicts[v]);
  std::printf("\n  numerical rank %d of %d, gap s_%d/s_%d = %.3g; assumed σ_min(C) = %.3g\n", r.numerical_rank,
              source.d() * source.d(), m - 1, m - 2, r.gap, o.certify.sigma_min);
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

// How the body stands against the true heads: printed, and recorded in `stage`.
void add_sculpt_truth(const SculptTruth& t, json& stage) {
  double worst = 0;
  for (double v : t.theta_violation) worst = std::max(worst, v);
  std::printf("  truth: hull error max_i dist(Θ_i, hull)/‖Θ_i‖ = %.3e, hull angle %.3e rad, max slab violation of a true Θ_i %.3e, "
              "rows with σ_min(C) below the assumption %lld\n",
              t.hull_error, t.hull_angle, worst, (long long)t.sigma_assumption_violated);
  stage["truth"] = {{"hull_error", t.hull_error}, {"hull_angle", t.hull_angle}, {"theta_violation", t.theta_violation},
                    {"theta_in_ball", t.theta_in_ball}, {"sigma_assumption_violated", t.sigma_assumption_violated}};
}

// The report and the body, when asked for: kExitOk or the failure's status.
int write_sculpt_outputs(const SculptArgs& a, const json& stages, const ConvexBody& body, const SculptOptions& o,
                         const LearnOptions& lo) {
  json options = {{"instance", a.in.instance_path}, {"seed", a.in.seed}, {"w_sum", a.w_source},
                  {"tau", a.tau ? json(*a.tau) : json("adaptive")}, {"v_min", o.certify.v_min}, {"rows", a.rows},
                  {"stage1_samples", lo.stage1_samples}, {"max_samples", o.max_samples}, {"max_seconds", o.max_seconds}};
  if (!a.report.empty()) {
    json rep = {{"stages", stages}, {"provenance", make_provenance("sculpt", options)}};
    if (auto e = write_json_atomically(a.report, rep); !e.empty()) return fail("sculpt", kExitFailedRun, e);
  }
  if (!a.out.empty()) {
    json slabs = json::array();
    for (const auto& sl : body.slabs()) slabs.push_back({{"a", sl.a}, {"b", sl.b}, {"eta", sl.eta}});
    json body_json = {{"format", "mhalearn.body"}, {"schema_version", 1}, {"dim", body.dim()}, {"radius", body.radius()},
                      {"slabs", slabs}, {"provenance", make_provenance("sculpt", options)}};
    if (auto e = write_json_atomically(a.out, body_json); !e.empty()) return fail("sculpt", kExitFailedRun, e);
  }
  return kExitOk;
}

// Stage 1 (or the oracle's W_Σ), then stage 2 as the learner's round runs it.
int run_sculpt(SculptArgs& a, CLI::App* cmd) {
  if (auto e = sculpt_tau_rule_problem(a, cmd); !e.empty()) return fail("sculpt", kExitBadInput, e);
  if (auto r = open_input(a.in); !r.error.empty()) return fail("sculpt", r.exit_code, r.error);
  const Instance* truth = a.in.instance ? &*a.in.instance : nullptr;
  const SampleSource& source = *a.in.source;
  const int m = truth ? truth->m() : a.m;
  if (m < 1) return fail("sculpt", kExitBadInput, "with --x/--y give the number of heads with --m");
  if (truth && a.m > 0 && a.m != m) return fail("sculpt", kExitBadInput, "--m differs from the instance's number of heads");
  if (a.w_source == "oracle" && !truth) return fail("sculpt", kExitBadInput, "--w-sum oracle needs an instance");
  if (source.k() * m > source.d())
    std::fprintf(stderr, "mhalearn sculpt: warning: k·m = %d > d = %d, the certification lemma does not apply\n", source.k() * m, source.d());
  json stages = json::array();
  const SculptW w = sculpt_w_hat(a, source, truth, stages);
  LearnOptions lo = a.learn;
  lo.m = m;
  lo.label_noise = a.in.label_noise;  // certification accounts for the noise --label-noise adds
  ResculptOptions ro = sculpt_options(a, lo, source, m, w.used);
  SculptOptions& o = ro.sculpt;
  const Layer* truth_layer = truth ? &truth->layer : nullptr;
  const ResculptResult rs = a.tau ? ResculptResult{*a.tau, 0, 0, sculpt_body(source, w.w_hat, m, o, truth_layer)}
                                  : resculpt(source, w.w_hat, m, ro, truth_layer);
  if (!a.tau) {
    o.certify.tau = rs.tau;
    std::printf("[stage 2] adaptive τ = %.3e from a pilot of %lld samples (%lld eligible rows)\n", rs.tau,
                (long long)rs.pilot_samples, (long long)rs.pilot_eligible_rows);
  }
  const SculptReport& r = rs.sculpt.report;
  print_sculpt(r, o, source, m);
  json stage = sculpt_stage_json(a, rs, o);
  if (r.truth) add_sculpt_truth(*r.truth, stage);
  stages.push_back(stage);
  if (int status = write_sculpt_outputs(a, stages, rs.sculpt.body, o, lo); status != kExitOk) return status;
  if (r.constraints == 0) return fail("sculpt", kExitFailedRun, "no row was certified within the budget; raise --tau or the budget");
  return kExitOk;
}

}  // namespace

Runner add_sculpt(CLI::App& app) {
  auto* cmd = app.add_subcommand("sculpt", "Stage 2: certify coincident attention rows and sculpt the convex body K (MATH.md §3)");
  auto a = std::make_shared<SculptArgs>();
  a->learn.threads = default_threads();
  add_sculpt_options(cmd, *a);
  return [a, cmd] { return run_sculpt(*a, cmd); };
}

}  // namespace mha::cli
