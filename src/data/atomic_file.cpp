#include "data/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mha {

std::string write_file_atomically(const std::string& path, std::string_view bytes) {
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return "cannot create a temporary file for " + path + ": " + std::strerror(errno);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string err = "cannot write " + path + ": " + std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return err;
    }
    done += static_cast<size_t>(n);
  }
  // mkstemp creates 0600; outputs are ordinary files.
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return "cannot flush " + path + ": " + std::strerror(errno);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string err = "cannot rename into " + path + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return err;
  }
  return "";
}

bool read_whole_file(const std::string& path, std::string& bytes, std::string& error) {
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
