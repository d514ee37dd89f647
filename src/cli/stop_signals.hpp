// SIGINT and SIGTERM during a long learn: the first asks the learner to stop at
// its next safe point (LearnOptions::at_safe_point), where it writes the
// checkpoint and the partial report; the handler then uninstalls itself
// (SA_RESETHAND), so a second signal ends the process at once, as it would
// without the handler. A signal ignored when the handler would be installed
// (nohup, a background job of a non-interactive shell) stays ignored.
#pragma once

namespace mha::cli {

class StopSignals {
 public:
  StopSignals();   // installs the handlers and clears the request
  ~StopSignals();  // restores the previous handlers
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Whether a stop was requested, by a signal or by request().
  static bool requested();
  // The same request a signal makes (the tests' MHALEARN_STOP_AT_SAFE_POINT).
  static void request();
};

}  // namespace mha::cli
