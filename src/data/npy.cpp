#include "data/npy.hpp"

#include "data/atomic_file.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mha {

static_assert(std::endian::native == std::endian::little,
              "npy.cpp copies '<f8' data as native doubles: little-endian machines only");
static_assert(sizeof(double) == 8 && std::numeric_limits<double>::is_iec559, "IEEE double expected");
static_assert(sizeof(float) == 4 && std::numeric_limits<float>::is_iec559, "IEEE float expected ('<f4' data)");

const char* to_string(NpyDtype dtype) { return dtype == NpyDtype::int8 ? "int8" : "float64"; }

namespace {

constexpr std::string_view kMagic{"\x93NUMPY", 6};
// Nesting limit of the header literal: a valid header nests two levels deep;
// the limit only keeps hostile input from exhausting the stack.
constexpr int kMaxDepth = 32;

size_t itemsize(NpyDtype dtype) { return dtype == NpyDtype::int8 ? 1 : 8; }

constexpr const char* kSupportedDtypes = "expected '|i1' for int8, '<f8' for float64 or '<f4' for float32";

// Text from the file, made safe for a one-line message: non-printable bytes
// become \xNN and long text is cut.
std::string printable(std::string_view s, size_t max_len = 40) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (out.size() >= max_len) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
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

const char* kind_name(PyValue::Kind k) {
  switch (k) {
    case PyValue::Kind::str: return "a string";
    case PyValue::Kind::integer: return "an integer";
    case PyValue::Kind::real: return "a float";
    case PyValue::Kind::boolean: return "a boolean";
    case PyValue::Kind::none: return "None";
    case PyValue::Kind::tuple: return "a tuple";
    case PyValue::Kind::list: return "a list";
    case PyValue::Kind::dict: return "a dict";
  }
  return "a value";
}

// Recursive descent over the header text. Every step advances `pos_` or
// fails, and recursion depth is bounded, so it terminates on any input.
class LiteralParser {
 public:
  explicit LiteralParser(std::string_view text) : t_(text) {}

  // Parses one value followed only by whitespace.
  bool parse_all(PyValue& out, std::string& error) {
    skip_ws();
    if (!value(out, 0)) {
      error = error_;
      return false;
    }
    skip_ws();
    if (pos_ != t_.size()) {
      error = "unexpected '" + printable(t_.substr(pos_, 10)) + "' after the header dict at offset " +
              std::to_string(pos_);
      return false;
    }
    return true;
  }

 private:
  std::string_view t_;
  size_t pos_ = 0;
  std::string error_;

  bool fail(const std::string& what) {
    error_ = what + " at offset " + std::to_string(pos_);
    return false;
  }
  bool at_end() const { return pos_ >= t_.size(); }
  char peek() const { return at_end() ? '\0' : t_[pos_]; }
  void skip_ws() {
    while (!at_end() && (t_[pos_] == ' ' || t_[pos_] == '\t' || t_[pos_] == '\n' || t_[pos_] == '\r' ||
                         t_[pos_] == '\f' || t_[pos_] == '\v'))
      ++pos_;
  }
  bool starts_with(std::string_view w) const { return t_.substr(pos_).starts_with(w); }
  bool is_ident_char(char c) const {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }
  bool keyword(std::string_view w) {
    if (!starts_with(w)) return false;
    const size_t end = pos_ + w.size();
    if (end < t_.size() && is_ident_char(t_[end])) return false;
    pos_ = end;
    return true;
  }

  bool value(PyValue& out, int depth) {
    if (depth > kMaxDepth) return fail("header nests too deeply");
    skip_ws();
    if (at_end()) return fail("header ends unexpectedly");
    const char c = peek();
    if (c == '\'' || c == '"') return string_value(out);
    if (c == '{') return dict_value(out, depth);
    if (c == '(') return tuple_value(out, depth);
    if (c == '[') return sequence(out, ']', PyValue::Kind::list, depth);
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) return number(out);
    if (keyword("True")) return out.kind = PyValue::Kind::boolean, out.bval = true, true;
    if (keyword("False")) return out.kind = PyValue::Kind::boolean, out.bval = false, true;
    if (keyword("None")) return out.kind = PyValue::Kind::none, true;
    return fail("unexpected '" + printable(t_.substr(pos_, 10)) + "'");
  }

