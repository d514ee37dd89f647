// .npy reader/writer: round trips, hand-built files of every supported
// version, and every rejection, each with the text of its error.
#include "data/npy.hpp"

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

using namespace mha;
using Catch::Contains;

namespace {

// A unique /tmp path, removed when the guard goes out of scope.
struct TempPath {
  std::string path;
  explicit TempPath(const std::string& tag) {
    static int counter = 0;
    path = "/tmp/mhalearn_test_npy_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" + tag +
           ".npy";
  }
  ~TempPath() { std::remove(path.c_str()); }
};

std::string le_bytes(uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// A .npy file built by hand: `major`.0 preamble, the dict padded with spaces
// to a multiple of `align`, a '\n', then `data`.
std::string make_npy(int major, const std::string& dict, const std::string& data, size_t align = 64) {
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t preamble = 8 + len_bytes;
  std::string header = dict;
  while ((preamble + header.size() + 1) % align != 0) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  out += le_bytes(header.size(), static_cast<int>(len_bytes));
  return out + header + data;
}

std::string f64_data(const std::vector<double>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
}

std::string i8_data(const std::vector<int8_t>& v) { return std::string(reinterpret_cast<const char*>(v.data()), v.size()); }

// The same bytes through the block reader: a memfd (a file with no path)
// opened by NpyReader::adopt and read 5 elements at a time.
NpyResult via_reader(const std::string& bytes, const std::string& name) {
  const int fd = ::memfd_create("npy", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    REQUIRE(n > 0);
    done += static_cast<size_t>(n);
  }
  NpyReader::Open open = NpyReader::adopt(fd, name);
  if (!open.reader) {
    NpyResult r;
    r.error = open.error;
    return r;
  }
  return read_npy_all(*open.reader, 5);
}

// The two readers agree on `bytes`: the same error, or the same array bit for bit.
void check_readers_agree(const std::string& bytes, const NpyResult& parsed) {
  const NpyResult blocks = via_reader(bytes, "X.npy");
  REQUIRE(blocks.ok == parsed.ok);
  CHECK(blocks.error == parsed.error);
  if (!parsed.ok) return;
  CHECK(blocks.array.dtype == parsed.array.dtype);
  CHECK(blocks.array.from_float32 == parsed.array.from_float32);
  CHECK(blocks.array.shape == parsed.array.shape);
  CHECK(blocks.array.i8 == parsed.array.i8);
  REQUIRE(blocks.array.f64.size() == parsed.array.f64.size());
  CHECK((parsed.array.f64.empty() || std::memcmp(blocks.array.f64.data(), parsed.array.f64.data(),
                                                 parsed.array.f64.size() * sizeof(double)) == 0));
}

// Parses and requires failure, with the same error from the block reader;
// returns the error for CHECKs on its text.
std::string rejected(const std::string& bytes) {
  NpyResult r = parse_npy(bytes, "X.npy");
  REQUIRE(r.ok == false);
  CHECK(r.error.rfind("X.npy: ", 0) == 0);
  CHECK(r.error.find('\n') == std::string::npos);
  check_readers_agree(bytes, r);
  return r.error;
}

int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<uint64_t>(a[i]) != std::bit_cast<uint64_t>(b[i])) return false;
  return true;
}

const std::string kI8Dict = "{'descr': '|i1', 'fortran_order': False, 'shape': (2, 3), }";

}  // namespace

TEST_CASE("npy int8 round trip through bytes and files, several shapes", "[npy]") {
  const std::vector<std::vector<int64_t>> shapes = {
      {3, 2, 16}, {5}, {0, 2, 4}, {0}, {}, {1, 1, 1}, {2, 1, 1, 1, 1, 1, 1, 3}, {4, 0, 7}};
  for (const auto& shape : shapes) {
    CAPTURE(npy_shape_string(shape));
    std::vector<int8_t> data(static_cast<size_t>(product(shape)));
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 256) - 128);

    NpyResult r = parse_npy(npy_bytes_int8(shape, data.data()), "mem.npy");
    REQUIRE(r.ok);
    CHECK(r.array.dtype == NpyDtype::int8);
    CHECK(r.array.shape == shape);
    CHECK(r.array.i8 == data);
    CHECK(r.array.f64.empty());

    TempPath tmp("i8");
    REQUIRE(write_npy_int8(tmp.path, shape, data.data()) == "");
    NpyResult f = read_npy(tmp.path);
    REQUIRE(f.ok);
    CHECK(f.array.shape == shape);
    CHECK(f.array.i8 == data);
  }
}

