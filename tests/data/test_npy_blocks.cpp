// Datasets read and written in blocks: NpyReader (pread), NpyWriter and
// AtomicFileWriter, and NpyDatasetSource, which must draw the same bytes as
// the in-memory DatasetSource over the arrays read whole, check each drawn
// block as check_dataset_shapes checks the whole arrays, and report a file
// cut short after it was opened as an error, never a crash.
#include "data/atomic_file.hpp"
#include "data/npy.hpp"
#include "data/oracle.hpp"
#include "instances.hpp"
#include "learn/learner.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

using namespace mha;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

// A fresh directory under /tmp, removed with everything in it.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("mhalearn_test_blocks_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator()(const std::string& name) const { return (path / name).string(); }
  size_t entries() const { return static_cast<size_t>(std::distance(fs::directory_iterator(path), {})); }
};

void write_bytes(const std::string& path, const std::string& bytes) {
  REQUIRE(write_file_atomically(path, bytes) == "");
}

// Deterministic ±1 inputs and finite labels of shape (n, k, d).
std::vector<int8_t> pm1(int64_t count) {
  std::vector<int8_t> v(static_cast<size_t>(count));
  uint64_t s = 0x243f6a8885a308d3ULL;
  for (auto& x : v) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    x = (s & 1) ? 1 : -1;
  }
  return v;
}
std::vector<double> labels(int64_t count) {
  std::vector<double> v(static_cast<size_t>(count));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.37 * double(i)) * 1e3 + 1e-9 * double(i % 7);
  return v;
}

// float32 file bytes of `values` (each rounded to float), as PyTorch writes them.
std::string float32_file(const std::vector<int64_t>& shape, const std::vector<double>& values) {
  std::string bytes = npy_bytes_float64(shape, values.data());
  bytes.resize(bytes.size() - values.size() * sizeof(double));
  bytes.replace(bytes.find("<f8"), 3, "<f4");
  for (const double v : values) {
    const float f = static_cast<float>(v);
    bytes.append(reinterpret_cast<const char*>(&f), sizeof f);
  }
  return bytes;
}

void require_same(const LabelledBatch& a, const LabelledBatch& b) {
  REQUIRE(a.x.kind == b.x.kind);
  REQUIRE(a.x.k == b.x.k);
  REQUIRE(a.x.d == b.x.d);
  REQUIRE(a.x.count == b.x.count);
  CHECK(a.x.bits == b.x.bits);
  REQUIRE(a.x.values.size() == b.x.values.size());
  CHECK((a.x.values.empty() || std::memcmp(a.x.values.data(), b.x.values.data(), a.x.values.size() * 8) == 0));
  REQUIRE(a.y.size() == b.y.size());
  CHECK((a.y.empty() || std::memcmp(a.y.data(), b.y.data(), a.y.size() * 8) == 0));
}

std::unique_ptr<NpyDatasetSource> open_files(const std::string& x, const std::string& y) {
  DatasetFilesOpen open = open_dataset_files(x, y);
  INFO(open.error);
  REQUIRE(open.source);
  return std::move(open.source);
}

std::unique_ptr<DatasetSource> open_whole(const std::string& x, const std::string& y) {
  NpyResult xr = read_npy(x), yr = read_npy(y);
  REQUIRE(xr.ok);
  REQUIRE(yr.ok);
  DatasetOpen open = open_dataset(std::move(xr.array), std::move(yr.array));
  INFO(open.error);
  REQUIRE(open.source);
  return std::move(open.source);
}

}  // namespace

