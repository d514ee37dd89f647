// The .npy header, checked: the preamble (magic, version, header length), the
// header dict's keys, dtype, order and shape, and the data's length
// (parse_npy_header). The dict's literal syntax: npy_literal.cpp.
#include "data/npy_detail.hpp"

#include <string>

namespace mha {

const char* to_string(NpyDtype dtype) { return dtype == NpyDtype::int8 ? "int8" : "float64"; }

std::string npy_shape_string(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

namespace npy_detail {

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

namespace {

uint32_t read_le(std::string_view b, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(b[at + i])) << (8 * i);
  return v;
}

}  // namespace

uint64_t declared_header_end(std::string_view first) {
  if (first.size() < kMagic.size() + 2 || first.substr(0, kMagic.size()) != kMagic) return 0;
  const int major = static_cast<unsigned char>(first[6]);
  if (major < 1 || major > 3) return 0;
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t preamble = kMagic.size() + 2 + len_bytes;
  return first.size() < preamble ? 0 : preamble + read_le(first, 8, len_bytes);
}

}  // namespace npy_detail

namespace {

using namespace npy_detail;

constexpr const char* kSupportedDtypes = "expected '|i1' for int8, '<f8' for float64 or '<f4' for float32";

// Where the header text lies: bytes [preamble, preamble + header_len).
struct Preamble {
  size_t preamble = 0;
  size_t header_len = 0;
};

// Preamble: magic, version, header length. `bytes` holds the whole preamble
// unless the file is shorter, so its checks read `bytes` and its lengths are
// the file's. Returns "" or the problem.
std::string check_preamble(std::string_view bytes, uint64_t file_size, Preamble& p) {
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic)
    return "not a .npy file (bad magic string)";
  if (bytes.size() < kMagic.size() + 2) return "truncated header: the file ends inside the format version";
  const int major = static_cast<unsigned char>(bytes[6]);
  const int minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    return "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
           " (supported: 1.0, 2.0, 3.0)";
  const size_t len_bytes = major == 1 ? 2 : 4;
  p.preamble = kMagic.size() + 2 + len_bytes;
  if (file_size < p.preamble)
    return "truncated header: the file has " + std::to_string(file_size) + " bytes, fewer than the " +
           std::to_string(p.preamble) + "-byte preamble";
  p.header_len = read_le(bytes, 8, len_bytes);
  if (p.header_len > file_size - p.preamble)
    return "truncated header: header length " + std::to_string(p.header_len) + " exceeds the " +
           std::to_string(file_size - p.preamble) + " bytes after the preamble";
  if (bytes.size() < p.preamble + p.header_len)  // a caller that did not read the header
    return "internal error: the header was not read before it was parsed";
  return "";
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

// The header dict's three values; every key must be one of them, exactly once.
struct HeaderKeys {
  const PyValue* descr = nullptr;
  const PyValue* fortran = nullptr;
  const PyValue* shape = nullptr;
};

std::string find_keys(const PyValue& dict, HeaderKeys& keys) {
  if (dict.kind != PyValue::Kind::dict)
    return std::string("malformed header: it is ") + kind_name(dict.kind) + ", not a dict";
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PyValue& key = dict.items[i];
    if (key.kind != PyValue::Kind::str)
      return std::string("malformed header: a key is ") + kind_name(key.kind) + ", not a string";
    const PyValue** slot = key.text == "descr"           ? &keys.descr
                           : key.text == "fortran_order" ? &keys.fortran
                           : key.text == "shape"         ? &keys.shape
                                                         : nullptr;
    if (slot == nullptr)
      return "malformed header: unexpected key '" + printable(key.text) +
             "' (expected exactly 'descr', 'fortran_order', 'shape')";
    if (*slot != nullptr) return "malformed header: duplicate key '" + key.text + "'";
    *slot = &dict.items[i + 1];
  }
  if (keys.descr == nullptr || keys.fortran == nullptr || keys.shape == nullptr)
    return std::string("malformed header: missing key '") +
           (keys.descr == nullptr ? "descr" : keys.fortran == nullptr ? "fortran_order" : "shape") +
           "' (keys found: " + (dict.items.empty() ? "none" : dict_key_list(dict)) + ")";
  return "";
}

// descr: int8, little-endian float64, or little-endian float32 (read as double).
std::string read_descr(const PyValue& descr, NpyHeader& arr) {
  if (descr.kind != PyValue::Kind::str)
    return std::string("unsupported dtype: descr is ") + kind_name(descr.kind) +
           " (structured dtypes are not supported; " + kSupportedDtypes + ")";
  const std::string& dt = descr.text;
  if (dt == "|i1" || dt == "<i1" || dt == "i1") {
    arr.dtype = NpyDtype::int8;
  } else if (dt == "<f8") {
    arr.dtype = NpyDtype::float64;
  } else if (dt == "<f4") {
    arr.dtype = NpyDtype::float64;
    arr.from_float32 = true;
  } else if (!dt.empty() && (dt[0] == '>' || dt[0] == '!')) {
    return "big-endian dtype '" + printable(dt) + "' is not supported (" + kSupportedDtypes + ")";
  } else {
    return "unsupported dtype '" + printable(dt) + "' (" + kSupportedDtypes + ")";
  }
  return "";
}

std::string check_fortran_order(const PyValue& fortran) {
  if (fortran.kind != PyValue::Kind::boolean)
    return std::string("malformed header: fortran_order is ") + kind_name(fortran.kind) + ", not True or False";
  if (fortran.bval) return "fortran_order is True: Fortran-ordered arrays are not supported (save a C-order array)";
  return "";
}

// shape: a tuple of at most kNpyMaxDims integers whose size fits (arr.count).
std::string read_shape(const PyValue& shape, NpyHeader& arr) {
  if (shape.kind != PyValue::Kind::tuple)
    return std::string("malformed header: shape is ") + kind_name(shape.kind) + ", not a tuple";
  if (shape.items.size() > static_cast<size_t>(kNpyMaxDims))
    return "shape has " + std::to_string(shape.items.size()) + " dimensions, at most " +
           std::to_string(kNpyMaxDims) + " are supported";
  for (const PyValue& dim : shape.items) {
    if (dim.kind != PyValue::Kind::integer)
      return std::string("malformed header: a shape entry is ") + kind_name(dim.kind) +
             (dim.kind == PyValue::Kind::real ? " (" + printable(dim.text) + ")" : std::string()) +
             ", not an integer";
    if (dim.too_big) return "shape dimension " + printable(dim.text) + " is absurdly large";
    arr.shape.push_back(dim.ival);
  }
  // The shape is checked against the in-memory item size (8 bytes for float32
  // read as double), which bounds the memory the data will take when read whole.
  return shape_problem(arr.shape, itemsize(arr.dtype), arr.count);
}

// The dict's literal, then its keys and the three values, in that order.
std::string read_header_dict(std::string_view header, NpyHeader& arr) {
  PyValue dict;
  std::string perr;
  if (!parse_py_literal(header, dict, perr)) return "malformed header: " + perr;
  HeaderKeys keys;
  if (auto e = find_keys(dict, keys); !e.empty()) return e;
  if (auto e = read_descr(*keys.descr, arr); !e.empty()) return e;
  if (auto e = check_fortran_order(*keys.fortran); !e.empty()) return e;
  return read_shape(*keys.shape, arr);
}

}  // namespace

NpyHeaderResult parse_npy_header(std::string_view bytes, uint64_t file_size, const std::string& name) {
  NpyHeaderResult result;
  auto failure = [&](const std::string& what) {
    result.error = name + ": " + what;
    return result;
  };
  Preamble p;
  if (auto e = check_preamble(bytes, file_size, p); !e.empty()) return failure(e);
  const std::string_view header = bytes.substr(p.preamble, p.header_len);
  const uint64_t data_size = file_size - p.preamble - p.header_len;
  NpyHeader& arr = result.header;
  if (auto e = read_header_dict(header, arr); !e.empty()) return failure(e);
  // Data: exactly count * (item size in the file) bytes.
  const auto needed = static_cast<uint64_t>(arr.count) * arr.file_itemsize();
  if (data_size != needed)
    return failure("data has " + std::to_string(data_size) + " bytes, shape " + npy_shape_string(arr.shape) + " of " +
                   (arr.from_float32 ? "float32" : to_string(arr.dtype)) + " needs " + std::to_string(needed));
  arr.data_offset = p.preamble + p.header_len;
  result.ok = true;
  return result;
}

}  // namespace mha
