#include "util/progress.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include <unistd.h>

namespace mha {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// One Progress (a counter) or Activity, as the board shows it.
struct Entry {
  int id = 0;
  bool counter = false;
  std::string label;
  int64_t total = 0, done = 0;
  Clock::time_point start;
  double estimate = -1;  // an Activity's expected duration from `start`
};

// Everything printed goes through here, under one lock: the Progress of the
// stages, the Activities of the CLI and the heartbeat thread.
struct Board {
  std::mutex mu;
  ProgressSettings settings;
  bool terminal = ::isatty(STDERR_FILENO) == 1;
  bool line_shown = false;  // a redrawn line is on the terminal
  Clock::time_point started = Clock::now(), last_output = Clock::now(), last_draw = Clock::now();
  std::vector<Entry> entries;  // in creation order
  int next_id = 1;
};

Board& board() {
  static Board b;
  return b;
}

// The outermost counter, else the innermost activity, else none.
const Entry* shown(const Board& b) {
  for (const Entry& e : b.entries)
    if (e.counter) return &e;
  return b.entries.empty() ? nullptr : &b.entries.back();
}

Entry* find(Board& b, int id) {
  for (Entry& e : b.entries)
    if (e.id == id) return &e;
  return nullptr;
}

std::string counter_status(const Entry& e, double elapsed) {
  char text[160];
  if (e.done <= 0 || e.total <= 0) {
    std::snprintf(text, sizeof text, "%lld / %lld, %s so far, no estimate yet", (long long)e.done, (long long)e.total,
                  format_duration(elapsed).c_str());
    return text;
  }
  const double left = elapsed * double(e.total - std::min(e.done, e.total)) / double(e.done);
  std::snprintf(text, sizeof text, "%.0f%% (%lld / %lld), %s so far, about %s left", 100.0 * double(e.done) / double(e.total),
                (long long)e.done, (long long)e.total, format_duration(elapsed).c_str(), format_duration(left).c_str());
  return text;
}

std::string activity_status(const Entry& e, double elapsed) {
  const std::string so_far = format_duration(elapsed) + " so far";
  if (e.estimate < 0) return so_far + ", no estimate for this step";
  if (elapsed <= e.estimate) return so_far + ", about " + format_duration(e.estimate - elapsed) + " left (estimated)";
  return so_far + ", longer than the estimated " + format_duration(e.estimate);
}

std::string status_line(const Board& b, Clock::time_point now) {
  const Entry* e = shown(b);
  if (!e) return "[working] " + format_duration(seconds_between(b.started, now)) + " so far";
  const double elapsed = seconds_between(e->start, now);
  return "[" + e->label + "] " + (e->counter ? counter_status(*e, elapsed) : activity_status(*e, elapsed));
}

// Prints the board's state when it is due: on a terminal redrawn at most
// every `redraw` seconds, in a log (when asked for) at most every interval.
void print_if_due(Board& b, Clock::time_point now, double redraw, bool force_draw = false) {
  if (b.settings.quiet) return;
  if (b.terminal) {
    if (!force_draw && seconds_between(b.last_draw, now) < redraw) return;
    std::fprintf(stderr, "\r\033[K%s", status_line(b, now).c_str());
    std::fflush(stderr);
    b.line_shown = true;
    b.last_draw = now;
  } else if (b.settings.log_lines && seconds_between(b.last_output, now) >= b.settings.interval_seconds) {
    std::fprintf(stderr, "%s%s\n", b.settings.prefix.c_str(), status_line(b, now).c_str());
    std::fflush(stderr);
    b.last_output = now;
  }
}

void clear_terminal_line(Board& b) {
  if (!b.line_shown) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  b.line_shown = false;
}

int add_entry(Entry e) {
  Board& b = board();
  std::lock_guard lock(b.mu);
  e.id = b.next_id++;
  e.start = Clock::now();
  b.entries.push_back(std::move(e));
  return b.entries.back().id;
}

void remove_entry(int id) {
  Board& b = board();
  std::lock_guard lock(b.mu);
  const bool was_shown = shown(b) && shown(b)->id == id;
  b.entries.erase(std::remove_if(b.entries.begin(), b.entries.end(), [id](const Entry& e) { return e.id == id; }),
                  b.entries.end());
  if (was_shown && b.terminal) clear_terminal_line(b);
}

// This thread's interrupt check.
std::function<bool()>& interrupt_check() {
  thread_local std::function<bool()> check;
  return check;
}

}  // namespace