TEST_CASE("NpyReader reads any element range of int8, float64 and float32 files as parse_npy does", "[npy][blocks]") {
  TempDir dir;
  // float32 beyond one staging block (2^18 floats), so the widening runs in several blocks.
  const int64_t n = (int64_t{1} << 18) + 1000;
  const std::vector<double> f = labels(n);
  const std::vector<int8_t> b = pm1(n);
  write_bytes(dir("f8.npy"), npy_bytes_float64({n}, f.data()));
  write_bytes(dir("i1.npy"), npy_bytes_int8({n}, b.data()));
  write_bytes(dir("f4.npy"), float32_file({n}, f));
  for (const char* name : {"f8.npy", "i1.npy", "f4.npy"}) {
    CAPTURE(name);
    const NpyResult whole = parse_npy([&] {
      std::string bytes, error;
      REQUIRE(read_whole_file(dir(name), bytes, error));
      return bytes;
    }(), dir(name));
    REQUIRE(whole.ok);
    NpyReader::Open open = NpyReader::open(dir(name));
    REQUIRE(open.reader);
    const NpyReader& r = *open.reader;
    CHECK(r.header().count == n);
    CHECK(r.header().shape == std::vector<int64_t>{n});
    const std::vector<std::pair<int64_t, int64_t>> ranges = {
        {0, n}, {0, 0}, {n, 0}, {n - 1, 1}, {999, 1 << 18}, {(1 << 18) - 3, 7}, {1, n - 1}};
    for (const auto& [first, count] : ranges) {
      CAPTURE(first, count);
      if (whole.array.dtype == NpyDtype::int8) {
        std::vector<int8_t> got(static_cast<size_t>(count));
        REQUIRE(r.read_int8(first, count, got.data()) == "");
        CHECK(std::equal(got.begin(), got.end(), whole.array.i8.begin() + first));
        CHECK_THAT(r.read_float64(first, count, nullptr), Contains("read as float, but its data are int8"));
      } else {
        std::vector<double> got(static_cast<size_t>(count));
        REQUIRE(r.read_float64(first, count, got.data()) == "");
        CHECK((count == 0 || std::memcmp(got.data(), whole.array.f64.data() + first, size_t(count) * 8) == 0));
      }
    }
    std::vector<double> one(2);
    std::vector<int8_t> one8(2);
    const std::string past = whole.array.dtype == NpyDtype::int8 ? r.read_int8(n - 1, 2, one8.data())
                                                                 : r.read_float64(n - 1, 2, one.data());
    CHECK_THAT(past, Contains("outside the array of " + std::to_string(n)));
  }
}