  bool string_value(PyValue& out) {
    const char quote = t_[pos_++];
    out.kind = PyValue::Kind::str;
    out.text.clear();
    while (true) {
      if (at_end()) return fail("unterminated string");
      const char c = t_[pos_++];
      if (c == quote) return true;
      if (c == '\n') return fail("unterminated string");
      if (c == '\\') {
        if (at_end()) return fail("unterminated string");
        const char e = t_[pos_++];
        switch (e) {
          case 'n': out.text += '\n'; break;
          case 't': out.text += '\t'; break;
          case 'r': out.text += '\r'; break;
          case '0': out.text += '\0'; break;
          default: out.text += e; break;  // \\, \', \" and anything else: the character itself
        }
      } else {
        out.text += c;
      }
    }
  }

  bool number(PyValue& out) {
    const size_t start = pos_;
    bool negative = false;
    if (peek() == '-' || peek() == '+') negative = t_[pos_++] == '-';
    skip_ws();  // Python allows "- 3"
    if (at_end() || peek() < '0' || peek() > '9') return fail("malformed number");
    // Magnitude accumulated as unsigned; more digits than fit only set too_big.
    uint64_t mag = 0;
    bool big = false;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      const auto digit = static_cast<uint64_t>(peek() - '0');
      if (mag > (std::numeric_limits<uint64_t>::max() - digit) / 10) big = true;
      if (!big) mag = mag * 10 + digit;
      ++pos_;
    }
    bool real = false;
    while (!at_end() && (peek() == '.' || peek() == 'e' || peek() == 'E' ||
                         (peek() >= '0' && peek() <= '9') ||
                         ((peek() == '-' || peek() == '+') && (t_[pos_ - 1] == 'e' || t_[pos_ - 1] == 'E')))) {
      real = true;
      ++pos_;
    }
    if (!real && (peek() == 'L' || peek() == 'l')) ++pos_;  // Python 2 long, as old numpy wrote shapes
    if (!at_end() && is_ident_char(peek())) return fail("malformed number");
    out.text = std::string(t_.substr(start, pos_ - start));
    if (real) {
      out.kind = PyValue::Kind::real;
      return true;
    }
    out.kind = PyValue::Kind::integer;
    const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    if (big || mag > limit + (negative ? 1 : 0)) {
      out.too_big = true;
      out.ival = 0;
    } else if (negative) {
      out.ival = mag == limit + 1 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(mag);
    } else {
      out.ival = static_cast<int64_t>(mag);
    }
    return true;
  }

  // "(" ")" is the empty tuple, "(v)" is v itself, "(v," or "(v, w" a tuple.
  bool tuple_value(PyValue& out, int depth) {
    const size_t open = pos_;
    ++pos_;
    skip_ws();
    if (peek() == ')') {
      ++pos_;
      out = PyValue{};
      out.kind = PyValue::Kind::tuple;
      return true;
    }
    PyValue first;
    if (!value(first, depth + 1)) return false;
    skip_ws();
    if (peek() == ')') {
      ++pos_;
      out = std::move(first);
      return true;
    }
    if (peek() != ',') return fail("expected ',' or ')' in the tuple opened at offset " + std::to_string(open));
    ++pos_;
    out = PyValue{};
    out.kind = PyValue::Kind::tuple;
    out.items.push_back(std::move(first));
    return sequence_tail(out, ')', open, depth);
  }

  // Comma-separated values up to `close`, trailing comma allowed.
  bool sequence(PyValue& out, char close, PyValue::Kind kind, int depth) {
    const size_t open = pos_;
    ++pos_;
    out = PyValue{};
    out.kind = kind;
    return sequence_tail(out, close, open, depth);
  }

  // The rest of a sequence, positioned after its opening bracket or a comma.
  // Elements are parsed once each (no backtracking), so the work is linear.
  bool sequence_tail(PyValue& out, char close, size_t open, int depth) {
    while (true) {
      skip_ws();
      if (at_end()) return fail("unclosed bracket opened at offset " + std::to_string(open));
      if (peek() == close) {
        ++pos_;
        return true;
      }
      PyValue item;
      if (!value(item, depth + 1)) return false;
      out.items.push_back(std::move(item));
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == close) continue;
      return fail(std::string("expected ',' or '") + close + "'");
    }
  }

  bool dict_value(PyValue& out, int depth) {
    const size_t open = pos_;
    ++pos_;
    out = PyValue{};
    out.kind = PyValue::Kind::dict;
    while (true) {
      skip_ws();
      if (at_end()) return fail("unclosed '{' opened at offset " + std::to_string(open));
      if (peek() == '}') {
        ++pos_;
        return true;
      }
      PyValue key, val;
      if (!value(key, depth + 1)) return false;
      skip_ws();
      if (peek() != ':') return fail("expected ':' after a dict key");
      ++pos_;
      if (!value(val, depth + 1)) return false;
      out.items.push_back(std::move(key));
      out.items.push_back(std::move(val));
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '}') continue;
      return fail("expected ',' or '}' in the header dict");
    }
  }
};

