// sample, forward: datasets as .npy (X int8 or float64 (N,k,d), Y float64
// (N,k,d)), read and written block by block, so that memory does not grow
// with N; Python's arrays the same way, block by block, so that Ctrl-C is
// answered between two blocks.
#include "commands/declarations.hpp"
#include "commands/file_kinds.hpp"
#include "commands/input.hpp"
#include "commands/status.hpp"
#include "data/atomic_file.hpp"
#include "data/oracle.hpp"
#include "model/forward_reference.hpp"
#include "util/format.hpp"
#include "util/clock.hpp"
#include "util/progress.hpp"

#include <algorithm>
#include <chrono>

namespace mha::commands {

using nlohmann::json;

namespace {

// sample and forward hold one block of samples at a time: as many as have
// kBlockLabelBytes of labels (float64 (count, k, d)), at least one. Their
// outputs do not depend on it (sample n is a function of (seed, n); forward
// is per sample).
constexpr int64_t kBlockLabelBytes = int64_t{16} << 20;
int64_t block_samples(int k, int d) { return std::max<int64_t>(1, kBlockLabelBytes / (int64_t{8} * k * d)); }

// "" when `bytes` more fit on the file system of each output file, else one
// line. Files on one file system (the same free count) need their sum. Best
// effort: a file system that cannot be asked is not refused, and a later
// write error is still reported (and leaves no file). Devices and pipes are
// written through and take what comes.
std::string space_problem(const Arguments& a, const std::string& what,
                          const std::vector<std::pair<std::string, double>>& files) {
  std::vector<std::pair<int64_t, double>> need;  // free bytes, bytes needed
  for (const auto& [option, bytes] : files) {
    if (!a.values.count(option)) continue;  // Python: an array in memory
    const OutputTarget t = output_target(a.text(option));
    if (t.write_through) continue;
    const int64_t free = free_bytes_for(t.path);
    if (free < 0) continue;
    auto it = std::find_if(need.begin(), need.end(), [&](const auto& n) { return n.first == free; });
    if (it == need.end()) need.emplace_back(free, bytes);
    else it->second += bytes;
  }
  for (const auto& [free, bytes] : need)
    if (bytes > double(free))
      return what + " needs " + format_bytes(bytes) + ", more than the " + format_bytes(double(free)) +
             " free on its file system";
  return "";
}

// Sample i of a Boolean batch as int8 ±1 (C order, k·d values).
void unpack_pm1(const InputBatch& x, int64_t i, int8_t* out) {
  const uint64_t* w = x.sample_bits(i);
  const int wpt = words_per_token(x.d);
  for (int t = 0; t < x.k; ++t)
    for (int j = 0; j < x.d; ++j) out[t * x.d + j] = ((w[t * wpt + j / 64] >> (j % 64)) & 1u) ? 1 : -1;
}

// Samples 0..n−1 of the oracle into the two outputs, block by block.
std::string write_samples(const SampleOracle& oracle, int64_t n, int threads, ArrayOut& xw, ArrayOut& yw) {
  const int k = oracle.k(), d = oracle.d();
  const int64_t per = int64_t{k} * d, block = block_samples(k, d);
  std::vector<int8_t> x8;
  Progress progress("sample: drawing and writing", n);
  for (int64_t first = 0; first < n; first += block) {
    progress.update(first);
    const LabelledBatch b = oracle.draw(static_cast<uint64_t>(first), std::min(block, n - first), threads);
    if (b.x.kind == InputKind::boolean) {
      x8.resize(static_cast<size_t>(b.x.count * per));
      for (int64_t i = 0; i < b.x.count; ++i) unpack_pm1(b.x, i, x8.data() + i * per);
      if (auto e = xw.append_int8(x8.data(), b.x.count * per); !e.empty()) return e;
    } else if (auto e = xw.append_float64(b.x.values.data(), b.x.count * per); !e.empty()) {
      return e;
    }
    if (auto e = yw.append_float64(b.y.data(), b.x.count * per); !e.empty()) return e;
  }
  return "";
}

Result run_sample(Arguments& a, Context& ctx) {
  Result r;
  Instance inst;
  if (!load_instance(a, "instance", inst, r)) return r;
  const bool object = a.instances.count("instance") != 0;
  if (auto e = oracle_problem(inst); !e.empty())
    return r.failed(kExitFastPathOverflow, (object ? std::string("the instance") : a.text("instance")) + ": " + e);
  const int k = inst.k, d = inst.d();
  const int64_t n = a.integer("n");
  const uint64_t seed = a.seed("seed");
  const bool boolean = inst.inputs == InputKind::boolean;
  const double values = double(n) * k * d;
  if (auto e = space_problem(a, a.spell("n") + " " + std::to_string(n) + " (X and Y together)",
                             {{"x", values * (boolean ? 1.0 : 8.0)}, {"y", values * 8.0}});
      !e.empty())
    return r.failed(kExitBadInput, e);
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<ArrayOut> xw, yw;
  const std::vector<int64_t> shape = {n, k, d};
  if (auto e = ctx.open_array("x", shape, boolean ? NpyDtype::int8 : NpyDtype::float64, xw); !e.empty())
    return r.failed(kExitBadInput, e);
  if (auto e = ctx.open_array("y", shape, NpyDtype::float64, yw); !e.empty()) return r.failed(kExitBadInput, e);
  if (auto e = write_samples(SampleOracle(inst, seed), n, a.threads(), *xw, *yw); !e.empty())
    return r.failed(kExitFailedRun, e);
  json options = {{"instance", object ? json("(an Instance)") : json(a.text("instance"))}, {"n", n}, {"seed", seed}};
  json prov = ctx.provenance("sample", options);
  prov["seed"] = seed;
  prov["instance_provenance"] = json::parse(inst.provenance_json);
  r.outputs["x"].sidecar = prov;
  r.outputs["y"].sidecar = prov;
  const double secs = seconds_since(t0);
  const std::string &x = a.text("x"), &y = a.text("y");
  r.summary = a.flag("json") ? json{{"x", x}, {"y", y}, {"n", n}, {"seed", seed}, {"seconds", secs}}.dump(2) + "\n"
                             : format("wrote %lld samples to %s, %s (seed %llu, %g s)\n", (long long)n, x.c_str(),
                                      y.c_str(), (unsigned long long)seed, secs);
  return r;
}

}  // namespace

Command sample_command() {
  Option instance = option::instance_file("instance file (JSON)");
  instance.required = true;
  Option n{"n", Type::integer, "number of samples (written in blocks: memory does not grow with N)"};
  n.range = range(1, two_to(40));
  n.required = true;
  n.python_position = 1;
  Option x{"x", Type::text, "inputs to write: int8 (N,k,d) for Boolean, float64 for Gaussian", Role::file_out};
  Option y{"y", Type::text, "labels to write: float64 (N,k,d)", Role::file_out};
  x.required = y.required = x.sidecar = y.sidecar = true;
  return {"sample", "sample", "Draw N labelled samples (X, F(X)) of an instance into .npy files",
          {instance, n, option::seed("sample seed: sample n is a function of (seed, n)"), option::threads(), x, y,
           option::json_flag("print the summary as JSON")},
          run_sample};
}

namespace {

// The inputs of forward, block by block: a .npy file read in blocks, or
// Python's array (a 2-D (k, d) array is one sequence).
struct Inputs {
  std::unique_ptr<NpyReader> file;
  NpyArray array;
  bool in_memory = false;
  std::vector<int64_t> shape;

