// The work of `mhalearn stage1` and `mhalearn sculpt` (the learner's first two
// stages, MATH.md §3.1–§3.2), which stage_commands.cpp declares: each runs on a
// sample source and returns its report, its text and its output document.
#pragma once

#include "commands/schema.hpp"
#include "commands/status.hpp"
#include "data/oracle.hpp"
#include "learn/learner.hpp"
#include "stages/stage2/sculpt.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>

namespace mha::commands {

// What a stage command returns: the --report document, what the CLI prints,
// and the -o document.
struct StageRun {
  int status = kExitOk;
  std::string error;          // one line, when status ≠ kExitOk
  nlohmann::json report;      // {"stages": [...], "provenance": ...}; null when refused before running
  std::string text;
  nlohmann::json output;      // stage1: Ŵ (mhalearn.matrix); sculpt: the body K (mhalearn.body)
  StageRun failed(int code, std::string message) && {
    status = code;
    error = std::move(message);
    return std::move(*this);
  }
};

struct Stage1Args {
  int64_t samples = 1000000;
  int threads = default_threads();
  double max_seconds = 0;
  bool reference = false;  // also the MPFR same-sample check, and exact enumeration when k·d ≤ 20
  int64_t reference_samples = 2000;
  unsigned precision = 200;
};

// Stage 1 on `source` (the oracle of `truth` with `seed` when there is one);
// `source_options` (where the samples come from) are recorded with the arguments.
StageRun run_stage1_command(const Stage1Args& a, const SampleSource& source, const Instance* truth, uint64_t seed,
                            const nlohmann::json& source_options, const Context& ctx);

// What `sculpt` was asked. Defaults are the learner's (sculpt_round_options):
// round 0's with the stage-1 Ŵ, a later round's with the exact W_Σ (w_source
// "oracle"); τ is adaptive (stage4/resculpt.hpp) unless `tau` fixes it.
struct SculptArgs {
  std::string w_source = "stage1";
  LearnOptions learn;                       // stage1_samples, pilot_samples, v_min, radius, target, max_seconds, threads
  bool pilot_samples_given = false;
  std::optional<double> tau, sigma_min, w_error;
  std::optional<int64_t> max_samples;
  std::string rows = "all";
  int m = 0;                                // 0: the instance's
  std::optional<CertifyOptions::VMinRule> v_min_rule;
  std::optional<SculptOptions::Selection> selection;
  bool distinct = false;
  Spelling spelling = Spelling::cli;        // how messages name the options
  SculptArgs() { learn.threads = default_threads(); }
};

// Stage 1 (or the exact W_Σ), then stage 2 as the learner's round runs it, on
// `source` with the labels' relative noise `label_noise` (certification widens
// its slabs for it).
StageRun run_sculpt_command(const SculptArgs& a, const SampleSource& source, const Instance* truth, double label_noise,
                            const nlohmann::json& source_options, const Context& ctx);

}  // namespace mha::commands
