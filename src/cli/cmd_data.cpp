// sample, forward: datasets as .npy (X int8 or float64 (N,k,d), Y float64 (N,k,d)),
// read and written block by block, so that memory does not grow with N.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/file_kinds.hpp"
#include "data/atomic_file.hpp"
#include "data/instance_io.hpp"
#include "data/npy.hpp"
#include "data/oracle.hpp"
#include "model/forward_reference.hpp"
#include "numeric/precision.hpp"
#include "util/progress.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

namespace mha::cli {

using nlohmann::json;

namespace {
// .npy has no room for metadata numpy accepts, so provenance goes beside it.
std::string write_sidecar(const std::string& npy_path, const json& provenance) {
  return write_json_atomically(npy_path + ".json", provenance);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// sample and forward hold one block of samples at a time: as many as have
// kBlockLabelBytes of labels (float64 (count, k, d)), at least one. Their
// outputs do not depend on it (sample n is a function of (seed, n); forward
// is per sample).
constexpr int64_t kBlockLabelBytes = int64_t{16} << 20;
int64_t block_samples(int k, int d) { return std::max<int64_t>(1, kBlockLabelBytes / (int64_t{8} * k * d)); }

// "" when `bytes` more fit on the file system of each path, else one line.
// Files on one file system (the same free count) need their sum. Best effort:
// a file system that cannot be asked is not refused, and a later write error
// is still reported (and leaves no file).
std::string space_problem(const std::string& what, const std::vector<std::pair<std::string, double>>& files) {
  std::vector<std::pair<int64_t, double>> need;  // free bytes, bytes needed
  for (const auto& [path, bytes] : files) {
    const int64_t free = free_bytes_for(path);
    if (free < 0) continue;
    auto it = std::find_if(need.begin(), need.end(), [&](const auto& n) { return n.first == free; });
    if (it == need.end()) need.emplace_back(free, bytes);
    else it->second += bytes;
  }
  for (const auto& [free, bytes] : need)
    if (bytes > double(free)) {
      char text[160];
      std::snprintf(text, sizeof text, " needs %.1f GB, more than the %.1f GB free on its file system", bytes / 1e9,
                    double(free) / 1e9);
      return what + text;
    }
  return "";
}

// Sample i of a Boolean batch as int8 ±1 (C order, k·d values).
void unpack_pm1(const InputBatch& x, int64_t i, int8_t* out) {
  const uint64_t* w = x.sample_bits(i);
  const int wpt = words_per_token(x.d);
  for (int t = 0; t < x.k; ++t)
    for (int j = 0; j < x.d; ++j) out[t * x.d + j] = ((w[t * wpt + j / 64] >> (j % 64)) & 1u) ? 1 : -1;
}

// Writes samples 0..n−1 of the oracle to the two files block by block.
std::string write_samples(const SampleOracle& oracle, int64_t n, int threads, NpyWriter& xw, NpyWriter& yw) {
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
  // Both flushed before either is renamed: a failed flush leaves neither.
  if (auto e = xw.finish(); !e.empty()) return e;
  if (auto e = yw.finish(); !e.empty()) return e;
  if (auto e = xw.publish(); !e.empty()) return e;
  return yw.publish();
}
}  // namespace

Runner add_sample(CLI::App& app) {
  auto* cmd = app.add_subcommand("sample", "Draw N labelled samples (X, F(X)) of an instance into .npy files");
  struct Args { std::string inst, x, y; int64_t n = 0; uint64_t seed = 1; int threads = default_threads(); bool json = false; };
  auto a = std::make_shared<Args>();
  cmd->add_option("instance", a->inst, "instance file (JSON)")->required();
  cmd->add_option("--n", a->n, "number of samples (written in blocks: memory does not grow with N)")->required();
  cmd->add_option("--seed", a->seed, "sample seed: sample n is a function of (seed, n)")->capture_default_str();
  add_threads_option(cmd, a->threads, "worker threads (results do not depend on it)");
  cmd->add_option("--x", a->x, "inputs to write: int8 (N,k,d) for Boolean, float64 for Gaussian")->required();
  cmd->add_option("--y", a->y, "labels to write: float64 (N,k,d)")->required();
  cmd->add_flag("--json", a->json, "print the summary as JSON");
  return [a] {
    InstanceReadResult r = read_instance(a->inst);
    if (!r.ok) return fail("sample", kExitBadInput, r.error);
    const Instance& inst = r.instance;
    if (auto e = oracle_problem(inst); !e.empty()) return fail("sample", kExitFastPathOverflow, a->inst + ": " + e);
    const int k = inst.k, d = inst.d();
    const bool boolean = inst.inputs == InputKind::boolean;
    const double values = double(a->n) * k * d;
    if (auto e = space_problem("--n " + std::to_string(a->n) + " (X and Y together)",
                               {{a->x, values * (boolean ? 1.0 : 8.0)}, {a->y, values * 8.0}});
        !e.empty())
      return fail("sample", kExitBadInput, e);
    const auto t0 = std::chrono::steady_clock::now();
    SampleOracle oracle(inst, a->seed);
    const std::vector<int64_t> shape = {a->n, k, d};
    NpyWriter xw(a->x, shape, boolean ? NpyDtype::int8 : NpyDtype::float64), yw(a->y, shape, NpyDtype::float64);
    std::string err = write_samples(oracle, a->n, a->threads, xw, yw);
    json options = {{"instance", a->inst}, {"n", a->n}, {"seed", a->seed}};
    json prov = make_provenance("sample", options);
    prov["seed"] = a->seed;
    prov["instance_provenance"] = json::parse(inst.provenance_json);
    if (err.empty()) err = write_sidecar(a->x, prov);
    if (err.empty()) err = write_sidecar(a->y, prov);
    if (!err.empty()) return fail("sample", kExitFailedRun, err);
    const double secs = seconds_since(t0);
    if (a->json)
      std::cout << json{{"x", a->x}, {"y", a->y}, {"n", a->n}, {"seed", a->seed}, {"seconds", secs}}.dump(2) << "\n";
    else
      std::cout << "wrote " << a->n << " samples to " << a->x << ", " << a->y << " (seed " << a->seed << ", "
                << secs << " s)\n";
    return kExitOk;
  };
}

namespace {
// Inputs first .. first+count−1 of X.npy as a batch, checked as check_inputs_array does; throws DatasetError.
InputBatch read_inputs(const NpyReader& x, int64_t first, int64_t count, int d) {
  const int k = static_cast<int>(x.header().shape[1]);
  const int64_t per = int64_t{k} * d;
  auto check = [&](const std::string& e) {
    if (!e.empty()) throw DatasetError(x.name() + ": " + e);
  };
  if (x.header().dtype == NpyDtype::int8) {
    std::vector<int8_t> v(static_cast<size_t>(count * per));
    if (auto e = x.read_int8(first * per, count * per, v.data()); !e.empty()) throw DatasetError(e);
    check(check_inputs_block(v.data(), count * per, first * per));
    return boolean_batch_from_values(v, count, k, d);
  }
  std::vector<double> v(static_cast<size_t>(count * per));
  if (auto e = x.read_float64(first * per, count * per, v.data()); !e.empty()) throw DatasetError(e);
  check(check_inputs_block(v.data(), count * per, first * per));
  return dense_batch_from_values(std::move(v), count, k, d);
}
}  // namespace

Runner add_forward(CLI::App& app) {
  auto* cmd = app.add_subcommand("forward", "Evaluate F(X) of an instance on inputs from a .npy file");
  struct Args { std::string inst, x, out, path = "fast"; unsigned precision = kDefaultPrecisionBits; int threads = default_threads(); bool json = false; };
  auto a = std::make_shared<Args>();
  cmd->add_option("instance", a->inst, "instance file (JSON)")->required();
  cmd->add_option("--x", a->x, std::string("read in blocks; ") + kInputsContract + "; " + kForwardLengthContract)->required();
  cmd->add_option("--path", a->path, "fast (double) or reference (MPFR)")->capture_default_str()->check(CLI::IsMember({"fast", "reference"}));
  cmd->add_option("--precision", a->precision, "MPFR bits for --path reference")->capture_default_str();
  add_threads_option(cmd, a->threads, "worker threads for the fast path");
  cmd->add_option("-o,--output", a->out, "labels to write: float64 (N,k,d)")->required();
  cmd->add_flag("--json", a->json, "print the summary as JSON");
  return [a, cmd] {
    if (cmd->count("--precision") && a->path != "reference")
      return fail("forward", kExitBadInput, "--precision applies to --path reference (the fast path is double)");
    InstanceReadResult r = read_instance(a->inst);
    if (!r.ok) return fail("forward", kExitBadInput, r.error);
    const Instance& inst = r.instance;
    NpyReader::Open xr = NpyReader::open(a->x);
    if (!xr.reader) return fail("forward", kExitBadInput, xr.error);
    const NpyReader& x = *xr.reader;
    const NpyHeader& h = x.header();
    if (auto e = check_inputs_shape(h.shape, inst.d()); !e.empty()) return fail("forward", kExitBadInput, a->x + ": " + e);
    const int64_t n = h.shape[0];
    const int k = static_cast<int>(h.shape[1]), d = inst.d();
    if (auto e = space_problem(a->out, {{a->out, double(n) * k * d * 8.0}}); !e.empty())
      return fail("forward", kExitBadInput, e);
    const auto t0 = std::chrono::steady_clock::now();
    NpyWriter out(a->out, {n, k, d}, NpyDtype::float64);
    const FastForward fast(inst.layer);
    const int64_t block = block_samples(k, d);
    std::vector<double> y;
    Progress progress(std::string("forward (") + a->path + " path)", n);
    for (int64_t first = 0; first < n; first += block) {
      progress.update(first);
      const InputBatch batch = read_inputs(x, first, std::min(block, n - first), d);
      if (a->path == "fast") {
        y.resize(static_cast<size_t>(batch.count) * k * d);
        FastForwardStatus status = fast.run(batch, y.data(), a->threads);
        if (!status.ok()) {
          status.first_unanswered += first;  // the sample's index in the file
          return fail("forward", kExitFastPathOverflow, a->x + ": " + status.message() + "; use --path reference");
        }
      } else {
        y = forward_mpfr_batch(inst.layer, batch, a->precision);
      }
      if (auto e = out.append_float64(y.data(), static_cast<int64_t>(y.size())); !e.empty())
        return fail("forward", kExitFailedRun, e);
    }
    const double secs = seconds_since(t0);
    json options = {{"instance", a->inst}, {"x", a->x}, {"path", a->path}, {"precision", a->precision}};
    if (auto e = out.commit(); !e.empty()) return fail("forward", kExitFailedRun, e);
    if (auto e = write_sidecar(a->out, make_provenance("forward", options)); !e.empty()) return fail("forward", kExitFailedRun, e);
    if (a->json)
      std::cout << json{{"output", a->out}, {"n", n}, {"path", a->path}, {"seconds", secs}}.dump(2) << "\n";
    else
      std::cout << "wrote " << a->out << ": " << n << " outputs on the " << a->path << " path"
                << (a->path == "reference" ? " (" + std::to_string(a->precision) + " bits)" : "") << ", " << secs << " s\n";
    return kExitOk;
  };
}

}  // namespace mha::cli
