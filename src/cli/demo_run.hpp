// The work of `mhalearn demo`, the main job, shared by the CLI (cmd_demo.cpp:
// options, printing) and Python's mhalearn.demo: generate the default instance,
// write it and some samples, report its conditions, cross-check the fast forward
// pass against the MPFR reference, and learn it end to end, into one output
// directory. The text goes to a printer as it is made (the CLI prints it at once,
// Python collects it), so that both surfaces write the same files and report.
#pragma once

#include "cli/learn_settings.hpp"
#include "cli/stage_runs.hpp"
#include "model/instance_gen.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mha::cli {

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
// Whether demo takes this row of learn's table (the paper learner's options but those above).
bool demo_takes_learn_option(const LearnOptionSpec& spec);
// learn_option_table_json()'s rows that demo takes (Python's help(mhalearn.demo) lists them).
nlohmann::json demo_learn_option_table_json();

struct DemoRun {
  int status = kExitOk;
  std::string error;                  // one line, when status ≠ kExitOk
  nlohmann::json report;              // what OUT/report.json holds (null when none was written)
  std::optional<LearnReport> learned; // the learner's report, when it ran (its diagnostics and verdict)
};

using Printer = std::function<void(const std::string&)>;

// The demo into a.out (created); `print` receives the text as it is made. A
// learner that ran gives status kExitOk or kExitFailedRun (its verdict, exit 4,
// is the caller's to read from `learned`).
DemoRun run_demo_command(DemoArgs a, const Printer& print, const ProvenanceMaker& provenance);

}  // namespace mha::cli
