#include "cli/stop_signals.hpp"

#include "commands/stop.hpp"
#include "data/atomic_file.hpp"

#include <csignal>
#include <cstring>

#include <unistd.h>

namespace mha::cli {

namespace {

struct sigaction g_previous[2];
constexpr int kSignals[2] = {SIGINT, SIGTERM};
bool g_installed[2] = {false, false};

// Removes the temporary files of the writers in progress, then lets the
// signal end the process as it would have without a handler (its exit status
// says which signal). Async-signal-safe: unlink, signal and raise only.
extern "C" void end_on_signal(int sig) {
  remove_temporary_files();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

extern "C" void on_stop_signal(int sig) {
  if (commands::stop_requested()) {  // the second signal: stop at once, without leaving temporary files
    end_on_signal(sig);
    return;
  }
  commands::request_stop();
  // write(2) is async-signal-safe; stdio is not.
  static const char kMessage[] =
      "mhalearn learn: stopping at the next safe point (a second signal stops at once)\n";
  const ssize_t ignored = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  (void)ignored;
}

}  // namespace

StopSignals::StopSignals() {
  commands::clear_stop_request();
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: the work between safe points (file reads, CLP) never sees EINTR.
  action.sa_flags = SA_RESTART;
  for (int i = 0; i < 2; ++i) {
    g_installed[i] = false;
    if (::sigaction(kSignals[i], nullptr, &g_previous[i]) != 0 || g_previous[i].sa_handler == SIG_IGN) continue;
    g_installed[i] = ::sigaction(kSignals[i], &action, nullptr) == 0;
  }
}

StopSignals::~StopSignals() {
  for (int i = 0; i < 2; ++i)
    if (g_installed[i]) ::sigaction(kSignals[i], &g_previous[i], nullptr);
}

void remove_temporary_files_on_signals() {
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction previous;
    if (::sigaction(sig, nullptr, &previous) != 0 || previous.sa_handler == SIG_IGN) continue;  // nohup stays nohup
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_handler = end_on_signal;
    sigemptyset(&action.sa_mask);
    ::sigaction(sig, &action, nullptr);
  }
}

}  // namespace mha::cli