TEST_CASE("npy float64 round trip is bit-exact", "[npy]") {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> specials = {0.0,
                                        -0.0,
                                        1.0,
                                        -1.0,
                                        1e308,
                                        -1e308,
                                        std::numeric_limits<double>::max(),
                                        std::numeric_limits<double>::min(),
                                        std::numeric_limits<double>::denorm_min(),
                                        -std::numeric_limits<double>::denorm_min(),
                                        2.2250738585072009e-308,  // largest denormal
                                        3.5e-310,
                                        0.1,
                                        1.0 / 3.0,
                                        std::nextafter(1.0, 2.0),
                                        inf,
                                        -inf,
                                        std::numeric_limits<double>::quiet_NaN()};
  const std::vector<std::vector<int64_t>> shapes = {{static_cast<int64_t>(specials.size())}, {3, 2, 3}, {2, 9}, {0, 3, 5}};
  for (const auto& shape : shapes) {
    CAPTURE(npy_shape_string(shape));
    std::vector<double> data(static_cast<size_t>(product(shape)));
    for (size_t i = 0; i < data.size(); ++i) data[i] = specials[i % specials.size()];

    NpyResult r = parse_npy(npy_bytes_float64(shape, data.data()), "mem.npy");
    REQUIRE(r.ok);
    CHECK(r.array.dtype == NpyDtype::float64);
    CHECK(r.array.shape == shape);
    CHECK(same_bits(r.array.f64, data));
    CHECK(r.array.i8.empty());

    TempPath tmp("f8");
    REQUIRE(write_npy_float64(tmp.path, shape, data.data()) == "");
    NpyResult f = read_npy(tmp.path);
    REQUIRE(f.ok);
    CHECK(f.array.shape == shape);
    CHECK(same_bits(f.array.f64, data));
  }
  // -0.0 really keeps its sign bit.
  const double neg_zero = -0.0;
  NpyResult z = parse_npy(npy_bytes_float64({1}, &neg_zero), "z.npy");
  REQUIRE(z.ok);
  CHECK(std::signbit(z.array.f64[0]));
}

TEST_CASE("npy writer produces numpy's 1.0 layout", "[npy]") {
  std::vector<int8_t> data(3 * 2 * 16, 1);
  const std::string b = npy_bytes_int8({3, 2, 16}, data.data());
  REQUIRE(b.size() > 10);
  CHECK(b.substr(0, 6) == std::string("\x93NUMPY", 6));
  CHECK(b[6] == 1);
  CHECK(b[7] == 0);
  const size_t header_len = static_cast<unsigned char>(b[8]) | (static_cast<size_t>(static_cast<unsigned char>(b[9])) << 8);
  const size_t data_start = 10 + header_len;
  CHECK(data_start % 64 == 0);
  CHECK(b.size() == data_start + data.size());
  const std::string header = b.substr(10, header_len);
  CHECK(header.back() == '\n');
  const std::string dict = "{'descr': '|i1', 'fortran_order': False, 'shape': (3, 2, 16), }";
  CHECK(header.substr(0, dict.size()) == dict);
  CHECK(header.find_first_not_of(' ', dict.size()) == header.size() - 1);

  const double v[5] = {1, 2, 3, 4, 5};
  const std::string f = npy_bytes_float64({5}, v);
  CHECK(f.find("{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }") == 10);
  const size_t flen = static_cast<unsigned char>(f[8]) | (static_cast<size_t>(static_cast<unsigned char>(f[9])) << 8);
  CHECK((10 + flen) % 64 == 0);
  CHECK(f[10 + flen - 1] == '\n');

  CHECK(npy_bytes_float64({}, v).find("'shape': (), }") != std::string::npos);
  CHECK(npy_shape_string({5}) == "(5,)");
  CHECK(npy_shape_string({}) == "()");
  CHECK(npy_shape_string({10, 2, 16}) == "(10, 2, 16)");
}

