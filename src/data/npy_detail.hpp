// What the .npy files' parts share (internal to data/): the magic string, item
// sizes, the shape check, one-line quoting of file text, the preamble's length
// field, '<f4' widening and the Python-literal parser of the header dict.
// Public API: data/npy.hpp.
#pragma once

#include "data/npy.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace mha::npy_detail {

static_assert(std::endian::native == std::endian::little,
              "the .npy reader and writer copy '<f8' data as native doubles: little-endian machines only");
static_assert(sizeof(double) == 8 && std::numeric_limits<double>::is_iec559, "IEEE double expected");
static_assert(sizeof(float) == 4 && std::numeric_limits<float>::is_iec559, "IEEE float expected ('<f4' data)");

inline constexpr std::string_view kMagic{"\x93NUMPY", 6};

// Bytes of one element in memory ('<f4' data are widened to 8).
inline size_t itemsize(NpyDtype dtype) { return dtype == NpyDtype::int8 ? 1 : 8; }

// Text from the file, made safe for a one-line message: non-printable bytes
// become \xNN and long text is cut.
std::string printable(std::string_view s, size_t max_len = 40);

// Checks a shape and computes its element count. The product of the
// dimensions, counting a 0 as 1, times the item size must fit in int64, so a
// shape is never "absurd" even when a zero dimension makes it empty.
std::string shape_problem(const std::vector<int64_t>& shape, size_t item, int64_t& count);

// Where the header ends (preamble plus header length) as a file's first bytes
// declare it; 0 when they declare nothing readable (parse_npy_header says why).
uint64_t declared_header_end(std::string_view first);

// `count` '<f4' values from `data` as doubles. The widening is exact: every
// float, NaN and Inf included, is a double.
void widen_float32(const char* data, size_t count, double* out);

// A Python literal, as far as .npy headers use it.
struct PyValue {
  enum class Kind { str, integer, real, boolean, none, tuple, list, dict };
  Kind kind = Kind::none;
  std::string text;              // str: the decoded string; integer/real: the source text
  int64_t ival = 0;              // integer, when !too_big
  bool too_big = false;          // integer does not fit in int64
  bool bval = false;             // boolean
  std::vector<PyValue> items;    // tuple/list elements; dict: key0, value0, key1, value1, ...
};

// "a string", "an integer", ...: what a value is, for messages.
const char* kind_name(PyValue::Kind k);

// Parses `text` as one Python literal followed only by whitespace; false with a
// one-line `error` (naming the offset) otherwise. Terminates on any input.
bool parse_py_literal(std::string_view text, PyValue& out, std::string& error);

}  // namespace mha::npy_detail