std::function<bool()> set_interrupt_check(std::function<bool()> check) {
  std::swap(interrupt_check(), check);
  return check;
}

void check_interrupt() {
  const std::function<bool()>& check = interrupt_check();
  if (check && check()) throw Interrupted();
}

std::string format_duration(double seconds) {
  char text[48];
  if (seconds < 10) std::snprintf(text, sizeof text, "%.1f s", std::max(seconds, 0.0));
  else if (seconds < 60) std::snprintf(text, sizeof text, "%.0f s", seconds);
  else if (seconds < 3600) std::snprintf(text, sizeof text, "%d min %02d s", int(seconds) / 60, int(seconds) % 60);
  else std::snprintf(text, sizeof text, "%d h %02d min", int(seconds) / 3600, int(seconds) % 3600 / 60);
  return text;
}

std::string format_bytes(double bytes) {
  char text[48];
  if (bytes < 1e3) std::snprintf(text, sizeof text, "%.0f bytes", bytes);
  else if (bytes < 1e6) std::snprintf(text, sizeof text, "%.1f kB", bytes / 1e3);
  else if (bytes < 1e9) std::snprintf(text, sizeof text, "%.1f MB", bytes / 1e6);
  else if (bytes < 1e12) std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
  else std::snprintf(text, sizeof text, "%.1f TB", bytes / 1e12);
  return text;
}

void clear_progress_line() {
  Board& b = board();
  std::lock_guard lock(b.mu);
  clear_terminal_line(b);
}

void configure_progress(const ProgressSettings& settings) {
  Board& b = board();
  std::lock_guard lock(b.mu);
  b.settings = settings;
  b.started = b.last_output = Clock::now();
}

Progress::Progress(std::string label, int64_t total) {
  Entry e;
  e.counter = true;
  e.label = std::move(label);
  e.total = total;
  id_ = add_entry(std::move(e));
}

Progress::~Progress() { remove_entry(id_); }

void Progress::update(int64_t done) {
  {
    Board& b = board();
    std::lock_guard lock(b.mu);
    Entry* e = find(b, id_);
    if (!e) return;
    e->done = done;
    if (shown(b) == e) print_if_due(b, Clock::now(), 0.2, b.terminal && done >= e->total);  // else the outer one is printed
  }
  check_interrupt();
}

Activity::Activity(std::string what, double estimated_seconds) {
  Entry e;
  e.label = std::move(what);
  e.estimate = estimated_seconds;
  id_ = add_entry(std::move(e));
}

Activity::~Activity() { remove_entry(id_); }

void Activity::change(std::string what, double estimated_seconds) {
  Board& b = board();
  std::lock_guard lock(b.mu);
  if (Entry* e = find(b, id_)) {
    e->label = std::move(what);
    e->estimate = estimated_seconds;
    e->start = Clock::now();
  }
}

struct Heartbeat::Thread {
  std::mutex mu;
  std::condition_variable wake;
  bool stop = false;
  std::thread worker;

  void run() {
    std::unique_lock lock(mu);
    while (!wake.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop; })) {
      Board& b = board();
      std::lock_guard board_lock(b.mu);
      // A terminal line that stopped moving is redrawn every second, so the
      // time keeps counting; a log gets a line whenever the interval has passed
      // without one. Only while something is counted or named: between two
      // steps the command's own output is printing, and says where it is.
      const auto now = Clock::now();
      if (b.entries.empty() || (b.terminal && seconds_between(b.started, now) < 2)) continue;
      print_if_due(b, now, 1.0);
    }
  }
};

Heartbeat::Heartbeat() : thread_(std::make_unique<Thread>()) {
  thread_->worker = std::thread([t = thread_.get()] { t->run(); });
}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard lock(thread_->mu);
    thread_->stop = true;
  }
  thread_->wake.notify_all();
  thread_->worker.join();
  Board& b = board();
  std::lock_guard lock(b.mu);
  clear_terminal_line(b);
}

}  // namespace mha
