// Reading .npy files: the whole-file parser (parse_npy) and NpyReader, which
// reads the header from a file's first bytes and the data in blocks with pread
// (data/npy.hpp). The header checks: npy_header.cpp; writing: npy_write.cpp;
// the dataset checks: npy_checks.cpp.
#include "data/npy.hpp"

#include "data/npy_detail.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mha {

using namespace npy_detail;

void npy_detail::widen_float32(const char* data, size_t count, double* out) {
  for (size_t i = 0; i < count; ++i) {
    float v;
    std::memcpy(&v, data + i * sizeof(float), sizeof(float));
    out[i] = static_cast<double>(v);
  }
}

namespace {

// Fills the vector of arr.dtype with `count` values from the data bytes, whose
// length the caller has checked.
void copy_data(std::string_view data, size_t count, NpyArray& arr) {
  if (arr.dtype == NpyDtype::int8) {
    arr.i8.resize(count);
    if (count > 0) std::memcpy(arr.i8.data(), data.data(), count);
  } else if (!arr.from_float32) {
    arr.f64.resize(count);
    if (count > 0) std::memcpy(arr.f64.data(), data.data(), count * sizeof(double));
  } else {
    arr.f64.resize(count);
    widen_float32(data.data(), count, arr.f64.data());
  }
}

}  // namespace

NpyResult parse_npy(std::string_view bytes, const std::string& name) {
  NpyResult result;
  NpyHeaderResult h = parse_npy_header(bytes, bytes.size(), name);
  if (!h.ok) {
    result.error = std::move(h.error);
    return result;
  }
  NpyArray& arr = result.array;
  arr.dtype = h.header.dtype;
  arr.from_float32 = h.header.from_float32;
  arr.shape = std::move(h.header.shape);
  copy_data(bytes.substr(h.header.data_offset), static_cast<size_t>(h.header.count), arr);
  result.ok = true;
  return result;
}

NpyResult read_npy(const std::string& path) {
  NpyReader::Open open = NpyReader::open(path);
  if (!open.reader) {
    NpyResult r;
    r.error = std::move(open.error);
    return r;
  }
  return read_npy_all(*open.reader);
}

NpyResult read_npy_all(const NpyReader& reader, int64_t block) {
  NpyResult r;
  const NpyHeader& h = reader.header();
  NpyArray& a = r.array;
  a.dtype = h.dtype;
  a.from_float32 = h.from_float32;
  a.shape = h.shape;
  block = std::max<int64_t>(block, 1);
  const auto n = static_cast<size_t>(h.count);
  if (a.dtype == NpyDtype::int8) a.i8.resize(n);
  else a.f64.resize(n);
  for (int64_t first = 0; first < h.count; first += block) {
    const int64_t count = std::min(block, h.count - first);
    r.error = a.dtype == NpyDtype::int8 ? reader.read_int8(first, count, a.i8.data() + first)
                                        : reader.read_float64(first, count, a.f64.data() + first);
    if (!r.error.empty()) {
      r.array = NpyArray{};
      return r;
    }
  }
  r.ok = true;
  return r;
}

NpyReader::~NpyReader() {
  if (fd_ >= 0) ::close(fd_);
}

NpyReader::Open NpyReader::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {"cannot open " + path + ": " + std::strerror(errno), nullptr};
  return adopt(fd, path);
}

NpyReader::Open NpyReader::adopt(int fd, const std::string& name) {
  std::unique_ptr<NpyReader> r(new NpyReader(fd, name));
  struct stat st;
  if (::fstat(fd, &st) != 0) return {"cannot read " + name + ": " + std::strerror(errno), nullptr};
  uint64_t size = 0;
  std::string head;
  if (S_ISREG(st.st_mode)) {
    size = static_cast<uint64_t>(st.st_size);
    if (auto e = r->read_head(size, head); !e.empty()) return {e, nullptr};
  } else {
    if (auto e = r->read_stream(); !e.empty()) return {e, nullptr};
    size = r->whole_.size();
    head = r->whole_;
  }
  NpyHeaderResult h = parse_npy_header(head, size, name);
  if (!h.ok) return {h.error, nullptr};
  r->header_ = std::move(h.header);
  return {"", std::move(r)};
}

std::string NpyReader::read_head(uint64_t size, std::string& head) const {
  // The preamble (at most 12 bytes) says how long the header is.
  head.resize(static_cast<size_t>(std::min<uint64_t>(size, 12)));
  if (auto e = read_bytes(0, head.size(), head.data()); !e.empty()) return e;
  const uint64_t end = declared_header_end(head);
  if (end <= head.size()) return "";
  head.resize(static_cast<size_t>(std::min(size, end)));
  return read_bytes(0, head.size(), head.data());
}

std::string NpyReader::read_stream() {
  // A pipe or device: no offsets to read at, so it is read whole.
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return "cannot read " + name_ + ": " + std::strerror(errno);
    if (n == 0) break;
    whole_.append(buf, static_cast<size_t>(n));
  }
  in_memory_ = true;
  return "";
}

std::string NpyReader::read_bytes(uint64_t offset, size_t n, char* out) const {
  if (in_memory_) {
    if (offset > whole_.size() || n > whole_.size() - offset) return name_ + ": read past the end of the data";
    std::memcpy(out, whole_.data() + offset, n);
    return "";
  }
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return "cannot read " + name_ + ": " + std::strerror(errno);
    if (got == 0)
      return name_ + ": the file now ends before byte " + std::to_string(offset + done) +
             ", which it had when it was opened (was it truncated meanwhile?)";
    done += static_cast<size_t>(got);
  }
  return "";
}

namespace {
// "" when elements first .. first+count−1 lie inside the array.
std::string range_problem(const NpyHeader& h, const std::string& name, int64_t first, int64_t count) {
  if (first < 0 || count < 0 || first > h.count || count > h.count - first)
    return name + ": elements " + std::to_string(first) + " .. " + std::to_string(first + count) +
           " are outside the array of " + std::to_string(h.count);
  return "";
}
}  // namespace

std::string NpyReader::read_int8(int64_t first, int64_t count, int8_t* out) const {
  if (header_.dtype != NpyDtype::int8) return name_ + ": read as int8, but its data are float";
  if (auto e = range_problem(header_, name_, first, count); !e.empty()) return e;
  return read_bytes(header_.data_offset + static_cast<uint64_t>(first), static_cast<size_t>(count),
                    reinterpret_cast<char*>(out));
}

std::string NpyReader::read_float64(int64_t first, int64_t count, double* out) const {
  if (header_.dtype != NpyDtype::float64) return name_ + ": read as float, but its data are int8";
  if (auto e = range_problem(header_, name_, first, count); !e.empty()) return e;
  if (!header_.from_float32)
    return read_bytes(header_.data_offset + static_cast<uint64_t>(first) * 8, static_cast<size_t>(count) * 8,
                      reinterpret_cast<char*>(out));
  // '<f4': read a bounded block at a time and widen it.
  const int64_t per_block = static_cast<int64_t>(kNpyStagingBytes / sizeof(float));
  std::vector<char> staging(static_cast<size_t>(std::min(count, per_block)) * sizeof(float));
  for (int64_t done = 0; done < count; done += per_block) {
    const int64_t n = std::min(per_block, count - done);
    if (auto e = read_bytes(header_.data_offset + static_cast<uint64_t>(first + done) * 4,
                            static_cast<size_t>(n) * 4, staging.data());
        !e.empty())
      return e;
    widen_float32(staging.data(), static_cast<size_t>(n), out + done);
  }
  return "";
}

}  // namespace mha
