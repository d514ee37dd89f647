// The learner's table as the run goes (learn, demo): its head when the run
// starts, each stage's line when the stage ends — at the learner's safe points,
// so that a terminal, a log file and a pipe see it then — and the rest of the
// table at the end. Then what the user should act on, as warnings, and with
// --verbose the diagnostics.
#pragma once

#include "commands/schema.hpp"
#include "learn/report.hpp"

#include <cstddef>

namespace mha::commands {

class StageLines {
 public:
  StageLines(const Context& ctx, LearnVariant variant);
  // The lines of the stages that ended since the last call.
  void update(const LearnReport& report);
  // The last lines, the rest of the table, the warnings and (verbose) the diagnostics.
  void finish(const LearnReport& report, const std::string& table_end = "");

 private:
  const Context& ctx_;
  size_t printed_ = 0;
};

// The exit status of a learner run whose files are written: exit 4 with one
// line when a reference row disagrees (README, "Exit status"), else `r` as it is.
void learner_verdict(const LearnReport& report, Result& r);

}  // namespace mha::commands
