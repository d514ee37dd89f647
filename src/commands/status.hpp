// The exit statuses every subcommand shares (README, "Exit status"), and the
// thread count a command uses when none is given.
#pragma once

#include <thread>

namespace mha::commands {

constexpr int kExitOk = 0;
constexpr int kExitFailedRun = 1;  // budget exhausted, a stage could not proceed
constexpr int kExitBadInput = 2;   // bad usage or bad input
// The fast (double) path cannot answer this input: its logits or outputs would
// overflow double. The reference path (forward --path reference) can.
constexpr int kExitFastPathOverflow = 3;
// A fast path disagrees with its reference path beyond the derived bound, after
// the reference was escalated to its most precise arithmetic (verify, learn, demo).
constexpr int kExitDisagreement = 4;
// learn stopped at a safe point on SIGINT/SIGTERM, after writing its checkpoint
// (with --checkpoint/--resume) and its report marked "interrupted".
constexpr int kExitInterrupted = 5;

inline int default_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace mha::commands