TEST_CASE("npy reads hand-built version 1.0, 2.0 and 3.0 files and header variants", "[npy]") {
  const std::vector<int8_t> vals = {1, -1, 1, 1, -1, -1};
  const std::vector<double> dvals = {0.5, -2.0, 1e308, -0.0};

  SECTION("version 2.0 (4-byte header length)") {
    NpyResult r = parse_npy(make_npy(2, kI8Dict, i8_data(vals)), "v2.npy");
    REQUIRE(r.ok);
    CHECK(r.array.shape == std::vector<int64_t>{2, 3});
    CHECK(r.array.i8 == vals);
    NpyResult f = parse_npy(make_npy(2, "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", f64_data(dvals)),
                            "v2f.npy");
    REQUIRE(f.ok);
    CHECK(same_bits(f.array.f64, dvals));
  }
  SECTION("version 2.0 read from a file") {
    TempPath tmp("v2");
    const std::string bytes = make_npy(2, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", f64_data(dvals));
    {
      std::FILE* fp = std::fopen(tmp.path.c_str(), "wb");
      REQUIRE(fp != nullptr);
      REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), fp) == bytes.size());
      std::fclose(fp);
    }
    NpyResult f = read_npy(tmp.path);
    REQUIRE(f.ok);
    CHECK(f.array.shape == std::vector<int64_t>{2, 2});
    CHECK(same_bits(f.array.f64, dvals));
  }
  SECTION("version 3.0 (utf-8 header)") {
    NpyResult r = parse_npy(make_npy(3, kI8Dict, i8_data(vals)), "v3.npy");
    REQUIRE(r.ok);
    CHECK(r.array.i8 == vals);
  }
  SECTION("old numpy: 16-byte alignment, Python 2 long suffix") {
    NpyResult r =
        parse_npy(make_npy(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (2L, 3L), }", i8_data(vals), 16), "o.npy");
    REQUIRE(r.ok);
    CHECK(r.array.shape == std::vector<int64_t>{2, 3});
  }
  SECTION("key order, quotes, whitespace and the other int8 spellings") {
    for (const std::string& dict : {std::string("{\"shape\": (2, 3), \"fortran_order\": False, \"descr\": \"<i1\"}"),
                                   std::string("{'descr':'i1','fortran_order':False,'shape':(2,3)}"),
                                   std::string("  { 'descr' : '|i1' ,\n 'fortran_order' : False , 'shape' : ( 2 , 3 , ) , }")}) {
      CAPTURE(dict);
      NpyResult r = parse_npy(make_npy(1, dict, i8_data(vals)), "k.npy");
      REQUIRE(r.ok);
      CHECK(r.array.dtype == NpyDtype::int8);
      CHECK(r.array.i8 == vals);
    }
  }
  SECTION("header without trailing newline, 0-d array") {
    std::string b = std::string("\x93NUMPY\x01\x00", 8);
    const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': ()}";
    b += le_bytes(dict.size(), 2) + dict + f64_data({42.0});
    NpyResult r = parse_npy(b, "s.npy");
    REQUIRE(r.ok);
    CHECK(r.array.shape.empty());
    CHECK(r.array.f64 == std::vector<double>{42.0});
  }
}