  // Inputs first .. first+count−1 as a batch, checked as check_inputs_array does; throws DatasetError.
  InputBatch read(int64_t first, int64_t count, int d) const {
    const int k = static_cast<int>(shape[1]);
    const int64_t per = int64_t{k} * d;
    const NpyDtype dtype = in_memory ? array.dtype : file->header().dtype;
    const std::string name = in_memory ? std::string("X") : file->name();
    auto check = [&](const std::string& e) {
      if (!e.empty()) throw DatasetError(name + ": " + e);
    };
    if (dtype == NpyDtype::int8) {
      std::vector<int8_t> v(static_cast<size_t>(count * per));
      if (in_memory) std::copy_n(array.i8.begin() + first * per, count * per, v.begin());
      else if (auto e = file->read_int8(first * per, count * per, v.data()); !e.empty()) throw DatasetError(e);
      check(check_inputs_block(v.data(), count * per, first * per));
      return boolean_batch_from_values(v, count, k, d);
    }
    std::vector<double> v(static_cast<size_t>(count * per));
    if (in_memory) std::copy_n(array.f64.begin() + first * per, count * per, v.begin());
    else if (auto e = file->read_float64(first * per, count * per, v.data()); !e.empty()) throw DatasetError(e);
    check(check_inputs_block(v.data(), count * per, first * per));
    return dense_batch_from_values(std::move(v), count, k, d);
  }
};

// The inputs' shape checked against the instance: "" or why not.
std::string open_inputs(Arguments& a, int d, Inputs& in, std::vector<int64_t>& out_shape) {
  if (auto it = a.arrays.find("x"); it != a.arrays.end()) {
    in.in_memory = true;
    in.array = std::move(it->second);
    out_shape = in.array.shape;
    if (in.array.shape.size() == 2) in.array.shape.insert(in.array.shape.begin(), 1);  // one sequence
    in.shape = in.array.shape;
    if (in.array.shape.size() != 3)
      return "X: expected a 3-D array (N, k, d) or one sequence (k, d), got " + std::to_string(out_shape.size()) +
             " dimensions";
    if (auto e = check_inputs_shape(in.shape, d); !e.empty()) return "X: " + e;
    return "";
  }
  NpyReader::Open xr = NpyReader::open(a.text("x"));
  if (!xr.reader) return xr.error;
  in.file = std::move(xr.reader);
  in.shape = out_shape = in.file->header().shape;
  if (auto e = check_inputs_shape(in.shape, d); !e.empty()) return a.text("x") + ": " + e;
  return "";
}

// F(X) block by block into `out`: "" or why not, with `status` the exit status.
std::string forward_blocks(const Arguments& a, const Instance& inst, const Inputs& in, ArrayOut& out, int& status) {
  const int64_t n = in.shape[0];
  const int k = static_cast<int>(in.shape[1]), d = inst.d();
  const std::string path = a.text("path");
  const FastForward fast(inst.layer);
  const int64_t block = block_samples(k, d);
  std::vector<double> y;
  Progress progress("forward (" + path + " path)", n);
  for (int64_t first = 0; first < n; first += block) {
    progress.update(first);
    const InputBatch batch = in.read(first, std::min(block, n - first), d);
    if (path == "fast") {
      y.resize(static_cast<size_t>(batch.count) * k * d);
      FastForwardStatus s = fast.run(batch, y.data(), a.threads());
      if (!s.ok()) {
        s.first_unanswered += first;  // the sample's index in the file
        status = kExitFastPathOverflow;
        return (in.in_memory ? std::string("X") : a.text("x")) + ": " + s.message() + "; use " +
               (a.spelling == Spelling::cli ? "--path reference" : "path=\"reference\"");
      }
    } else {
      y = forward_mpfr_batch(inst.layer, batch, static_cast<unsigned>(a.integer("precision")));
    }
    if (auto e = out.append_float64(y.data(), static_cast<int64_t>(y.size())); !e.empty()) {
      status = kExitFailedRun;
      return e;
    }
  }
  return "";
}

Result run_forward(Arguments& a, Context& ctx) {
  Result r;
  const std::string path = a.text("path");
  if (a.given("precision") && path != "reference")
    return r.failed(kExitBadInput, a.spell("precision") + " applies to " + a.spell("path") +
                                       " reference (the fast path is double)");
  Instance inst;
  if (!load_instance(a, "instance", inst, r)) return r;
  Inputs in;
  std::vector<int64_t> out_shape;
  if (auto e = open_inputs(a, inst.d(), in, out_shape); !e.empty()) return r.failed(kExitBadInput, e);
  const int64_t n = in.shape[0];
  const int k = static_cast<int>(in.shape[1]), d = inst.d();
  if (auto e = space_problem(a, a.text("output"), {{"output", double(n) * k * d * 8.0}}); !e.empty())
    return r.failed(kExitBadInput, e);
  out_shape.back() = d;
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<ArrayOut> out;
  if (auto e = ctx.open_array("output", out_shape, NpyDtype::float64, out); !e.empty()) return r.failed(kExitBadInput, e);
  int status = kExitOk;
  if (auto e = forward_blocks(a, inst, in, *out, status); !e.empty()) return r.failed(status, e);
  const double secs = seconds_since(t0);
  const int64_t precision = a.integer("precision");
  json options = {{"instance", a.instances.count("instance") ? json("(an Instance)") : json(a.text("instance"))},
                  {"x", in.in_memory ? json("(an array)") : json(a.text("x"))}, {"path", path}, {"precision", precision}};
  r.outputs["output"].sidecar = ctx.provenance("forward", options);
  const std::string& o = a.text("output");
  r.summary = a.flag("json") ? json{{"output", o}, {"n", n}, {"path", path}, {"seconds", secs}}.dump(2) + "\n"
                             : format("wrote %s: %lld outputs on the %s path%s, %g s\n", o.c_str(), (long long)n,
                                      path.c_str(), path == "reference" ? format(" (%lld bits)", (long long)precision).c_str() : "",
                                      secs);
  return r;
}

}  // namespace

Command forward_command() {
  Option instance = option::instance_file("instance file (JSON)");
  instance.required = true;
  Option x{"x", Type::text, std::string("read in blocks; ") + kInputsContract + "; " + kForwardLengthContract,
           Role::array_in};
  x.required = true;
  x.python_position = 1;
  x.contract = kInputsContract;
  Option path{"path", Type::text, "fast (double) or reference (MPFR)"};
  path.choices = {"fast", "reference"};
  Option output = option::output("labels to write: float64 (N,k,d)");
  output.required = output.sidecar = true;
  return {"forward", "forward", "Evaluate F(X) of an instance on inputs from a .npy file",
          {instance, x, path.with_default(std::string("fast")), option::precision("MPFR bits for --path reference"),
           option::threads("worker threads for the fast path"), output, option::json_flag("print the summary as JSON")},
          run_forward};
}

}  // namespace mha::commands
