// Progress on stderr: what a long computation has done, how long it has run
// and an estimate of what remains.
//
// On a terminal, one line redrawn in place (at most 5 times a second). In a
// log or a pipe, once the CLI asks for it (ProgressSettings::log_lines), a
// plain line at most every `interval_seconds` (10 by default), so a run in
// the background can be followed without filling its log. `quiet` turns both
// off. Without configure_progress (the Python module) only the terminal line
// is drawn, as before.
//
// Three pieces: Progress counts a loop with a known total (the stages, the
// forward passes); Activity names a step that reports nothing while it runs (a
// library call without a counter), with an estimate of its duration when one
// is known; Heartbeat is a thread, started by the CLI for the length of a
// command, that prints the current state when nothing else did for the
// interval, so a step whose counter does not move still shows the time going.
// A Progress created while another is alive is not printed (the outer one
// knows the whole); the innermost Activity is shown when no Progress is alive.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

namespace mha {

struct ProgressSettings {
  bool quiet = false;            // no progress output at all (--quiet)
  bool log_lines = false;        // plain lines when stderr is not a terminal
  double interval_seconds = 10;  // at most this long between two lines in a log
  std::string prefix;            // before each log line, e.g. "mhalearn learn: "
};
void configure_progress(const ProgressSettings& settings);

// Clears the terminal's progress line (if one is drawn) before other output.
void clear_progress_line();

// A long computation asked to stop at once (Python's Ctrl-C): thrown by
// Progress::update and check_interrupt, on the thread that set the check, once
// it returns true. What is being written is discarded (atomic_file.hpp); a
// learner's checkpoint keeps its last safe point.
struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};
// `check` (empty: none) is this thread's: Progress::update and check_interrupt
// ask it on the thread that set it (it must be cheap: an atomic flag); other
// threads (OpenMP workers) have their own, none by default. Returns the previous one.
std::function<bool()> set_interrupt_check(std::function<bool()> check);
// Throws Interrupted when the check says so.
void check_interrupt();

class Progress {
 public:
  Progress(std::string label, int64_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void update(int64_t done);

 private:
  int id_;
};

class Activity {
 public:
  // estimated_seconds: how long the step is expected to take from now (< 0: unknown).
  explicit Activity(std::string what, double estimated_seconds = -1);
  ~Activity();
  Activity(const Activity&) = delete;
  Activity& operator=(const Activity&) = delete;
  // The same activity moving on to another step.
  void change(std::string what, double estimated_seconds = -1);

 private:
  int id_;
};

class Heartbeat {
 public:
  Heartbeat();
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

 private:
  struct Thread;
  std::unique_ptr<Thread> thread_;
};

// "12 s", "3 min 05 s", "2 h 04 min": durations as progress lines print them.
std::string format_duration(double seconds);
// "512 bytes", "14.0 MB", "1.05 MB", "3.2 GB": sizes in messages, with the unit their size needs.
std::string format_bytes(double bytes);

}  // namespace mha
