#include "data/atomic_file.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <thread>

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace mha {

namespace {

// The temporary files of the writers in progress, in a table a signal handler
// may read: a slot's path is complete before the slot is marked ready, and the
// handler reads ready slots only. Fixed size and no allocation, so that the
// handler stays async-signal-safe. The CLI has a few writers open at a time; a
// writer that finds no free slot still removes its file itself, only a signal
// would leave it.
constexpr int kSlots = 64;
constexpr size_t kSlotPathBytes = 4096;
enum SlotState : int { kFree = 0, kFilling = 1, kReady = 2 };
struct TemporarySlot {
  std::atomic<int> state{kFree};
  char path[kSlotPathBytes];
};
TemporarySlot g_temporaries[kSlots];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads the slots");

int register_temporary(const std::string& path) {
  if (path.size() >= kSlotPathBytes) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_temporaries[i].state.compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(g_temporaries[i].path, path.c_str(), path.size() + 1);
    g_temporaries[i].state.store(kReady, std::memory_order_release);
    return i;
  }
  return -1;
}

void unregister_temporary(int& slot) {
  if (slot >= 0) g_temporaries[slot].state.store(kFree, std::memory_order_release);
  slot = -1;
}

// A writer between mkstemp and registering its file, and the signal handler's
// sweep (remove_temporary_files), exclude each other. The stop signals are
// blocked in the writing thread, but a signal sent to the process is then
// delivered to another thread (OpenMP workers, the progress heartbeat), whose
// handler would find the file created and not yet listed. So each side raises
// its own flag and then reads the other's (sequentially consistent: at least
// one of the two sees the other): the sweep waits while a file is being
// created, and a writer that sees the process ending creates, writes and
// renames nothing more (a rename after the signal would replace the previous
// output the signal was meant to keep).
std::atomic<int> g_creating{0};
std::atomic<bool> g_ending{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler sets it");

// The handler that set g_ending ends the process once it has swept.
[[noreturn]] void wait_for_the_end() {
  for (;;) ::pause();
}

// Hooks for tests/cli/signals.py, read once before main (the signal handler may
// not call getenv). MHALEARN_TEST_HOLD_WHILE_CREATING=S: every writer waits S s
// between mkstemp and listing its file; MHALEARN_TEST_HOLD_BEFORE_RENAME=S: with
// its file complete, before the rename; MHALEARN_TEST_HOLD_SWEEP=S: the sweep
// waits S s before removing the files — so that a signal can land in each
// window. MHALEARN_TEST_DROP_GUARD=creation (the sweep does not wait for a file
// being created) or =publication (a writer goes on after a sweep began): the
// deliberately wrong writers the test must reject.
double test_seconds(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atof(v) : 0.0;
}
bool test_drops(const char* guard) {
  const char* v = std::getenv("MHALEARN_TEST_DROP_GUARD");
  return v && std::strcmp(v, guard) == 0;
}
struct TestHooks {
  double hold_while_creating = test_seconds("MHALEARN_TEST_HOLD_WHILE_CREATING");
  double hold_before_rename = test_seconds("MHALEARN_TEST_HOLD_BEFORE_RENAME");
  unsigned hold_sweep = static_cast<unsigned>(test_seconds("MHALEARN_TEST_HOLD_SWEEP"));
  bool creation_unguarded = test_drops("creation");
  bool publication_unguarded = test_drops("publication");
};
const TestHooks g_test_hooks;

void hold_for_tests(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

// Where a writer stops for good once a sweep has begun.
void stop_if_ending() {
  if (!g_test_hooks.publication_unguarded && g_ending.load()) wait_for_the_end();
}

// mkstemp and the registration with the stop signals blocked in this thread
// (its own handler cannot interrupt them) and g_creating raised (no other
// thread's handler sweeps meanwhile).
int create_registered_temporary(std::string& tmp, int& slot) {
  sigset_t stops, previous;
  sigemptyset(&stops);
  for (const int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stops, s);
  pthread_sigmask(SIG_BLOCK, &stops, &previous);
  g_creating.fetch_add(1);
  if (g_ending.load() && !g_test_hooks.publication_unguarded) {
    g_creating.fetch_sub(1);
    wait_for_the_end();
  }
  const int fd = ::mkstemp(tmp.data());
  const int saved = errno;
  hold_for_tests(g_test_hooks.hold_while_creating);
  if (fd >= 0) slot = register_temporary(tmp);
  g_creating.fetch_sub(1);
  stop_if_ending();  // the sweep waited for this file and will remove it
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  errno = saved;
  return fd;
}

}  // namespace

void remove_temporary_files() noexcept {
  g_ending.store(true);
  // A writer in another thread between mkstemp and listing its file: a few system calls.
  while (!g_test_hooks.creation_unguarded && g_creating.load() != 0) {
  }
  if (g_test_hooks.hold_sweep > 0) ::sleep(g_test_hooks.hold_sweep);  // async-signal-safe
  for (TemporarySlot& slot : g_temporaries)
    if (slot.state.load(std::memory_order_acquire) == kReady) ::unlink(slot.path);
}

OutputTarget output_target(const std::string& path) {
  OutputTarget t;
  t.path = path;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    struct stat link;
    if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode))
      t.problem = "is a symbolic link to a missing file";  // nothing to write through, nothing to keep
    return t;  // a new file
  }
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
    t.write_through = true;
    return t;
  }
  if (S_ISDIR(st.st_mode)) t.problem = "is a directory, not a file";
  else if (S_ISBLK(st.st_mode)) t.problem = "is a block device (outputs are files, character devices or pipes)";
  else if (S_ISSOCK(st.st_mode)) t.problem = "is a socket (outputs are files, character devices or pipes)";
  else if (!S_ISREG(st.st_mode)) t.problem = "is not a regular file, a character device or a pipe";
  if (!t.problem.empty()) return t;
  // A symbolic link keeps pointing at its file, which is replaced.
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved) {
    t.path = resolved;
    std::free(resolved);
  }
  return t;
}

