// Reader and writer for NumPy .npy files (the dataset files X.npy / Y.npy).
//
// The format is hand-written here rather than taken from a library: it is
// small and fully specified (magic, version, a little-endian header length, a
// Python-literal header dict, raw C-order data), and the readers packaged in
// Debian do not validate malformed input (truncated data, hostile header
// lengths, overflowing shapes). This one checks every field and every index,
// and reports every problem as one line naming the file.
//
// Reading accepts format versions 1.0, 2.0 and 3.0; writing produces 1.0 with
// the data aligned to 64 bytes, exactly as numpy.save does. Only the dtypes
// the project needs are read: int8 ('|i1', '<i1', 'i1'), little-endian float64
// ('<f8') and little-endian float32 ('<f4', PyTorch's default), which is
// widened exactly to double on read, so the array is float64 in memory.
// Fortran-ordered arrays are rejected.
//
// Two readers share the header code (parse_npy_header): parse_npy, over the
// bytes of a whole file (small files, the weights of `import`, the fuzz
// harnesses), and NpyReader, which parses the header from a file's first
// bytes and reads the data in blocks with pread when asked, so a dataset
// larger than memory is never held whole. pread rather than mmap: a mapped
// file truncated by another process while it is read raises SIGBUS, where
// pread returns short and the reader reports it as one line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mha {

enum class NpyDtype { int8, float64 };

const char* to_string(NpyDtype dtype);

// An array in C order. Only the vector of `dtype` is filled; its size is the
// product of `shape` (1 for a 0-d array).
struct NpyArray {
  NpyDtype dtype = NpyDtype::float64;
  bool from_float32 = false;  // float64 in memory, read from '<f4' data
  std::vector<int64_t> shape;
  std::vector<int8_t> i8;
  std::vector<double> f64;
};

struct NpyResult {
  bool ok = false;
  std::string error;  // one line naming the file, when !ok
  NpyArray array;
};

inline constexpr int kNpyMaxDims = 8;

// What a .npy header says, checked: the data are `count` elements of
// `file_itemsize()` bytes starting at byte `data_offset`, and the file has
// exactly that many bytes.
struct NpyHeader {
  NpyDtype dtype = NpyDtype::float64;
  bool from_float32 = false;  // '<f4' data, read as double
  std::vector<int64_t> shape;
  int64_t count = 0;          // product of shape (1 for a 0-d array)
  uint64_t data_offset = 0;
  size_t file_itemsize() const { return dtype == NpyDtype::int8 ? 1 : from_float32 ? 4 : 8; }
};

struct NpyHeaderResult {
  bool ok = false;
  std::string error;  // one line naming the file, when !ok
  NpyHeader header;
};

// Parses and checks the preamble and header dict of a file of `file_size`
// bytes whose first bytes are `head` (head holds at least the preamble and the
// header, or the whole file when it is shorter). Every check and error of
// parse_npy except the data themselves, including the data's length.
NpyHeaderResult parse_npy_header(std::string_view head, uint64_t file_size, const std::string& name_for_errors);

// Parses the bytes of a whole .npy file. Never throws on malformed bytes.
NpyResult parse_npy(std::string_view bytes, const std::string& name_for_errors);
// A whole file as an array: NpyReader::open + read_npy_all, with `path` as
// the name in errors (small files: weights, tests).
NpyResult read_npy(const std::string& path);

// A .npy file opened for reading in blocks. Opening reads and checks the
// header only (parse_npy_header; a pipe or other non-seekable file is read
// whole into memory instead, as it cannot be read at an offset); the data are
// read by element range with pread. Reads never throw on bad data and never
// change the values: '<f4' is widened exactly, block by block.
class NpyReader {
 public:
  struct Open;
  // Opens `path` (its name in errors).
  static Open open(const std::string& path);
  // Takes ownership of the open descriptor `fd` (e.g. a memfd), named `name`.
  static Open adopt(int fd, const std::string& name);

  ~NpyReader();
  NpyReader(const NpyReader&) = delete;
  NpyReader& operator=(const NpyReader&) = delete;

  const NpyHeader& header() const { return header_; }
  const std::string& name() const { return name_; }
  // Elements first .. first+count−1 (C order) into `out`, which must hold
  // `count` values: int8 for an int8 file, double otherwise. Returns "" or one
  // line naming the file: a read error, or the file now shorter than when it
  // was opened (truncated meanwhile). Thread-safe: no shared file offset.
  std::string read_int8(int64_t first, int64_t count, int8_t* out) const;
  std::string read_float64(int64_t first, int64_t count, double* out) const;

