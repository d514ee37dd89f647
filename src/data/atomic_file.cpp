#include "data/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace mha {

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp.XXXXXX") {
  fd_ = ::mkstemp(tmp_.data());
  if (fd_ < 0) {
    error_ = "cannot create a temporary file for " + path_ + ": " + std::strerror(errno);
    tmp_.clear();
  }
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!published_ && !tmp_.empty()) ::unlink(tmp_.c_str());
}

std::string AtomicFileWriter::fail(const std::string& what) {
  if (error_.empty()) error_ = what;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
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
  // mkstemp creates 0600; outputs are ordinary files.
  ::fchmod(fd_, 0644);
  const bool synced = ::fsync(fd_) == 0;
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
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
    return fail("cannot rename into " + path_ + ": " + std::strerror(errno));
  published_ = true;
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