// ---------------------------------------------------------------------------

// Checks a shape and computes its element count. The product of the
// dimensions, counting a 0 as 1, times the item size must fit in int64, so a
// shape is never "absurd" even when a zero dimension makes it empty.
std::string shape_problem(const std::vector<int64_t>& shape, size_t item, int64_t& count) {
  count = 0;
  if (shape.size() > static_cast<size_t>(kNpyMaxDims))
    return "shape " + npy_shape_string(shape) + " has " + std::to_string(shape.size()) +
           " dimensions, at most " + std::to_string(kNpyMaxDims) + " are supported";
  const int64_t limit = std::numeric_limits<int64_t>::max() / static_cast<int64_t>(item);
  int64_t product = 1;
  bool empty = false;
  for (const int64_t dim : shape) {
    if (dim < 0) return "shape " + npy_shape_string(shape) + " has a negative dimension";
    if (dim == 0) {
      empty = true;
      continue;
    }
    if (product > limit / dim)
      return "shape " + npy_shape_string(shape) + " is absurdly large (its size overflows)";
    product *= dim;
  }
  count = empty ? 0 : product;
  return "";
}

uint32_t read_le(std::string_view b, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(b[at + i])) << (8 * i);
  return v;
}

std::string dict_key_list(const PyValue& dict) {
  std::string s;
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    if (!s.empty()) s += ", ";
    if (dict.items[i].kind == PyValue::Kind::str) {
      // Appended piecewise: GCC 12 flags `"'" + std::string` with a false -Wrestrict.
      s += '\'';
      s += printable(dict.items[i].text, 20);
      s += '\'';
    } else {
      s += kind_name(dict.items[i].kind);
    }
  }
  return s;
}

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

// `count` '<f4' values from `data` as doubles. The widening is exact: every
// float, NaN and Inf included, is a double.
void widen_float32(const char* data, size_t count, double* out) {
  for (size_t i = 0; i < count; ++i) {
    float v;
    std::memcpy(&v, data + i * sizeof(float), sizeof(float));
    out[i] = static_cast<double>(v);
  }
}

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

