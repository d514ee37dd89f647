// sample, forward: datasets as .npy (X int8 or float64 (N,k,d), Y float64 (N,k,d)).
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "data/instance_io.hpp"
#include "data/npy.hpp"
#include "data/oracle.hpp"
#include "model/forward_reference.hpp"
#include "numeric/precision.hpp"

#include <chrono>
#include <cmath>
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
}  // namespace

Runner add_sample(CLI::App& app) {
  auto* cmd = app.add_subcommand("sample", "Draw N labelled samples (X, F(X)) of an instance into .npy files");
  struct Args { std::string inst, x, y; int64_t n = 0; uint64_t seed = 1; int threads = default_threads(); bool json = false; };
  auto a = std::make_shared<Args>();
  cmd->add_option("instance", a->inst, "instance file (JSON)")->required();
  cmd->add_option("--n", a->n, "number of samples")->required()->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_option("--seed", a->seed, "sample seed: sample n is a function of (seed, n)")->capture_default_str();
  cmd->add_option("--threads", a->threads, "worker threads (results do not depend on it)")->capture_default_str()->check(CLI::Range(1, 256));
  cmd->add_option("--x", a->x, "inputs to write: int8 (N,k,d) for Boolean, float64 for Gaussian")->required();
  cmd->add_option("--y", a->y, "labels to write: float64 (N,k,d)")->required();
  cmd->add_flag("--json", a->json, "print the summary as JSON");
  return [a] {
    InstanceReadResult r = read_instance(a->inst);
    if (!r.ok) return fail("sample", kExitBadInput, r.error);
    const Instance& inst = r.instance;
    if (auto e = oracle_problem(inst); !e.empty()) return fail("sample", kExitFastPathOverflow, a->inst + ": " + e);
    const int k = inst.k, d = inst.d();
    const double bytes = double(a->n) * k * d * (inst.inputs == InputKind::boolean ? 9.0 : 16.0);
    if (bytes > kMaxDatasetBytes)
      return fail("sample", kExitBadInput, "--n " + std::to_string(a->n) + " needs " + std::to_string(bytes / 1e9) +
                  " GB for X and Y, more than the 8 GiB limit");
    const auto t0 = std::chrono::steady_clock::now();
    SampleOracle oracle(inst, a->seed);
    const LabelledBatch batch = oracle.draw(0, a->n, a->threads);
    const std::vector<int64_t> shape = {a->n, k, d};
    std::string err;
    if (inst.inputs == InputKind::boolean) {
      std::vector<int8_t> x(static_cast<size_t>(a->n) * k * d);
      for (int64_t i = 0; i < a->n; ++i) {
        const MatD s = batch.x.sample(i);
        for (int t = 0; t < k; ++t)
          for (int j = 0; j < d; ++j) x[(i * k + t) * d + j] = static_cast<int8_t>(s(t, j));
      }
      err = write_npy_int8(a->x, shape, x.data());
    } else {
      err = write_npy_float64(a->x, shape, batch.x.values.data());
    }
    if (err.empty()) err = write_npy_float64(a->y, shape, batch.y.data());
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

Runner add_forward(CLI::App& app) {
  auto* cmd = app.add_subcommand("forward", "Evaluate F(X) of an instance on inputs from a .npy file");
  struct Args { std::string inst, x, out, path = "fast"; unsigned precision = kDefaultPrecisionBits; int threads = default_threads(); bool json = false; };
  auto a = std::make_shared<Args>();
  cmd->add_option("instance", a->inst, "instance file (JSON)")->required();
  cmd->add_option("--x", a->x, "inputs: int8 ±1 or float64, shape (N,k,d)")->required();
  cmd->add_option("--path", a->path, "fast (double) or reference (MPFR)")->capture_default_str()->check(CLI::IsMember({"fast", "reference"}));
  cmd->add_option("--precision", a->precision, "MPFR bits for --path reference")->capture_default_str()
      ->check(CLI::Range(kMinPrecisionBits, kMaxPrecisionBits));
  cmd->add_option("--threads", a->threads, "worker threads for the fast path")->capture_default_str()->check(CLI::Range(1, 256));
  cmd->add_option("-o,--output", a->out, "labels to write: float64 (N,k,d)")->required();
  cmd->add_flag("--json", a->json, "print the summary as JSON");
  return [a] {
    InstanceReadResult r = read_instance(a->inst);
    if (!r.ok) return fail("forward", kExitBadInput, r.error);
    const Instance& inst = r.instance;
    NpyResult xr = read_npy(a->x);
    if (!xr.ok) return fail("forward", kExitBadInput, xr.error);
    if (auto e = check_inputs_array(xr.array, inst.d()); !e.empty()) return fail("forward", kExitBadInput, a->x + ": " + e);
    const int64_t n = xr.array.shape[0];
    const int k = static_cast<int>(xr.array.shape[1]), d = inst.d();
    InputBatch batch = xr.array.dtype == NpyDtype::int8 ? boolean_batch_from_values(xr.array.i8, n, k, d)
                                                        : dense_batch_from_values(xr.array.f64, n, k, d);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<double> y(static_cast<size_t>(n) * k * d);
    if (a->path == "fast") {
      const FastForwardStatus status = FastForward(inst.layer).run(batch, y.data(), a->threads);
      if (!status.ok())
        return fail("forward", kExitFastPathOverflow, a->x + ": " + status.message() + "; use --path reference");
    } else {
      y = forward_mpfr_batch(inst.layer, batch, a->precision);
    }
    const double secs = seconds_since(t0);
    json options = {{"instance", a->inst}, {"x", a->x}, {"path", a->path}, {"precision", a->precision}};
    if (auto e = write_npy_float64(a->out, {n, k, d}, y.data()); !e.empty()) return fail("forward", kExitFailedRun, e);
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
