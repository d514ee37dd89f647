// SIGINT and SIGTERM during a long learn: the first asks the learner to stop at
// its next safe point (LearnOptions::at_safe_point), where it writes the
// checkpoint and the partial report; a second signal ends the process at once,
// as it would without the handler, after removing the temporary files of the
// writers in progress. A signal ignored when the handler would be installed
// (nohup, a background job of a non-interactive shell) stays ignored.
//
// Every other command (and learn outside the learner) ends on SIGINT, SIGTERM
// or SIGHUP after removing its temporary files (remove_temporary_files_on_signals,
// installed by main): a previous output is untouched, since only a finished
// temporary file is ever renamed over it.
#pragma once

#include "commands/schema.hpp"

namespace mha::cli {

void remove_temporary_files_on_signals();

// The handlers of a long learn (commands/stop.hpp holds the request they make).
class StopSignals : public commands::Scope {
 public:
  StopSignals();   // installs the handlers and clears the request
  ~StopSignals() override;  // restores the previous handlers
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
};

}  // namespace mha::cli
