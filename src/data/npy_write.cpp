// Writing .npy files (format 1.0, numpy.save's layout): the header bytes, whole
// arrays (npy_bytes_*, write_npy_*: atomic writes) and NpyWriter, which appends
// the data in blocks (data/npy.hpp).
#include "data/npy.hpp"

#include "data/atomic_file.hpp"
#include "data/npy_detail.hpp"

#include <stdexcept>

namespace mha {

using namespace npy_detail;

namespace {

// Header of a format-1.0 file; `count` receives the element count.
std::string header_bytes(const std::vector<int64_t>& shape, NpyDtype dtype, int64_t& count) {
  if (auto e = shape_problem(shape, itemsize(dtype), count); !e.empty()) throw std::invalid_argument(e);
  const char* descr = dtype == NpyDtype::int8 ? "|i1" : "<f8";
  std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " +
                     npy_shape_string(shape) + ", }";
  // magic (6) + version (2) + header length (2) + dict + padding + '\n' = multiple of 64.
  const size_t unpadded = kMagic.size() + 2 + 2 + dict.size() + 1;
  const size_t padding = (64 - unpadded % 64) % 64;
  const size_t header_len = dict.size() + padding + 1;
  if (header_len > 0xffff) throw std::invalid_argument("npy header too long");  // cannot happen with <= 8 dims
  std::string out;
  out += kMagic;
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header_len & 0xff);
  out += static_cast<char>((header_len >> 8) & 0xff);
  out += dict;
  out.append(padding, ' ');
  out += '\n';
  return out;
}

std::string npy_bytes(const std::vector<int64_t>& shape, NpyDtype dtype, const void* data) {
  int64_t count = 0;
  std::string out = header_bytes(shape, dtype, count);
  const size_t data_bytes = static_cast<size_t>(count) * itemsize(dtype);
  if (data_bytes > 0 && data == nullptr) throw std::invalid_argument("npy data pointer is null");
  out.reserve(out.size() + data_bytes);
  if (data_bytes > 0) out.append(static_cast<const char*>(data), data_bytes);
  return out;
}

std::string write_npy(const std::string& path, const std::vector<int64_t>& shape, NpyDtype dtype,
                      const void* data) {
  int64_t count = 0;
  if (auto e = shape_problem(shape, itemsize(dtype), count); !e.empty()) return "cannot write " + path + ": " + e;
  if (count > 0 && data == nullptr) return "cannot write " + path + ": no data";
  return write_file_atomically(path, npy_bytes(shape, dtype, data));
}

}  // namespace

std::string npy_bytes_int8(const std::vector<int64_t>& shape, const int8_t* data) {
  return npy_bytes(shape, NpyDtype::int8, data);
}

std::string npy_bytes_float64(const std::vector<int64_t>& shape, const double* data) {
  return npy_bytes(shape, NpyDtype::float64, data);
}

std::string write_npy_int8(const std::string& path, const std::vector<int64_t>& shape, const int8_t* data) {
  return write_npy(path, shape, NpyDtype::int8, data);
}

std::string write_npy_float64(const std::string& path, const std::vector<int64_t>& shape, const double* data) {
  return write_npy(path, shape, NpyDtype::float64, data);
}

struct NpyWriter::State {
  explicit State(const std::string& path) : file(path) {}
  AtomicFileWriter file;
  std::string path;
  NpyDtype dtype = NpyDtype::float64;
  int64_t expected = 0, written = 0;
  std::string error;
  std::string fail(std::string e) {
    if (error.empty()) error = std::move(e);
    return error;
  }
};

NpyWriter::NpyWriter(const std::string& path, const std::vector<int64_t>& shape, NpyDtype dtype)
    : s_(std::make_unique<State>(path)) {
  s_->path = path;
  s_->dtype = dtype;
  if (!s_->file.error().empty()) {
    s_->fail(s_->file.error());
    return;
  }
  int64_t count = 0;
  if (auto e = shape_problem(shape, itemsize(dtype), count); !e.empty()) {
    s_->fail("cannot write " + path + ": " + e);
    return;
  }
  s_->expected = count;
  if (auto e = s_->file.write(header_bytes(shape, dtype, count)); !e.empty()) s_->fail(e);
}

NpyWriter::~NpyWriter() = default;

const std::string& NpyWriter::error() const { return s_->error; }

std::string NpyWriter::append_int8(const int8_t* data, int64_t count) {
  if (!s_->error.empty()) return s_->error;
  if (s_->dtype != NpyDtype::int8) return s_->fail("cannot write " + s_->path + ": int8 data for a float64 file");
  if (count < 0 || count > s_->expected - s_->written)
    return s_->fail("cannot write " + s_->path + ": more values than its shape holds");
  s_->written += count;
  if (auto e = s_->file.write({reinterpret_cast<const char*>(data), static_cast<size_t>(count)}); !e.empty())
    return s_->fail(e);
  return "";
}

std::string NpyWriter::append_float64(const double* data, int64_t count) {
  if (!s_->error.empty()) return s_->error;
  if (s_->dtype != NpyDtype::float64) return s_->fail("cannot write " + s_->path + ": float64 data for an int8 file");
  if (count < 0 || count > s_->expected - s_->written)
    return s_->fail("cannot write " + s_->path + ": more values than its shape holds");
  s_->written += count;
  if (auto e = s_->file.write({reinterpret_cast<const char*>(data), static_cast<size_t>(count) * sizeof(double)});
      !e.empty())
    return s_->fail(e);
  return "";
}

std::string NpyWriter::finish() {
  if (!s_->error.empty()) return s_->error;
  if (s_->written != s_->expected)
    return s_->fail("cannot write " + s_->path + ": " + std::to_string(s_->written) + " of its " +
                    std::to_string(s_->expected) + " values were given");
  if (auto e = s_->file.finish(); !e.empty()) return s_->fail(e);
  return "";
}

std::string NpyWriter::publish() {
  if (auto e = finish(); !e.empty()) return e;
  if (auto e = s_->file.publish(); !e.empty()) return s_->fail(e);
  return "";
}

std::string NpyWriter::commit() { return publish(); }

std::string npy_header_bytes(const std::vector<int64_t>& shape, NpyDtype dtype) {
  int64_t count = 0;
  return header_bytes(shape, dtype, count);
}

}  // namespace mha
