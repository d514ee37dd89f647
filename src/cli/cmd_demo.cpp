// demo: the main job. Generates the default instance, samples it, reports its
// conditions, cross-checks the fast forward pass against the MPFR reference,
// and learns the instance end to end (stages 1–6, then polishing) with the
// per-stage report. The work is cli/demo_run.hpp's, shared with Python.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/demo_run.hpp"
#include "cli/learn_settings.hpp"
#include "data/provenance.hpp"

#include <cstdio>
#include <memory>

namespace mha::cli {

namespace {

void add_demo_options(CLI::App* cmd, DemoArgs& a) {
  cmd->add_option("--d", a.gen.d, "token dimension")->capture_default_str();
  cmd->add_option("--k", a.gen.k, "sequence length")->capture_default_str();
  cmd->add_option("--m", a.gen.m, "heads")->capture_default_str();
  cmd->add_option("--scale", a.gen.scale, "logit scale ‖Θ_i‖_F")->capture_default_str();
  cmd->add_option("--seed", a.gen.seed, "instance seed")->capture_default_str();
  cmd->add_option("--sample-seed", a.sample_seed, "sample seed")->capture_default_str();
  cmd->add_option("--write-samples", a.written, "samples written to X.npy / Y.npy")->capture_default_str();
  cmd->add_option("--cross-check", a.checked, "samples checked fast vs reference")->capture_default_str();
  cmd->add_option("--out", a.out, "output directory")->capture_default_str();
  // The learner's budgets and switches; the samples and method are demo's own.
  add_learn_table_options(cmd, a.learn, kMethodPaper, demo_excluded_learn_flags());
}

// The text as it is made: a demo's steps take from seconds to a minute each.
void print_now(const std::string& text) {
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

}  // namespace

Runner add_demo(CLI::App& app) {
  auto* cmd = app.add_subcommand("demo", "The main job on the default instance, with a per-stage report");
  auto a = std::make_shared<DemoArgs>();
  add_demo_options(cmd, *a);
  return [a, cmd] {
    a->given = given_learn_flags(*cmd);
    if (auto e = learn_settings_problem(a->learn, a->given, true, Spelling::cli); !e.empty())
      return fail("demo", kExitBadInput, e);
    const DemoRun run = run_demo_command(*a, print_now, make_provenance);
    if (run.status != kExitOk) return fail("demo", run.status, run.error);
    return learner_exit_status("demo", *run.learned);
  };
}

}  // namespace mha::cli
