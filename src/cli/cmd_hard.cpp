// hard: the SQ-hard family of MATH.md §4 (k = 2). Builds F_S exactly, verifies
// it (exact closed form; double and MPFR passes within derived bounds),
// prints the SQ numbers and writes the instance. --study prints the
// conditioning table of docs/hardness.md instead. The work is cli/hard_run.hpp's.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/hard_run.hpp"
#include "data/atomic_file.hpp"
#include "data/instance_io.hpp"

#include <iostream>
#include <memory>

namespace mha::cli {

namespace {

constexpr const char* kCmd = "hard";

// What `hard` was asked: the shared arguments, its files and printing.
struct HardCliArgs {
  HardArgs run;
  std::string out, study_data;
  bool as_json = false, study = false;
};

// The options whose presence (not only their value) matters.
struct HardGiven {
  CLI::Option* d = nullptr;
  CLI::Option* m = nullptr;
  CLI::Option* samples = nullptr;
};

HardGiven add_hard_options(CLI::App* cmd, HardCliArgs& c) {
  HardArgs& a = c.run;
  HardGiven given;
  given.d = cmd->add_option("--d", a.d, "token dimension d (m + 1 ≤ d ≤ 1024)");
  given.m = cmd->add_option("--m", a.m, "|S| = m ≥ 1; the layer has m + 1 heads");
  cmd->add_option("--subset", a.subset, "S as comma-separated 0-based indices, none equal to p (default: {0..m−1} shifted past p)");
  cmd->add_option("--q", a.q, "q_0..q_m: m + 1 distinct positive rationals, e.g. 1,2,3 or 1/2,3,7/4 (default: docs/hardness.md — optimized nodes in [1, m+1] for m ≤ 8)");
  cmd->add_option("--p", a.p, "input coordinate p (0-based)")->capture_default_str();
  cmd->add_option("--q-out", a.q_out, "output coordinate q_out (0-based, ≠ p)")->capture_default_str();
  cmd->add_option("--seed", a.seed, "seed of the sampled inputs (d > 10)")->capture_default_str();
  given.samples = cmd->add_option("--verify-samples", a.samples, "sampled inputs to verify when d > 10 (giving it also forces sampling for d ≤ 10)")
                      ->capture_default_str();
  cmd->add_option("--mpfr-checks", a.mpfr_checks, "inputs also run through both MPFR passes (default: 256, fewer for d > 128)");
  cmd->add_option("--precision", a.precision, "MPFR bits of the reference passes")->capture_default_str();
  cmd->add_option("--tolerance", a.tolerance, "SQ tolerance τ ∈ (0, 1] for the query lower bound")->capture_default_str();
  add_threads_option(cmd, a.threads, "worker threads (results do not depend on it)");
  auto* out_opt = cmd->add_option("-o,--output", c.out, "instance file to write (JSON)");
  cmd->add_flag("--json", c.as_json, "print the report as JSON");
  auto* study_opt = cmd->add_flag("--study", c.study, "print the conditioning study of docs/hardness.md instead (every q choice, m = 1..--study-max-m)");
  cmd->add_option("--study-max-m", a.study_max_m, "largest m of the study")->capture_default_str()->needs(study_opt);
  cmd->add_option("--study-data", c.study_data, "with --study: also write the table as a gnuplot data file")->needs(study_opt);
  out_opt->excludes(study_opt);  // the study writes no instance
  return given;
}

int run_study(const HardCliArgs& c) {
  const HardRun run = run_hard_study(c.run);
  if (run.report.is_null()) return fail(kCmd, run.status, run.error);  // refused before it ran
  if (!c.study_data.empty())
    if (auto e = write_file_atomically(c.study_data, run.study_data); !e.empty()) return fail(kCmd, kExitFailedRun, e);
  std::cout << (c.as_json ? run.report.dump(2) : run.text) << (c.as_json ? "\n" : "");
  return run.status == kExitOk ? kExitOk : fail(kCmd, run.status, run.error);
}

// The family, its instance written when every check holds, and the report.
int run_hard(HardCliArgs& c, const HardGiven& given) {
  c.run.d_given = given.d->count() != 0;
  c.run.m_given = given.m->count() != 0;
  c.run.samples_given = given.samples->count() != 0;
  if (c.study) return run_study(c);
  HardRun run = run_hard_family(c.run);
  if (run.report.is_null()) return fail(kCmd, run.status, run.error);  // refused before it ran
  if (run.instance && !c.out.empty()) {
    if (auto e = write_instance(c.out, *run.instance); !e.empty()) return fail(kCmd, kExitFailedRun, e);
    run.report["output"] = c.out;
    run.text += "\nwrote " + c.out + "\n";
  }
  std::cout << (c.as_json ? run.report.dump(2) + "\n" : run.text);
  return run.status == kExitOk ? kExitOk : fail(kCmd, run.status, run.error);
}

}  // namespace

Runner add_hard(CLI::App& app) {
  auto* cmd = app.add_subcommand("hard", "The SQ-hard family F_S of MATH.md §4 (k = 2): build exactly, verify, SQ bound, write the instance");
  auto c = std::make_shared<HardCliArgs>();
  const HardGiven given = add_hard_options(cmd, *c);
  return [c, given] { return run_hard(*c, given); };
}

}  // namespace mha::cli
