// stage1, sculpt: the first two stages of the learner on an instance (streaming
// oracle) or on a dataset (.npy), with sample and time budgets. The work is
// cli/stage_runs.hpp's (shared with Python); here are the options and files.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/input.hpp"
#include "cli/stage_runs.hpp"
#include "data/instance_io.hpp"
#include "data/provenance.hpp"

#include <cstdio>
#include <map>
#include <memory>

namespace mha::cli {

using nlohmann::json;

namespace {

json input_options(const Input& in) {
  return {{"instance", in.instance_path}, {"x", in.x_path}, {"y", in.y_path}, {"seed", in.seed}};
}

// Prints the run's text, writes what was asked even when the run failed after
// it ran (its report says how), then the exit status with its one line.
int finish_stage_command(const char* command, const StageRun& run, const std::string& report, const std::string& out) {
  if (run.report.is_null()) return fail(command, run.status, run.error);  // refused before it ran
  std::fputs(run.text.c_str(), stdout);
  if (!report.empty())
    if (auto e = write_json_atomically(report, run.report); !e.empty()) return fail(command, kExitFailedRun, e);
  if (!out.empty())
    if (auto e = write_json_atomically(out, run.output); !e.empty()) return fail(command, kExitFailedRun, e);
  return run.status == kExitOk ? kExitOk : fail(command, run.status, run.error);
}

}  // namespace

Runner add_stage1(CLI::App& app) {
  auto* cmd = app.add_subcommand("stage1", "Stage 1: crude estimate Ŵ of W_Σ = Σ_i W_i (MATH.md §3)");
  struct Args { Input in; Stage1Args run; std::string report, out; };
  auto a = std::make_shared<Args>();
  add_input_options(cmd, a->in);
  Stage1Args& r = a->run;
  cmd->add_option("--samples", r.samples, "samples to use")->capture_default_str();
  add_threads_option(cmd, r.threads, "worker threads (results do not depend on it)");
  cmd->add_option("--max-seconds", r.max_seconds, "time budget (0: none)")->capture_default_str();
  auto* reference_opt = cmd->add_flag("--reference", r.reference,
                "also run the reference path: the population value Σ_i M(Θ_i) W_i by exact enumeration when k·d ≤ 20, and in "
                "every case the fast vs MPFR statistic on the same first --reference-samples samples");
  cmd->add_option("--reference-samples", r.reference_samples, "samples of the same-sample cross-check")->capture_default_str()
      ->needs(reference_opt);
  cmd->add_option("--precision", r.precision, "MPFR bits of the reference")->capture_default_str()->needs(reference_opt);
  cmd->add_option("--report", a->report, "JSON report to write");
  cmd->add_option("-o,--output", a->out, "write Ŵ (JSON) here");
  return [a] {
    if (auto r = open_input(a->in); !r.error.empty()) return fail("stage1", r.exit_code, r.error);
    const Instance* truth = a->in.instance ? &*a->in.instance : nullptr;
    const StageRun run = run_stage1_command(a->run, *a->in.source, truth, a->in.seed, input_options(a->in), make_provenance);
    return finish_stage_command("stage1", run, a->report, a->out);
  };
}

namespace {

struct SculptCliArgs {
  Input in;
  SculptArgs run;
  std::string report, out;
};

void add_sculpt_options(CLI::App* cmd, SculptCliArgs& c) {
  SculptArgs& a = c.run;
  SculptOptions& so = a.learn.sculpt.sculpt;
  add_input_options(cmd, c.in);
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
  add_threads_option(cmd, a.learn.threads, "worker threads (results do not depend on it)");
  cmd->add_option("--report", c.report, "JSON report to write");
  cmd->add_option("-o,--output", c.out, "write the body K (JSON) here");
}

}  // namespace

Runner add_sculpt(CLI::App& app) {
  auto* cmd = app.add_subcommand("sculpt", "Stage 2: certify coincident attention rows and sculpt the convex body K (MATH.md §3)");
  auto c = std::make_shared<SculptCliArgs>();
  add_sculpt_options(cmd, *c);
  return [c, cmd] {
    c->run.pilot_samples_given = cmd->count("--pilot-samples") != 0;
    if (auto r = open_input(c->in); !r.error.empty()) return fail("sculpt", r.exit_code, r.error);
    const Instance* truth = c->in.instance ? &*c->in.instance : nullptr;
    const json source = {{"instance", c->in.instance_path}, {"seed", c->in.seed}};
    const StageRun run = run_sculpt_command(c->run, *c->in.source, truth, c->in.label_noise, source, make_provenance);
    return finish_stage_command("sculpt", run, c->report, c->out);
  };
}

}  // namespace mha::cli