namespace {

// The temporary file beside `path`: its name and ".tmp.XXXXXX", the name cut so
// that the whole fits the file system's longest name (a 255-byte name works too).
std::string temporary_for(const std::string& path) {
  constexpr size_t kSuffix = sizeof(".tmp.XXXXXX") - 1;
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  const long max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  std::string name = p.filename().string();
  const size_t limit = (max > 0 ? static_cast<size_t>(max) : 255) - kSuffix;
  if (name.size() > limit) name.resize(limit);
  return (p.has_parent_path() ? (p.parent_path() / name).string() : name) + ".tmp.XXXXXX";
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)), target_(output_target(path_)) {
  if (!target_.problem.empty()) {
    error_ = "cannot write " + path_ + ": it " + target_.problem;
    return;
  }
  if (target_.write_through) {
    fd_ = ::open(target_.path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd_ < 0) error_ = "cannot open " + path_ + ": " + std::strerror(errno);
    return;
  }
  tmp_ = temporary_for(target_.path);
  fd_ = create_registered_temporary(tmp_, slot_);
  if (fd_ < 0) {
    error_ = "cannot create a temporary file for " + path_ + ": " + std::strerror(errno);
    tmp_.clear();
  }
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!published_ && !tmp_.empty()) ::unlink(tmp_.c_str());
  unregister_temporary(slot_);
}

std::string AtomicFileWriter::fail(const std::string& what) {
  if (error_.empty()) error_ = what;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  unregister_temporary(slot_);
  tmp_.clear();
  return error_;
}

std::string AtomicFileWriter::write(std::string_view bytes) {
  if (!error_.empty()) return error_;
  if (finished_) return fail("cannot write " + path_ + ": written after it was finished");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("cannot write " + path_ + ": " + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  return "";
}

std::string AtomicFileWriter::finish() {
  if (!error_.empty() || finished_) return error_;
  // mkstemp creates 0600; outputs are ordinary files. A device or a pipe is
  // neither changed nor synced (fsync fails on a pipe).
  if (!target_.write_through) ::fchmod(fd_, 0644);
  const bool synced = target_.write_through || ::fsync(fd_) == 0;
  const int saved = errno;
  const bool closed = ::close(fd_) == 0;
  fd_ = -1;
  if (!synced || !closed) return fail("cannot flush " + path_ + ": " + std::strerror(synced ? errno : saved));
  finished_ = true;
  return "";
}

std::string AtomicFileWriter::publish() {
  if (auto e = finish(); !e.empty()) return e;
  if (published_) return "";
  if (target_.write_through) {  // written through already
    published_ = true;
    return "";
  }
  hold_for_tests(g_test_hooks.hold_before_rename);
  stop_if_ending();  // a signal's sweep is under way: keep the previous output
  if (std::rename(tmp_.c_str(), target_.path.c_str()) != 0)
    return fail("cannot rename into " + path_ + ": " + std::strerror(errno));
  published_ = true;
  unregister_temporary(slot_);
  return "";
}

std::string write_file_atomically(const std::string& path, std::string_view bytes) {
  AtomicFileWriter out(path);
  if (auto e = out.write(bytes); !e.empty()) return e;
  return out.publish();
}

int64_t free_bytes_for(const std::string& path) {
  std::filesystem::path p(path);
  std::error_code ec;
  if (!std::filesystem::exists(p, ec)) p = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  struct statvfs fs;
  if (::statvfs(p.c_str(), &fs) != 0) return -1;
  return static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize);
}

bool read_whole_file(const std::string& path, std::string& bytes, std::string& error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = path + ": is a directory, not a file";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    error = "cannot read " + path;
    return false;
  }
  bytes = ss.str();
  return true;
}

}  // namespace mha