 private:
  NpyReader(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  std::string read_head(uint64_t size, std::string& head) const;  // preamble and header of a regular file
  std::string read_stream();                                      // a pipe's bytes, into whole_
  std::string read_bytes(uint64_t offset, size_t n, char* out) const;
  int fd_ = -1;
  std::string name_;
  NpyHeader header_;
  std::string whole_;  // the whole file, when it cannot be read at an offset
  bool in_memory_ = false;
};

struct NpyReader::Open {
  std::string error;  // one line naming the file when `reader` is null
  std::unique_ptr<NpyReader> reader;
};

// Every element of an opened file, read `block` elements at a time: the array
// parse_npy makes of the same bytes (or the first read error).
NpyResult read_npy_all(const NpyReader& reader, int64_t block = int64_t{1} << 20);

// Bytes of the largest buffer NpyReader::read_* allocates per call (for the
// '<f4' widening); the reads need no other memory.
inline constexpr size_t kNpyStagingBytes = size_t{1} << 20;

// Python spelling of a shape: "(3, 2, 16)", "(5,)", "()".
std::string npy_shape_string(const std::vector<int64_t>& shape);

// Complete file contents (format 1.0). `data` holds the product of `shape`
// values in C order (it may be null when that product is 0). Throws
// std::invalid_argument for a shape the reader would reject (negative
// dimension, more than kNpyMaxDims dimensions, overflowing size).
std::string npy_bytes_int8(const std::vector<int64_t>& shape, const int8_t* data);
std::string npy_bytes_float64(const std::vector<int64_t>& shape, const double* data);

// The header of such a file (everything before the data): what npy_bytes_*
// write first.
std::string npy_header_bytes(const std::vector<int64_t>& shape, NpyDtype dtype);

// A .npy file (format 1.0, the bytes npy_bytes_* would make) written in
// blocks: the header on creation, then the data in C order as appended, under
// a temporary name that commit() renames over `path` (atomic_file.hpp). It
// refuses to commit unless exactly the shape's values were appended;
// destroyed uncommitted, it removes the temporary file. Errors are one line
// naming the path, and stick: after one, append and commit return it.
class NpyWriter {
 public:
  NpyWriter(const std::string& path, const std::vector<int64_t>& shape, NpyDtype dtype);
  ~NpyWriter();
  NpyWriter(const NpyWriter&) = delete;
  NpyWriter& operator=(const NpyWriter&) = delete;
  const std::string& error() const;
  std::string append_int8(const int8_t* data, int64_t count);
  std::string append_float64(const double* data, int64_t count);
  // Flushes the data to disk (fsync) without renaming; then publish() renames.
  // commit() = finish() + publish(). A command writing two files finishes both
  // before publishing either, so a failed flush leaves neither.
  std::string finish();
  std::string publish();
  std::string commit();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Atomic writes (see atomic_file.hpp). Return "" or a one-line error naming the path.
std::string write_npy_int8(const std::string& path, const std::vector<int64_t>& shape, const int8_t* data);
std::string write_npy_float64(const std::string& path, const std::vector<int64_t>& shape, const double* data);

// Dataset check used by the CLI. X: int8 (N,k,d) with entries ±1 only
// (Boolean inputs), or float64 (N,k,d) (Gaussian inputs); Y: float64 (N,k,d).
// Both 3-D with the same N, k, d (k, d >= 1; N may be 0), the X int8 entries
// exactly +1 or -1, no NaN/Inf in float arrays. Returns "" or an error line.
std::string check_dataset_shapes(const NpyArray& X, const NpyArray& Y);

// Inputs for a layer of token dimension d (the forward command, the Python
// module): X is (N, k, d) with 1 ≤ k ≤ 1024, int8 entries ±1 or finite
// float64. Returns "" or an error line.
std::string check_inputs_array(const NpyArray& X, int d);

// The same checks in two parts, for files read in blocks: the shapes when the
// files are opened, and the values of each block as it is read. Same errors
// as check_dataset_shapes and check_inputs_array.
std::string check_dataset_headers(const NpyHeader& X, const NpyHeader& Y);
// Values v[0..n) at flat indices first.. of the (N, k, d) array `name` ("X" or
// "Y") of shape `shape`: int8 exactly ±1, doubles finite.
std::string check_dataset_block(const int8_t* v, int64_t n, int64_t first, const std::vector<int64_t>& shape,
                                const char* name);
std::string check_dataset_block(const double* v, int64_t n, int64_t first, const std::vector<int64_t>& shape,
                                const char* name);
std::string check_inputs_shape(const std::vector<int64_t>& shape, int d);
std::string check_inputs_block(const int8_t* v, int64_t n, int64_t first);
std::string check_inputs_block(const double* v, int64_t n, int64_t first);

}  // namespace mha