TEST_CASE("npy rejects bad magic, versions and truncated headers", "[npy]") {
  const std::string good = make_npy(1, kI8Dict, std::string(6, '\x01'));
  REQUIRE(parse_npy(good, "X.npy").ok);

  CHECK_THAT(rejected(""), Contains("bad magic"));
  CHECK_THAT(rejected("\x93NUMP"), Contains("bad magic"));
  CHECK_THAT(rejected("PK\x03\x04 this is a zip file"), Contains("bad magic"));
  std::string bad_magic = good;
  bad_magic[1] = 'n';
  CHECK_THAT(rejected(bad_magic), Contains("bad magic"));

  for (const auto& [major, minor] : std::vector<std::pair<int, int>>{{0, 0}, {4, 0}, {1, 1}, {2, 5}, {255, 255}}) {
    std::string v = good;
    v[6] = static_cast<char>(major);
    v[7] = static_cast<char>(minor);
    CHECK_THAT(rejected(v), Contains("unsupported .npy format version " + std::to_string(major) + "." +
                                     std::to_string(minor)));
  }

  CHECK_THAT(rejected(std::string("\x93NUMPY\x01", 7)), Contains("truncated header"));
  CHECK_THAT(rejected(std::string("\x93NUMPY\x01\x00", 8)), Contains("truncated header"));
  CHECK_THAT(rejected(std::string("\x93NUMPY\x01\x00\x10", 9)), Contains("truncated header"));
  CHECK_THAT(rejected(std::string("\x93NUMPY\x02\x00\x10\x00\x00", 11)), Contains("truncated header"));
  // Header length pointing past the end of the file (v1 and a hostile 4 GiB v2 length).
  CHECK_THAT(rejected(good.substr(0, 40)), Contains("truncated header: header length"));
  std::string huge = make_npy(2, kI8Dict, std::string(6, '\x01'));
  huge[8] = huge[9] = huge[10] = huge[11] = '\xff';
  CHECK_THAT(rejected(huge), Contains("header length 4294967295 exceeds"));
}

TEST_CASE("npy rejects malformed header dicts", "[npy]") {
  const std::string data(6, '\x01');
  auto bad = [&](const std::string& dict) { return rejected(make_npy(1, dict, data)); };

  CHECK_THAT(bad("{'descr': '|i1', 'fortran_order': False, 'shape': (2, 3)"), Contains("malformed header"));
  CHECK_THAT(bad("{'descr': '|i1', 'fortran_order': False, 'shape': (2, 3}"), Contains("malformed header"));
  CHECK_THAT(bad("{'descr': '|i1, 'fortran_order': False, 'shape': (2, 3)}"), Contains("malformed header"));
  CHECK_THAT(bad("{'descr' '|i1', 'fortran_order': False, 'shape': (2, 3)}"), Contains("expected ':'"));
  CHECK_THAT(bad("{'descr': '|i1' 'fortran_order': False, 'shape': (2, 3)}"), Contains("malformed header"));
  CHECK_THAT(bad("{'descr': '|i1', 'fortran_order': False, 'shape': (2,, 3)}"), Contains("malformed header"));
  CHECK_THAT(bad("{'descr': '|i1', 'fortran_order': false, 'shape': (2, 3)}"), Contains("malformed header"));
  CHECK_THAT(bad("{'descr': '|i1', 'fortran_order': False, 'shape': (2, 3)} junk"), Contains("after the header dict"));
  CHECK_THAT(bad("['descr', '|i1']"), Contains("not a dict"));
  CHECK_THAT(bad(""), Contains("header ends unexpectedly"));
  CHECK_THAT(bad("{'descr': '|i1', 'shape': (2, 3)}"), Contains("missing key 'fortran_order'"));
  CHECK_THAT(bad("{'fortran_order': False, 'shape': (2, 3)}"), Contains("missing key 'descr'"));
  CHECK_THAT(bad("{'descr': '|i1', 'fortran_order': False}"), Contains("missing key 'shape'"));
  CHECK_THAT(bad("{'descr': '|i1', 'fortran_order': False, 'shape': (2, 3), 'extra': 1}"),
             Contains("unexpected key 'extra'"));
  CHECK_THAT(bad("{'descr': '|i1', 'descr': '|i1', 'fortran_order': False, 'shape': (2, 3)}"),
             Contains("duplicate key 'descr'"));
  CHECK_THAT(bad("{1: '|i1', 'fortran_order': False, 'shape': (2, 3)}"), Contains("key is an integer"));
  CHECK_THAT(bad("{'descr': '|i1', 'fortran_order': 0, 'shape': (2, 3)}"), Contains("fortran_order is an integer"));
  CHECK_THAT(bad("{'descr': '|i1', 'fortran_order': False, 'shape': [2, 3]}"), Contains("shape is a list"));
  CHECK_THAT(bad("{'descr': '|i1', 'fortran_order': False, 'shape': 6}"), Contains("shape is an integer"));
  CHECK_THAT(bad("{'descr': '|i1', 'fortran_order': False, 'shape': (6)}"), Contains("shape is an integer"));
  CHECK_THAT(bad("{'descr': '|i1', 'fortran_order': False, 'shape': (2.0, 3)}"), Contains("shape entry is a float"));
  CHECK_THAT(bad("{'descr': '|i1', 'fortran_order': False, 'shape': ('2', 3)}"), Contains("shape entry is a string"));
  // Deep nesting is refused, not recursed into without bound.
  CHECK_THAT(bad(std::string(5000, '(') + std::string(5000, ')')), Contains("nests too deeply"));
  CHECK_THAT(bad("{'descr': " + std::string(100, '[') + "}"), Contains("nests too deeply"));
  // Non-printable bytes never break the one-line error.
  const std::string e = bad("{'descr': '|i1', 'fortran_order': False, 'shape': (2, 3)}\n\x01\x02");
  CHECK_THAT(e, Contains("\\x01"));
}

