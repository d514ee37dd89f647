// The dataset and input checks on .npy arrays and headers (data/npy.hpp): X and
// Y as (N, k, d) arrays, ±1 int8 or finite float64 values, whole or block by block.
#include "data/npy.hpp"

#include "data/npy_detail.hpp"

#include <climits>
#include <cmath>

namespace mha {

using namespace npy_detail;

namespace {

// "(n, t, j)" for flat index i of an (N, k, d) array.
std::string index3(size_t i, const std::vector<int64_t>& shape) {
  const auto d = static_cast<size_t>(shape[2]);
  const auto k = static_cast<size_t>(shape[1]);
  // Appended piecewise: GCC 12 flags `"(" + std::to_string(...)` with a false -Wrestrict.
  std::string out = "(";
  out += std::to_string(i / (k * d));
  out += ", ";
  out += std::to_string((i / d) % k);
  out += ", ";
  out += std::to_string(i % d);
  out += ")";
  return out;
}

// The shape checks of check_one: 3-D, a sane size, k, d >= 1, k and d ints.
// N is not bounded by INT_MAX: sample indices are 64-bit throughout, and a file
// read in blocks may hold more samples than memory would.
std::string check_shape_one(NpyDtype dtype, const std::vector<int64_t>& shape, const char* name) {
  if (shape.size() != 3)
    return std::string(name) + " must be a 3-D (N, k, d) array, got shape " + npy_shape_string(shape);
  int64_t count = 0;
  if (auto e = shape_problem(shape, itemsize(dtype), count); !e.empty()) return std::string(name) + ": " + e;
  if (shape[1] < 1 || shape[2] < 1)
    return std::string(name) + " has shape " + npy_shape_string(shape) + ": k and d must be at least 1";
  if (shape[1] > INT_MAX || shape[2] > INT_MAX)
    return std::string(name) + " has shape " + npy_shape_string(shape) + ": dimension too large";
  return "";
}

std::string check_one(const NpyArray& a, const char* name) {
  if (auto e = check_shape_one(a.dtype, a.shape, name); !e.empty()) return e;
  int64_t count = 0;
  shape_problem(a.shape, itemsize(a.dtype), count);
  const size_t have = a.dtype == NpyDtype::int8 ? a.i8.size() : a.f64.size();
  if (have != static_cast<size_t>(count))
    return std::string(name) + " holds " + std::to_string(have) + " values but shape " + npy_shape_string(a.shape) +
           " needs " + std::to_string(count);
  return a.dtype == NpyDtype::int8 ? check_dataset_block(a.i8.data(), count, 0, a.shape, name)
                                   : check_dataset_block(a.f64.data(), count, 0, a.shape, name);
}

}  // namespace

std::string check_dataset_shapes(const NpyArray& X, const NpyArray& Y) {
  if (auto e = check_one(X, "X"); !e.empty()) return e;
  if (Y.dtype != NpyDtype::float64) return std::string("Y must be float64, got ") + to_string(Y.dtype);
  if (auto e = check_one(Y, "Y"); !e.empty()) return e;
  if (X.shape != Y.shape)
    return "X has shape " + npy_shape_string(X.shape) + " but Y has shape " + npy_shape_string(Y.shape) +
           "; both must be (N, k, d) with the same N, k, d";
  return "";
}

std::string check_dataset_headers(const NpyHeader& X, const NpyHeader& Y) {
  if (auto e = check_shape_one(X.dtype, X.shape, "X"); !e.empty()) return e;
  if (Y.dtype != NpyDtype::float64) return std::string("Y must be float64, got ") + to_string(Y.dtype);
  if (auto e = check_shape_one(Y.dtype, Y.shape, "Y"); !e.empty()) return e;
  if (X.shape != Y.shape)
    return "X has shape " + npy_shape_string(X.shape) + " but Y has shape " + npy_shape_string(Y.shape) +
           "; both must be (N, k, d) with the same N, k, d";
  return "";
}

std::string check_dataset_block(const int8_t* v, int64_t n, int64_t first, const std::vector<int64_t>& shape,
                                const char* name) {
  for (int64_t i = 0; i < n; ++i)
    if (v[i] != 1 && v[i] != -1)
      return std::string(name) + " entry " + index3(static_cast<size_t>(first + i), shape) + " is " +
             std::to_string(v[i]) + "; int8 inputs must be exactly +1 or -1";
  return "";
}

std::string check_dataset_block(const double* v, int64_t n, int64_t first, const std::vector<int64_t>& shape,
                                const char* name) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i]))
      return std::string(name) + " entry " + index3(static_cast<size_t>(first + i), shape) + " is " +
             (std::isnan(v[i]) ? "NaN" : (v[i] > 0 ? "+Inf" : "-Inf")) + "; values must be finite";
  return "";
}

std::string check_inputs_shape(const std::vector<int64_t>& shape, int d) {
  if (shape.size() != 3) return "expected a 3-D array (N, k, d), got " + std::to_string(shape.size()) + " dimensions";
  if (shape[2] != d) return "token dimension is " + std::to_string(shape[2]) + ", the instance has d = " + std::to_string(d);
  if (shape[1] < 1 || shape[1] > 1024) return "sequence length k = " + std::to_string(shape[1]) + " is outside 1..1024";
  return "";
}

std::string check_inputs_block(const int8_t* v, int64_t n, int64_t first) {
  for (int64_t i = 0; i < n; ++i)
    if (v[i] != 1 && v[i] != -1)
      return "int8 inputs must be ±1, found " + std::to_string(v[i]) + " at flat index " + std::to_string(first + i);
  return "";
}

std::string check_inputs_block(const double* v, int64_t n, int64_t first) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i])) return "non-finite input at flat index " + std::to_string(first + i);
  return "";
}

std::string check_inputs_array(const NpyArray& x, int d) {
  if (auto e = check_inputs_shape(x.shape, d); !e.empty()) return e;
  return x.dtype == NpyDtype::int8 ? check_inputs_block(x.i8.data(), static_cast<int64_t>(x.i8.size()), 0)
                                   : check_inputs_block(x.f64.data(), static_cast<int64_t>(x.f64.size()), 0);
}

}  // namespace mha