std::string npy_shape_string(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

namespace {
// Where the header ends (preamble plus header length) as a file's first bytes
// declare it; 0 when they declare nothing readable (parse_npy_header says why).
uint64_t declared_header_end(std::string_view first) {
  if (first.size() < kMagic.size() + 2 || first.substr(0, kMagic.size()) != kMagic) return 0;
  const int major = static_cast<unsigned char>(first[6]);
  if (major < 1 || major > 3) return 0;
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t preamble = kMagic.size() + 2 + len_bytes;
  return first.size() < preamble ? 0 : preamble + read_le(first, 8, len_bytes);
}
}  // namespace

NpyHeaderResult parse_npy_header(std::string_view bytes, uint64_t file_size, const std::string& name) {
  NpyHeaderResult result;
  auto failure = [&](const std::string& what) {
    result.error = name + ": " + what;
    return result;
  };
  // Preamble: magic, version, header length. `bytes` holds the whole preamble
  // unless the file is shorter, so its checks read `bytes` and its lengths
  // are the file's.
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic)
    return failure("not a .npy file (bad magic string)");
  if (bytes.size() < kMagic.size() + 2) return failure("truncated header: the file ends inside the format version");
  const int major = static_cast<unsigned char>(bytes[6]);
  const int minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    return failure("unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                   " (supported: 1.0, 2.0, 3.0)");
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t preamble = kMagic.size() + 2 + len_bytes;
  if (file_size < preamble)
    return failure("truncated header: the file has " + std::to_string(file_size) + " bytes, fewer than the " +
                   std::to_string(preamble) + "-byte preamble");
  const size_t header_len = read_le(bytes, 8, len_bytes);
  if (header_len > file_size - preamble)
    return failure("truncated header: header length " + std::to_string(header_len) + " exceeds the " +
                   std::to_string(file_size - preamble) + " bytes after the preamble");
  if (bytes.size() < preamble + header_len)  // a caller that did not read the header
    return failure("internal error: the header was not read before it was parsed");
  const std::string_view header = bytes.substr(preamble, header_len);
  const uint64_t data_size = file_size - preamble - header_len;

  // Header dict.
  PyValue dict;
  std::string perr;
  if (!LiteralParser(header).parse_all(dict, perr)) return failure("malformed header: " + perr);
  if (dict.kind != PyValue::Kind::dict)
    return failure(std::string("malformed header: it is ") + kind_name(dict.kind) + ", not a dict");
  const PyValue* descr = nullptr;
  const PyValue* fortran = nullptr;
  const PyValue* shape = nullptr;
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PyValue& key = dict.items[i];
    if (key.kind != PyValue::Kind::str)
      return failure(std::string("malformed header: a key is ") + kind_name(key.kind) + ", not a string");
    const PyValue** slot = key.text == "descr"           ? &descr
                           : key.text == "fortran_order" ? &fortran
                           : key.text == "shape"         ? &shape
                                                         : nullptr;
    if (slot == nullptr)
      return failure("malformed header: unexpected key '" + printable(key.text) +
                     "' (expected exactly 'descr', 'fortran_order', 'shape')");
    if (*slot != nullptr) return failure("malformed header: duplicate key '" + key.text + "'");
    *slot = &dict.items[i + 1];
  }
  if (descr == nullptr || fortran == nullptr || shape == nullptr)
    return failure(std::string("malformed header: missing key '") +
                   (descr == nullptr ? "descr" : fortran == nullptr ? "fortran_order" : "shape") +
                   "' (keys found: " + (dict.items.empty() ? "none" : dict_key_list(dict)) + ")");

  // descr.
  NpyHeader& arr = result.header;
  if (descr->kind != PyValue::Kind::str)
    return failure(std::string("unsupported dtype: descr is ") + kind_name(descr->kind) +
                   " (structured dtypes are not supported; " + kSupportedDtypes + ")");
  const std::string& dt = descr->text;
  if (dt == "|i1" || dt == "<i1" || dt == "i1") {
    arr.dtype = NpyDtype::int8;
  } else if (dt == "<f8") {
    arr.dtype = NpyDtype::float64;
  } else if (dt == "<f4") {
    arr.dtype = NpyDtype::float64;
    arr.from_float32 = true;
  } else if (!dt.empty() && (dt[0] == '>' || dt[0] == '!')) {
    return failure("big-endian dtype '" + printable(dt) + "' is not supported (" + kSupportedDtypes + ")");
  } else {
    return failure("unsupported dtype '" + printable(dt) + "' (" + kSupportedDtypes + ")");
  }

  // fortran_order.
  if (fortran->kind != PyValue::Kind::boolean)
    return failure(std::string("malformed header: fortran_order is ") + kind_name(fortran->kind) +
                   ", not True or False");
  if (fortran->bval)
    return failure("fortran_order is True: Fortran-ordered arrays are not supported (save a C-order array)");

  // shape.
  if (shape->kind != PyValue::Kind::tuple)
    return failure(std::string("malformed header: shape is ") + kind_name(shape->kind) + ", not a tuple");
  if (shape->items.size() > static_cast<size_t>(kNpyMaxDims))
    return failure("shape has " + std::to_string(shape->items.size()) + " dimensions, at most " +
                   std::to_string(kNpyMaxDims) + " are supported");
  for (const PyValue& dim : shape->items) {
    if (dim.kind != PyValue::Kind::integer)
      return failure(std::string("malformed header: a shape entry is ") + kind_name(dim.kind) +
                     (dim.kind == PyValue::Kind::real ? " (" + printable(dim.text) + ")" : std::string()) +
                     ", not an integer");
    if (dim.too_big) return failure("shape dimension " + printable(dim.text) + " is absurdly large");
    arr.shape.push_back(dim.ival);
  }
  // The shape is checked against the in-memory item size (8 bytes for float32
  // read as double), which bounds the memory the data will take when read whole.
  if (auto e = shape_problem(arr.shape, itemsize(arr.dtype), arr.count); !e.empty()) return failure(e);

  // Data: exactly count * (item size in the file) bytes.
  const auto needed = static_cast<uint64_t>(arr.count) * arr.file_itemsize();
  if (data_size != needed)
    return failure("data has " + std::to_string(data_size) + " bytes, shape " + npy_shape_string(arr.shape) + " of " +
                   (arr.from_float32 ? "float32" : to_string(arr.dtype)) + " needs " + std::to_string(needed));
  arr.data_offset = preamble + header_len;
  result.ok = true;
  return result;
}

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

// ---------------------------------------------------------------------------
// NpyReader

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

// ---------------------------------------------------------------------------
// NpyWriter

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