TEST_CASE("npy rejects unsupported dtypes, naming them", "[npy]") {
  const std::string data8(8 * 6, '\0');
  auto with_descr = [&](const std::string& descr) {
    return rejected(make_npy(1, "{'descr': " + descr + ", 'fortran_order': False, 'shape': (2, 3), }", data8));
  };
  CHECK_THAT(with_descr("'>f8'"), Contains("big-endian dtype '>f8'"));
  CHECK_THAT(with_descr("'>i1'"), Contains("big-endian"));
  CHECK_THAT(with_descr("'!f8'"), Contains("big-endian"));
  CHECK_THAT(with_descr("'>f4'"), Contains("big-endian dtype '>f4'"));
  CHECK_THAT(with_descr("'<f2'"), Contains("unsupported dtype '<f2'"));
  CHECK_THAT(with_descr("'f4'"), Contains("unsupported dtype 'f4'"));
  CHECK_THAT(with_descr("'<i8'"), Contains("unsupported dtype '<i8'"));
  CHECK_THAT(with_descr("'|u1'"), Contains("unsupported dtype '|u1'"));
  CHECK_THAT(with_descr("'|b1'"), Contains("unsupported dtype '|b1'"));
  CHECK_THAT(with_descr("'<c16'"), Contains("unsupported dtype '<c16'"));
  CHECK_THAT(with_descr("'f8'"), Contains("unsupported dtype 'f8'"));
  CHECK_THAT(with_descr("'|O'"), Contains("unsupported dtype '|O'"));
  CHECK_THAT(with_descr("[('a', '<f8')]"), Contains("structured dtypes are not supported"));
  CHECK_THAT(with_descr("''"), Contains("unsupported dtype ''"));
}

