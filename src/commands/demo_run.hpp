// The work of `mhalearn demo`, the main job (demo_command.cpp declares it):
// generate the default instance, write it and some samples, report its
// conditions, cross-check the fast forward pass against the MPFR reference, and
// learn it end to end, into one output directory. The text goes to the
// context's printer as it is made (the command line prints it at once, Python
// collects it), so that both surfaces write the same files and report.
#pragma once

#include "commands/learn_settings.hpp"
#include "commands/stage_runs.hpp"
#include "model/instance_gen.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mha::commands {

// What `demo` was asked.
struct DemoArgs {
  GenerateOptions gen;
  std::string out = "mhalearn-demo";
  int64_t written = 1000, checked = 256;
  LearnSettings learn;           // the learner's options, from learn's table
  std::set<std::string> given;  // the table's flags given
  uint64_t sample_seed = 1;
};

// learn's options that demo does not take: the method and the oracle are demo's
// own (the paper's learner, no oracle), and it neither checkpoints nor resumes.
const std::set<std::string>& demo_excluded_learn_flags();

struct DemoRun {
  int status = kExitOk;
  std::string error;                  // one line, when status ≠ kExitOk
  nlohmann::json report;              // what OUT/report.json holds (null when none was written)
  std::optional<LearnReport> learned; // the learner's report, when it ran (its diagnostics and verdict)
};

// The demo into a.out (created); ctx.print receives the text as it is made. A
// learner that ran gives status kExitOk or kExitFailedRun (its verdict, exit 4,
// is the caller's to read from `learned`).
DemoRun run_demo_command(DemoArgs a, const Context& ctx);

}  // namespace mha::commands
