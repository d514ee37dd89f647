#include "cli/standard_streams.hpp"

#include "data/atomic_file.hpp"
#include "util/progress.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <fcntl.h>
#include <unistd.h>

namespace mha::cli {

namespace {

int g_error = 0;             // errno of the first failed write to stdout (EBADF: closed)
bool g_files_pending = false;

// Ends the process as a SIGPIPE would have, with no temporary file left behind.
[[noreturn]] void end_by_sigpipe() {
  remove_temporary_files();
  std::signal(SIGPIPE, SIG_DFL);
  std::raise(SIGPIPE);
  _exit(128 + SIGPIPE);
}

}  // namespace

void prepare_standard_streams() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int opened = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (opened >= 0 && opened != fd) {  // cannot happen: the lowest free number is taken
      ::dup2(opened, fd);
      ::close(opened);
    }
    if (fd == 1) g_error = EBADF;
  }
  std::signal(SIGPIPE, SIG_IGN);
}

void set_files_pending(bool pending) { g_files_pending = pending; }

void print(std::string_view text) {
  if (g_error != 0 || text.empty()) return;
  clear_progress_line();
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      g_error = errno;
      if (g_error == EPIPE && !g_files_pending) end_by_sigpipe();
      return;
    }
    done += static_cast<size_t>(n);
  }
}

void flush_cout() {
  std::cout.flush();
  if (!std::cout && g_error == 0) g_error = errno != 0 ? errno : EIO;
}

int finish_stdout(int status, const std::string& command) {
  if (status != 0 || g_error == 0) return status;  // a failed command's own status says more than stdout's
  if (g_error == EPIPE) end_by_sigpipe();
  const std::string why = g_error == EBADF ? "it is closed" : std::strerror(g_error);
  std::fprintf(stderr, "mhalearn%s%s: error: cannot write to stdout: %s\n", command.empty() ? "" : " ", command.c_str(),
               why.c_str());
  return 1;
}

}  // namespace mha::cli