TEST_CASE("npy reads little-endian float32 and widens it exactly to double", "[npy][float32]") {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.5f, 0.1f, 1.0f / 3.0f,
                                     std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
                                     std::numeric_limits<float>::denorm_min(), inf, -inf,
                                     std::numeric_limits<float>::quiet_NaN()};
  const std::string data(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  const std::string file = make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2, 2), }", data);
  NpyResult r = parse_npy(file, "Y32.npy");
  REQUIRE(r.ok);
  check_readers_agree(file, r);  // widened block by block, the same bits
  CHECK(r.array.dtype == NpyDtype::float64);
  CHECK(r.array.from_float32);
  CHECK(r.array.shape == std::vector<int64_t>{3, 2, 2});
  REQUIRE(r.array.f64.size() == values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    CAPTURE(i);
    // Bit-for-bit the double that C++'s float -> double conversion gives (exact).
    CHECK(std::bit_cast<uint64_t>(r.array.f64[i]) == std::bit_cast<uint64_t>(static_cast<double>(values[i])));
  }
  // 0.1f is not 0.1: the reader does not round to the shortest decimal.
  CHECK(r.array.f64[4] == static_cast<double>(0.1f));
  CHECK(r.array.f64[4] != 0.1);
  // The data length counts 4 bytes per value, and errors say float32.
  CHECK_THAT(rejected(file.substr(0, file.size() - 4)), Contains("shape (3, 2, 2) of float32 needs 48"));
  // float32 labels pass the dataset check like float64 ones.
  NpyArray x;
  x.dtype = NpyDtype::int8;
  x.shape = {3, 2, 2};
  x.i8.assign(12, 1);
  NpyArray y = r.array;
  y.f64.assign(12, 0.25);
  CHECK(check_dataset_shapes(x, y).empty());
}

TEST_CASE("npy reads a float32 file written by numpy", "[npy][float32]") {
  // np.save(f, np.array([[1.5, -2.0], [0.1, 3e38]], dtype=np.float32)), byte for byte.
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  const std::vector<float> v = {1.5f, -2.0f, 0.1f, 3e38f};
  const std::string file = make_npy(1, header, std::string(reinterpret_cast<const char*>(v.data()), 16));
  REQUIRE(file.size() == 128 + 16);  // numpy pads the header to 128 bytes here
  NpyResult r = parse_npy(file, "np32.npy");
  REQUIRE(r.ok);
  CHECK(r.array.f64 == std::vector<double>{1.5, -2.0, static_cast<double>(0.1f), static_cast<double>(3e38f)});
}

TEST_CASE("npy rejects Fortran order", "[npy]") {
  const std::string e =
      rejected(make_npy(1, "{'descr': '|i1', 'fortran_order': True, 'shape': (2, 3), }", std::string(6, '\x01')));
  CHECK_THAT(e, Contains("fortran_order is True"));
}

TEST_CASE("npy rejects negative and absurd shapes", "[npy]") {
  auto with_shape = [](const std::string& shape, const std::string& descr = "|i1") {
    return rejected(make_npy(1, "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }",
                             std::string(64, '\x01')));
  };
  CHECK_THAT(with_shape("(-1,)"), Contains("negative dimension"));
  CHECK_THAT(with_shape("(2, -3, 4)"), Contains("shape (2, -3, 4) has a negative dimension"));
  CHECK_THAT(with_shape("(0, -1)"), Contains("negative dimension"));
  CHECK_THAT(with_shape("(4294967296, 4294967296)"), Contains("absurdly large"));
  CHECK_THAT(with_shape("(1152921504606846976,)", "<f8"), Contains("absurdly large"));  // 2^60 * 8 bytes overflows
  CHECK_THAT(with_shape("(0, 4294967296, 4294967296)"), Contains("absurdly large"));  // empty but still absurd
  CHECK_THAT(with_shape("(99999999999999999999999,)"), Contains("dimension 99999999999999999999999 is absurdly large"));
  CHECK_THAT(with_shape("(1, 1, 1, 1, 1, 1, 1, 1, 1)"), Contains("9 dimensions, at most 8"));
  // A huge-but-representable shape is refused by the data size check, without allocating.
  CHECK_THAT(with_shape("(1000000000, 1000000000)"), Contains("data has 64 bytes, shape (1000000000, 1000000000) of int8 needs 1000000000000000000"));
}

