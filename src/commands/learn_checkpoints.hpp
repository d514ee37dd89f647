// Checkpoints of a learner run (learn --checkpoint, --resume): the safe-point
// hook that writes them (and stops when asked), reading one back to resume, and
// the directory's checks before the run starts (learn/checkpoint.hpp has the format).
#pragma once

#include "commands/learn_settings.hpp"
#include "learn/learner.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace mha::commands {

// The options a resumed run must repeat: all but the thread count and the time
// budget (neither changes what a step computes), with `identity` (what
// identifies the samples) in place of the input's paths.
nlohmann::json resume_match(nlohmann::json options, const nlohmann::json& identity);

// The learner's safe-point hook: write the checkpoint (when there is a
// directory), then stop if a signal asked to. MHALEARN_STOP_AT_SAFE_POINT=N
// (tests) asks at the N-th safe point of this process, as a signal during the
// step before it would.
struct SafePoints {
  std::string dir;
  nlohmann::json match, provenance;
  long long stop_at = 0;
  long long reached = 0;
  std::string write_error;
  double seconds = 0;  // spent writing checkpoints

  bool operator()(const LearnState& state);
};

// "" or the error: MHALEARN_STOP_AT_SAFE_POINT, when set, is a positive integer.
std::string stop_at_from_environment(long long& stop_at);

// Reads and checks the checkpoint of a resumed run against this one; "" or the
// error (options spelled as `spelling` spells them). A checkpoint of another
// build is refused unless `other_build`, since
// the steps it took may give other bytes than this build's. `provenance` (this
// run's) becomes the resumed run's: "earlier_builds" lists, oldest first, each
// other build that wrote part of the run and the safe point it reached, so a
// report never passes for one build's when it is not.
std::string read_resume(const std::string& dir, const nlohmann::json& match, nlohmann::json& provenance,
                        bool other_build, Spelling spelling, int k, int d, const LearnOptions& o,
                        std::optional<LearnState>& state);

// Before a run with `checkpoint` (and no resume): the directory must not hold
// one already, and is created now rather than after stage 1. "" or the error.
std::string prepare_checkpoint_directory(const std::string& checkpoint);

// The line that ends an interrupted run: where it stopped and how to go on.
std::string interrupted_message(const LearnReport& report, const SafePoints& points);

}  // namespace mha::commands
