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
#pragma once

#include <cstdint>
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

// Parses the bytes of a whole .npy file. Never throws on malformed bytes.
NpyResult parse_npy(std::string_view bytes, const std::string& name_for_errors);
// read_whole_file + parse_npy, with `path` as the name in errors.
NpyResult read_npy(const std::string& path);

// Python spelling of a shape: "(3, 2, 16)", "(5,)", "()".
std::string npy_shape_string(const std::vector<int64_t>& shape);

// Complete file contents (format 1.0). `data` holds the product of `shape`
// values in C order (it may be null when that product is 0). Throws
// std::invalid_argument for a shape the reader would reject (negative
// dimension, more than kNpyMaxDims dimensions, overflowing size).
std::string npy_bytes_int8(const std::vector<int64_t>& shape, const int8_t* data);
std::string npy_bytes_float64(const std::vector<int64_t>& shape, const double* data);

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

}  // namespace mha