TEST_CASE("npy rejects data shorter or longer than the shape implies", "[npy]") {
  const std::string dict = "{'descr': '|i1', 'fortran_order': False, 'shape': (10, 2, 16), }";
  CHECK_THAT(rejected(make_npy(1, dict, std::string(1000, '\x01'))),
             Contains("X.npy: data has 1000 bytes, shape (10, 2, 16) of int8 needs 320"));
  CHECK_THAT(rejected(make_npy(1, dict, std::string(319, '\x01'))), Contains("data has 319 bytes"));
  CHECK_THAT(rejected(make_npy(1, dict, std::string(321, '\x01'))), Contains("data has 321 bytes"));
  CHECK_THAT(rejected(make_npy(1, dict, "")), Contains("data has 0 bytes"));
  const std::string fdict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
  CHECK_THAT(rejected(make_npy(1, fdict, std::string(23, '\0'))), Contains("data has 23 bytes, shape (3,) of float64 needs 24"));
  CHECK_THAT(rejected(make_npy(1, fdict, std::string(25, '\0'))), Contains("needs 24"));
  CHECK_THAT(rejected(make_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4), }", "x")),
             Contains("data has 1 bytes, shape (0, 4) of float64 needs 0"));
  // Every truncation of a valid file fails cleanly.
  std::vector<double> v(12, 1.5);
  const std::string full = npy_bytes_float64({3, 4}, v.data());
  for (size_t n = 0; n < full.size(); ++n) {
    NpyResult r = parse_npy(std::string_view(full).substr(0, n), "X.npy");
    REQUIRE_FALSE(r.ok);
    CHECK(r.error.rfind("X.npy: ", 0) == 0);
    check_readers_agree(full.substr(0, n), r);
  }
}

TEST_CASE("npy never crashes on mutated bytes", "[npy]") {
  std::vector<int8_t> v(3 * 2 * 4, -1);
  const std::string good = npy_bytes_int8({3, 2, 4}, v.data());
  const unsigned char replacements[] = {0x00, 0x01, 0x0a, 0x20, 0x27, 0x28, 0x29, 0x2c, 0x2d, 0x30,
                                        0x39, 0x3a, 0x5b, 0x7b, 0x7d, 0x80, 0xff};
  int accepted = 0;
  for (size_t pos = 0; pos < good.size() - v.size(); ++pos) {
    for (unsigned char c : replacements) {
      std::string m = good;
      m[pos] = static_cast<char>(c);
      NpyResult r = parse_npy(m, "X.npy");
      check_readers_agree(m, r);
      if (r.ok) {
        ++accepted;
        CHECK(static_cast<size_t>(r.array.i8.size() + r.array.f64.size() * 8) <= m.size());
      } else {
        CHECK(r.error.rfind("X.npy: ", 0) == 0);
        CHECK(r.error.find('\n') == std::string::npos);
      }
    }
  }
  CHECK(accepted > 0);  // e.g. padding spaces replaced by other whitespace
  // Pseudo-random garbage after a valid preamble.
  uint64_t s = 0x9e3779b97f4a7c15ULL;
  for (int t = 0; t < 2000; ++t) {
    std::string g = std::string("\x93NUMPY\x01\x00", 8);
    const size_t n = 2 + (t % 120);
    for (size_t i = 0; i < n; ++i) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      g += "{}()[],:'\" 0123-L\x01\xff"[s % 20];
    }
    g[8] = static_cast<char>(n - 2);
    g[9] = 0;
    NpyResult r = parse_npy(g, "X.npy");
    if (!r.ok) CHECK(r.error.find('\n') == std::string::npos);
    check_readers_agree(g, r);
  }
}