TEST_CASE("NpyReader reports a file cut short after it was opened, and reads pipes whole", "[npy][blocks]") {
  TempDir dir;
  const std::vector<double> f = labels(1000);
  write_bytes(dir("y.npy"), npy_bytes_float64({10, 2, 50}, f.data()));
  NpyReader::Open open = NpyReader::open(dir("y.npy"));
  REQUIRE(open.reader);
  REQUIRE(::truncate(dir("y.npy").c_str(), 128 + 8 * 600) == 0);
  std::vector<double> got(1000);
  CHECK(open.reader->read_float64(0, 600, got.data()) == "");
  const std::string e = open.reader->read_float64(0, 1000, got.data());
  CHECK_THAT(e, Contains(dir("y.npy") + ": the file now ends before byte 4928, which it had when it was opened"));
  CHECK(e.find('\n') == std::string::npos);

  // A pipe has no offsets: its bytes are read whole when it is opened.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const std::string bytes = npy_bytes_float64({4}, f.data());
  REQUIRE(::write(fds[1], bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  ::close(fds[1]);
  NpyReader::Open piped = NpyReader::adopt(fds[0], "pipe.npy");
  REQUIRE(piped.reader);
  std::vector<double> four(4);
  REQUIRE(piped.reader->read_float64(0, 4, four.data()) == "");
  CHECK(std::memcmp(four.data(), f.data(), 32) == 0);

  CHECK_THAT(NpyReader::open(dir("missing.npy")).error, Contains("cannot open " + dir("missing.npy")));
}

TEST_CASE("NpyWriter writes the bytes of the whole-array writer and never leaves a partial file", "[npy][blocks]") {
  TempDir dir;
  const std::vector<int64_t> shape = {7, 3, 5};
  const std::vector<double> f = labels(105);
  const std::vector<int8_t> b = pm1(105);
  {
    NpyWriter w(dir("f.npy"), shape, NpyDtype::float64);
    for (int64_t first = 0; first < 105; first += 20)
      REQUIRE(w.append_float64(f.data() + first, std::min<int64_t>(20, 105 - first)) == "");
    CHECK(fs::exists(dir("f.npy")) == false);  // nothing under the name before the commit
    REQUIRE(w.commit() == "");
  }
  std::string bytes, error;
  REQUIRE(read_whole_file(dir("f.npy"), bytes, error));
  CHECK(bytes == npy_bytes_float64(shape, f.data()));
  {
    NpyWriter w(dir("b.npy"), shape, NpyDtype::int8);
    REQUIRE(w.append_int8(b.data(), 50) == "");
    REQUIRE(w.append_int8(b.data() + 50, 55) == "");
    REQUIRE(w.finish() == "");
    REQUIRE(w.publish() == "");
  }
  REQUIRE(read_whole_file(dir("b.npy"), bytes, error));
  CHECK(bytes == npy_bytes_int8(shape, b.data()));
  CHECK(dir.entries() == 2);

  // Too few values, too many, the wrong type, or no commit: no file, no temporary file left.
  {
    NpyWriter w(dir("short.npy"), shape, NpyDtype::float64);
    REQUIRE(w.append_float64(f.data(), 104) == "");
    CHECK_THAT(w.commit(), Contains("104 of its 105 values were given"));
    CHECK_THAT(w.append_float64(f.data(), 1), Contains("104 of its 105"));  // the first error sticks
  }
  {
    NpyWriter w(dir("long.npy"), shape, NpyDtype::float64);
    CHECK_THAT(w.append_float64(f.data(), 106), Contains("more values than its shape holds"));
    CHECK_THAT(w.commit(), Contains("more values than its shape holds"));
  }
  {
    NpyWriter w(dir("type.npy"), shape, NpyDtype::int8);
    CHECK_THAT(w.append_float64(f.data(), 1), Contains("float64 data for an int8 file"));
  }
  {
    NpyWriter w(dir("abandoned.npy"), shape, NpyDtype::int8);
    REQUIRE(w.append_int8(b.data(), 105) == "");
  }
  CHECK(dir.entries() == 2);
  NpyWriter nowhere("/tmp/mhalearn_test_blocks_no_such_dir/x.npy", shape, NpyDtype::int8);
  CHECK_THAT(nowhere.error(), Contains("cannot create a temporary file for /tmp/mhalearn_test_blocks_no_such_dir/x.npy"));
  CHECK_THAT(NpyWriter(dir("neg.npy"), {-1}, NpyDtype::int8).error(), Contains("negative dimension"));
  CHECK(dir.entries() == 2);
}

TEST_CASE("NpyDatasetSource draws the same bytes as the arrays read whole, for any range", "[npy][blocks][oracle]") {
  TempDir dir;
  struct Case {
    const char* what;
    int k, d;
    bool gaussian, y_float32;
  };
  // d = 70: two words per token; 9000 samples of int8 inputs at k·d = 140 cross
  // the staging block (7489 samples) inside a draw.
  for (const Case c : {Case{"boolean, two words per token", 2, 70, false, false},
                       Case{"boolean, float32 labels", 3, 8, false, true},
                       Case{"gaussian inputs", 2, 5, true, false}}) {
    CAPTURE(c.what);
    const int64_t n = 9000, per = int64_t{c.k} * c.d;
    const std::vector<int64_t> shape = {n, c.k, c.d};
    const std::vector<double> y = labels(n * per);
    if (c.gaussian) {
      const std::vector<double> xv = labels(n * per + 3);
      write_bytes(dir("x.npy"), npy_bytes_float64(shape, xv.data() + 3));
    } else {
      write_bytes(dir("x.npy"), npy_bytes_int8(shape, pm1(n * per).data()));
    }
    write_bytes(dir("y.npy"), c.y_float32 ? float32_file(shape, y) : npy_bytes_float64(shape, y.data()));
    const auto files = open_files(dir("x.npy"), dir("y.npy"));
    const auto whole = open_whole(dir("x.npy"), dir("y.npy"));
    REQUIRE(files->available() == n);
    CHECK(files->k() == c.k);
    CHECK(files->d() == c.d);
    const std::vector<std::pair<uint64_t, int64_t>> draws = {
        {0, n}, {0, 1}, {8999, 1}, {8999, 5}, {1, 8998}, {4000, 4000}, {9000, 3}, {123456, 2}, {17, 0}};
    for (const auto& [first, count] : draws) {
      CAPTURE(first, count);
      require_same(files->draw(first, count, 2), whole->draw(first, count, 1));
    }
  }
}

TEST_CASE("NpyDatasetSource checks each drawn block as check_dataset_shapes checks the whole arrays", "[npy][blocks][oracle]") {
  TempDir dir;
  const int64_t n = 5000;
  const int k = 2, d = 3;
  const std::vector<int64_t> shape = {n, k, d};
  std::vector<int8_t> x = pm1(n * k * d);
  std::vector<double> y = labels(n * k * d);

  SECTION("an int8 input other than ±1") {
    x[(4000 * k + 1) * d + 2] = 0;
    write_bytes(dir("x.npy"), npy_bytes_int8(shape, x.data()));
    write_bytes(dir("y.npy"), npy_bytes_float64(shape, y.data()));
    const auto files = open_files(dir("x.npy"), dir("y.npy"));
    CHECK(files->draw(0, 4000, 1).x.count == 4000);  // the samples before it are fine
    CHECK(files->draw(4001, 999, 1).x.count == 999);
    NpyResult xr = read_npy(dir("x.npy")), yr = read_npy(dir("y.npy"));
    const std::string whole = check_dataset_shapes(xr.array, yr.array);
    CHECK(whole == "X entry (4000, 1, 2) is 0; int8 inputs must be exactly +1 or -1");
    CHECK_THROWS_WITH(files->draw(3990, 20, 1), whole);
  }
  SECTION("a NaN or an infinite label") {
    y[(2500 * k + 0) * d + 1] = std::nan("");
    y[(4999 * k + 1) * d + 0] = -std::numeric_limits<double>::infinity();
    write_bytes(dir("x.npy"), npy_bytes_int8(shape, x.data()));
    write_bytes(dir("y.npy"), npy_bytes_float64(shape, y.data()));
    const auto files = open_files(dir("x.npy"), dir("y.npy"));
    CHECK_THROWS_AS(files->draw(0, n, 1), DatasetError);
    CHECK_THROWS_WITH(files->draw(2000, 1000, 1), "Y entry (2500, 0, 1) is NaN; values must be finite");
    CHECK_THROWS_WITH(files->draw(2501, 2499, 1), "Y entry (4999, 1, 0) is -Inf; values must be finite");
    CHECK(files->draw(2501, 2498, 1).x.count == 2498);
  }
  SECTION("files cut short after they were opened") {
    write_bytes(dir("x.npy"), npy_bytes_int8(shape, x.data()));
    write_bytes(dir("y.npy"), npy_bytes_float64(shape, y.data()));
    const auto files = open_files(dir("x.npy"), dir("y.npy"));
    REQUIRE(::truncate(dir("y.npy").c_str(), 128 + 8 * k * d * 3000) == 0);
    CHECK(files->draw(0, 3000, 1).x.count == 3000);
    CHECK_THROWS_WITH(files->draw(2999, 2, 1), Contains("y.npy: the file now ends before byte 144128"));
    REQUIRE(::truncate(dir("x.npy").c_str(), 0) == 0);
    CHECK_THROWS_WITH(files->draw(0, 1, 1), Contains("x.npy: the file now ends before byte 128"));
  }
  SECTION("headers: the errors of open_dataset") {
    write_bytes(dir("x.npy"), npy_bytes_int8(shape, x.data()));
    write_bytes(dir("y.npy"), npy_bytes_float64(shape, y.data()));
    write_bytes(dir("y4.npy"), npy_bytes_float64({n, k, 4}, labels(n * k * 4).data()));
    write_bytes(dir("x8.npy"), npy_bytes_int8({n, k, d}, x.data()));
    write_bytes(dir("yi.npy"), npy_bytes_int8(shape, x.data()));
    write_bytes(dir("e.npy"), npy_bytes_int8({0, k, d}, nullptr));
    write_bytes(dir("ey.npy"), npy_bytes_float64({0, k, d}, nullptr));
    write_bytes(dir("kd.npy"), npy_bytes_int8({1, 4, 3}, x.data()));
    write_bytes(dir("kdy.npy"), npy_bytes_float64({1, 4, 3}, y.data()));
    auto same_error = [&](const std::string& xn, const std::string& yn) {
      NpyResult xr = read_npy(dir(xn)), yr = read_npy(dir(yn));
      REQUIRE(xr.ok);
      REQUIRE(yr.ok);
      const std::string whole = open_dataset(std::move(xr.array), std::move(yr.array)).error;
      const DatasetFilesOpen files = open_dataset_files(dir(xn), dir(yn));
      CHECK_FALSE(files.source);
      CHECK(files.error == whole);
      return whole;
    };
    CHECK_THAT(same_error("x.npy", "y4.npy"), Contains("but Y has shape (5000, 2, 4)"));
    CHECK_THAT(same_error("x.npy", "yi.npy"), Contains("Y must be float64, got int8"));
    CHECK_THAT(same_error("e.npy", "ey.npy"), Contains("the dataset is empty"));
    CHECK_THAT(same_error("kd.npy", "kdy.npy"), Contains("k = 4 exceeds d = 3"));
    CHECK_THAT(open_dataset_files(dir("x.npy"), dir("none.npy")).error, Contains("cannot open " + dir("none.npy")));
  }
}

TEST_CASE("a dataset of more than 2^31 samples draws at 64-bit offsets (sparse files)", "[npy][blocks][oracle]") {
  TempDir dir;
  const int64_t n = (int64_t{1} << 31) + 5;  // X: 2 GiB of int8, Y: 16 GiB of float64, as holes
  auto sparse = [&](const std::string& name, NpyDtype dtype, const std::string& tail) {
    const std::string header = npy_header_bytes({n, 1, 1}, dtype);
    const int64_t size = static_cast<int64_t>(header.size()) + n * (dtype == NpyDtype::int8 ? 1 : 8);
    const int fd = ::open(dir(name).c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::pwrite(fd, header.data(), header.size(), 0) == static_cast<ssize_t>(header.size()));
    REQUIRE(::ftruncate(fd, size) == 0);
    REQUIRE(::pwrite(fd, tail.data(), tail.size(), size - static_cast<int64_t>(tail.size())) ==
            static_cast<ssize_t>(tail.size()));
    ::close(fd);
    return fs::file_size(dir(name)) == static_cast<uintmax_t>(size);
  };
  // The last five samples: inputs +1, -1, +1, +1, -1; labels 0.5 .. 4.5. The holes read as 0.
  const std::vector<int8_t> xt = {1, -1, 1, 1, -1};
  const std::vector<double> yt = {0.5, 1.5, 2.5, 3.5, 4.5};
  REQUIRE(sparse("x.npy", NpyDtype::int8, std::string(reinterpret_cast<const char*>(xt.data()), 5)));
  REQUIRE(sparse("y.npy", NpyDtype::float64, std::string(reinterpret_cast<const char*>(yt.data()), 40)));
  const auto files = open_files(dir("x.npy"), dir("y.npy"));
  REQUIRE(files->available() == n);
  const LabelledBatch b = files->draw(static_cast<uint64_t>(n - 5), 10, 1);
  REQUIRE(b.x.count == 5);
  for (int i = 0; i < 5; ++i) {
    CHECK(b.x.bits[i] == (xt[i] > 0 ? 1u : 0u));
    CHECK(b.y[i] == yt[i]);
  }
  // Sample 2^31 − 1 is a hole: its input 0 is refused with its 64-bit index.
  CHECK_THROWS_WITH(files->draw(static_cast<uint64_t>(n - 6), 2, 1),
                    "X entry (2147483647, 0, 0) is 0; int8 inputs must be exactly +1 or -1");
}

namespace {
// Draws from `inner`, recording each range; refuses, as NpyDatasetSource
// refuses a bad block, any draw that covers sample `bad`.
class RefusingSource : public SampleSource {
 public:
  RefusingSource(const SampleSource& inner, int64_t bad) : inner_(inner), bad_(bad) {}
  int k() const override { return inner_.k(); }
  int d() const override { return inner_.d(); }
  int64_t available() const override { return inner_.available(); }
  LabelledBatch draw(uint64_t first, int64_t count, int threads) const override {
    draws.emplace_back(static_cast<int64_t>(first), count);
    if (bad_ >= static_cast<int64_t>(first) && bad_ < static_cast<int64_t>(first) + count)
      throw DatasetError("Y entry (" + std::to_string(bad_) + ", 0, 0) is NaN; values must be finite");
    return inner_.draw(first, count, threads);
  }
  mutable std::vector<std::pair<int64_t, int64_t>> draws;

 private:
  const SampleSource& inner_;
  int64_t bad_;
};
}  // namespace

TEST_CASE("a dataset error in any stage's draw leaves the learner, stage 6's included", "[blocks][learn]") {
  const Instance inst = test::generated_instance(8, 2, 2, 6, 2);
  const SampleOracle oracle(inst, 1);
  LearnOptions o;
  o.m = 2;
  o.threads = 2;
  o.reference = false;
  o.polish = false;
  o.max_rounds = 1;  // draws: validation, stage 1, the sculpt pilot and batches, stage 6's training and validation
  o.stage1_samples = 50000;
  o.crude_sculpt_samples = 200000;
  o.net.max_tuples = 500;
  o.validation_samples = 200;
  const RefusingSource clean(oracle, -1);
  const LearnResult r = learn_layer(clean, o);
  INFO(format_table(r.report));
  REQUIRE(r.report.ok);
  REQUIRE(clean.draws.size() >= 5);
  // Stage 6 catches its own failures and ends the round with a message: a bad
  // sample in its training draw must not become such a message.
  const int64_t stage6_train = clean.draws[clean.draws.size() - 2].first;
  for (const int64_t bad : {int64_t{0}, int64_t{300}, stage6_train}) {
    CAPTURE(bad);
    const RefusingSource refusing(oracle, bad);
    CHECK_THROWS_AS(learn_layer(refusing, o), DatasetError);
  }
}