TEST_CASE("npy file errors name the path", "[npy]") {
  NpyResult r = read_npy("/tmp/mhalearn_test_npy_does_not_exist/none.npy");
  REQUIRE(r.ok == false);
  CHECK_THAT(r.error, Contains("/tmp/mhalearn_test_npy_does_not_exist/none.npy"));

  TempPath tmp("bad");
  {
    std::FILE* fp = std::fopen(tmp.path.c_str(), "wb");
    REQUIRE(fp != nullptr);
    std::fputs("hello", fp);
    std::fclose(fp);
  }
  NpyResult b = read_npy(tmp.path);
  REQUIRE(b.ok == false);
  CHECK_THAT(b.error, Contains(tmp.path + ": not a .npy file (bad magic string)"));

  const int8_t one = 1;
  CHECK_THAT(write_npy_int8("/tmp/mhalearn_test_npy_does_not_exist/out.npy", {1}, &one),
             Contains("/tmp/mhalearn_test_npy_does_not_exist/out.npy"));
  TempPath neg("neg");
  CHECK_THAT(write_npy_int8(neg.path, {-1}, &one), Contains("negative dimension"));
  CHECK_FALSE(std::filesystem::exists(neg.path));
  CHECK_THROWS_AS(npy_bytes_float64({2, -2}, nullptr), std::invalid_argument);
  CHECK_THROWS_AS(npy_bytes_int8({1, 1, 1, 1, 1, 1, 1, 1, 1}, &one), std::invalid_argument);
}

TEST_CASE("check_dataset_shapes accepts ±1 int8 or float X with float Y of the same shape", "[npy]") {
  auto i8 = [](std::vector<int64_t> shape, int8_t fill) {
    NpyArray a;
    a.dtype = NpyDtype::int8;
    a.shape = shape;
    a.i8.assign(static_cast<size_t>(product(shape)), fill);
    return a;
  };
  auto f64 = [](std::vector<int64_t> shape, double fill) {
    NpyArray a;
    a.dtype = NpyDtype::float64;
    a.shape = shape;
    a.f64.assign(static_cast<size_t>(product(shape)), fill);
    return a;
  };
  NpyArray x = i8({4, 2, 3}, 1);
  x.i8[5] = -1;
  const NpyArray y = f64({4, 2, 3}, 0.25);
  CHECK(check_dataset_shapes(x, y) == "");
  CHECK(check_dataset_shapes(f64({4, 2, 3}, -1.7), y) == "");
  CHECK(check_dataset_shapes(i8({0, 2, 3}, 1), f64({0, 2, 3}, 0)) == "");

  NpyArray zero = x;
  zero.i8[7] = 0;  // sample 1, token 0, coordinate 1
  CHECK_THAT(check_dataset_shapes(zero, y), Contains("X entry (1, 0, 1) is 0"));
  NpyArray two = x;
  two.i8.back() = 2;
  CHECK_THAT(check_dataset_shapes(two, y), Contains("X entry (3, 1, 2) is 2"));
  CHECK_THAT(check_dataset_shapes(x, f64({4, 2, 4}, 0)), Contains("X has shape (4, 2, 3) but Y has shape (4, 2, 4)"));
  CHECK_THAT(check_dataset_shapes(x, f64({5, 2, 3}, 0)), Contains("but Y has shape (5, 2, 3)"));
  CHECK_THAT(check_dataset_shapes(i8({4, 6}, 1), f64({4, 6}, 0)), Contains("X must be a 3-D (N, k, d) array"));
  CHECK_THAT(check_dataset_shapes(x, f64({24}, 0)), Contains("Y must be a 3-D (N, k, d) array, got shape (24,)"));
  CHECK_THAT(check_dataset_shapes(x, i8({4, 2, 3}, 1)), Contains("Y must be float64, got int8"));
  CHECK_THAT(check_dataset_shapes(i8({4, 0, 3}, 1), f64({4, 0, 3}, 0)), Contains("k and d must be at least 1"));

  NpyArray ynan = y;
  ynan.f64[3] = std::numeric_limits<double>::quiet_NaN();
  CHECK_THAT(check_dataset_shapes(x, ynan), Contains("Y entry (0, 1, 0) is NaN"));
  NpyArray xinf = f64({4, 2, 3}, 0.5);
  xinf.f64[0] = -std::numeric_limits<double>::infinity();
  CHECK_THAT(check_dataset_shapes(xinf, y), Contains("X entry (0, 0, 0) is -Inf"));
  NpyArray short_x = x;
  short_x.i8.pop_back();
  CHECK_THAT(check_dataset_shapes(short_x, y), Contains("X holds 23 values but shape (4, 2, 3) needs 24"));
}
