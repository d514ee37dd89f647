// demo: the main job. Generates the default instance, samples it, reports its
// conditions, cross-checks the fast forward pass against the MPFR reference,
// and runs stage 1. Later stages extend it to the full learner.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "data/instance_io.hpp"
#include "data/npy.hpp"
#include "data/oracle.hpp"
#include "model/conditions.hpp"
#include "model/forward_error.hpp"
#include "model/forward_reference.hpp"
#include "model/instance_gen.hpp"
#include "numeric/precision.hpp"
#include "stages/stage1_wsum.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

namespace mha::cli {

using nlohmann::json;

Runner add_demo(CLI::App& app) {
  auto* cmd = app.add_subcommand("demo", "The main job on the default instance, with a per-stage report");
  struct Args {
    GenerateOptions gen;
    std::string out = "mhalearn-demo";
    int64_t samples = 1000000, written = 1000, checked = 256;
    uint64_t sample_seed = 1;
    unsigned precision = kDefaultPrecisionBits;
    int threads = default_threads();
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--d", a->gen.d, "token dimension")->capture_default_str()->check(CLI::Range(1, 1024));
  cmd->add_option("--k", a->gen.k, "sequence length")->capture_default_str()->check(CLI::Range(1, 1024));
  cmd->add_option("--m", a->gen.m, "heads")->capture_default_str()->check(CLI::Range(1, 64));
  cmd->add_option("--scale", a->gen.scale, "logit scale ‖Θ_i‖_F")->capture_default_str()->check(CLI::Range(1e-6, 1e6));
  cmd->add_option("--seed", a->gen.seed, "instance seed")->capture_default_str();
  cmd->add_option("--sample-seed", a->sample_seed, "sample seed")->capture_default_str();
  cmd->add_option("--samples", a->samples, "samples for stage 1")->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{1} << 36));
  cmd->add_option("--write-samples", a->written, "samples written to X.npy / Y.npy")->capture_default_str()->check(CLI::Range(int64_t{0}, int64_t{1} << 24));
  cmd->add_option("--cross-check", a->checked, "samples checked fast vs reference")->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--precision", a->precision, "MPFR bits of the reference path")->capture_default_str()->check(CLI::Range(kMinPrecisionBits, kMaxPrecisionBits));
  cmd->add_option("--threads", a->threads, "worker threads (results do not depend on it)")->capture_default_str()->check(CLI::Range(1, 256));
  cmd->add_option("--out", a->out, "output directory")->capture_default_str();
  return [a] {
    const GenerateOptions& g = a->gen;
    if (auto e = validate_generate_options(g); !e.empty()) return fail("demo", kExitBadInput, e);
    std::error_code ec;
    std::filesystem::create_directories(a->out, ec);
    if (ec) return fail("demo", kExitFailedRun, "cannot create " + a->out + ": " + ec.message());
    json report;
    std::printf("mhalearn demo: (d,k,m) = (%d,%d,%d), logit scale %g, instance seed %llu, sample seed %llu, %d threads\n\n",
                g.d, g.k, g.m, g.scale, (unsigned long long)g.seed, (unsigned long long)a->sample_seed, a->threads);

    // 1. Instance.
    GenerateResult gen = generate_instance(g);
    if (!gen.ok) return fail("demo", kExitFailedRun, gen.error);
    Instance& inst = gen.instance;
    json options = {{"d", g.d}, {"k", g.k}, {"m", g.m}, {"scale", g.scale}, {"seed", g.seed}, {"sample_seed", a->sample_seed},
                    {"samples", a->samples}, {"precision", a->precision}};
    json prov = make_provenance("demo", options);
    prov["seed"] = g.seed;
    inst.provenance_json = prov.dump();
    const std::string inst_path = a->out + "/instance.json";
    if (auto e = write_instance(inst_path, inst); !e.empty()) return fail("demo", kExitFailedRun, e);
    std::printf("[instance] wrote %s after %d draw(s)\n\n", inst_path.c_str(), gen.attempts);

    // 2. Conditions.
    std::printf("[conditions] MATH.md §2\n%s\n", format_table(gen.report).c_str());
    report["conditions"] = to_json(gen.report);

    // 3. Samples.
    SampleOracle oracle(inst, a->sample_seed);
    if (a->written > 0) {
      const LabelledBatch b = oracle.draw(0, a->written, a->threads);
      const std::vector<int64_t> shape = {a->written, g.k, g.d};
      std::string err;
      if (inst.inputs == InputKind::boolean) {
        std::vector<int8_t> x(static_cast<size_t>(a->written) * g.k * g.d);
        for (int64_t i = 0; i < a->written; ++i) {
          const MatD s = b.x.sample(i);
          for (int t = 0; t < g.k; ++t)
            for (int j = 0; j < g.d; ++j) x[(i * g.k + t) * g.d + j] = static_cast<int8_t>(s(t, j));
        }
        err = write_npy_int8(a->out + "/X.npy", shape, x.data());
      } else {
        err = write_npy_float64(a->out + "/X.npy", shape, b.x.values.data());
      }
      if (err.empty()) err = write_npy_float64(a->out + "/Y.npy", shape, b.y.data());
      if (!err.empty()) return fail("demo", kExitFailedRun, err);
      std::printf("[samples] wrote %lld samples to %s/X.npy, %s/Y.npy\n\n", (long long)a->written, a->out.c_str(), a->out.c_str());
    }

    // 4. Fast vs reference forward passes, against the derived error bound.
    {
      const LabelledBatch b = oracle.draw(0, a->checked, a->threads);
      const unsigned bits = effective_precision_bits(a->precision);
      const std::vector<double> reference = forward_mpfr_batch(inst.layer, b.x, a->precision);
      double max_diff = 0, max_ratio = 0, max_bound = 0;
      int64_t violations = 0;
      for (int64_t i = 0; i < a->checked; ++i) {
        const MatD x = b.x.sample(i);
        const MatD ref = Eigen::Map<const MatD>(reference.data() + i * g.k * g.d, g.k, g.d);
        const MatD fast = Eigen::Map<const MatD>(b.y.data() + i * g.k * g.d, g.k, g.d);
        // Rounding the reference to double adds at most half an ulp of it.
        const MatD bound = forward_error_bound(inst.layer, x) + ref.cwiseAbs() * 0x1p-53;
        const MatD diff = (fast - ref).cwiseAbs();
        for (Eigen::Index e = 0; e < diff.size(); ++e) {
          max_diff = std::max(max_diff, diff.data()[e]);
          max_bound = std::max(max_bound, bound.data()[e]);
          max_ratio = std::max(max_ratio, diff.data()[e] / bound.data()[e]);
          violations += diff.data()[e] > bound.data()[e];
        }
      }
      std::printf("[cross-check] fast (double) vs reference (MPFR, %u bits) on %lld samples:\n"
                  "  max |fast - ref| = %.3e, max bound = %.3e, max ratio |diff|/bound = %.3f, entries over bound: %lld\n\n",
                  bits, (long long)a->checked, max_diff, max_bound, max_ratio, (long long)violations);
      report["cross_check"] = {{"samples", a->checked}, {"precision_bits", bits}, {"max_abs_diff", max_diff},
                               {"max_bound", max_bound}, {"max_ratio", max_ratio}, {"violations", violations}};
      if (violations > 0) return fail("demo", kExitFailedRun, "fast and reference forward passes disagree beyond the derived bound");
    }

    // 5. Stage 1: crude estimate of W_Σ.
    Stage1Result s1 = stage1_estimate_wsum(oracle, {a->samples, a->threads});
    const MatD w_sum = inst.layer.w_sum();
    const double rel_err = (s1.w_hat - w_sum).norm() / w_sum.norm();
    const double rel_se = s1.standard_error.norm() / w_sum.norm();
    std::printf("[stage 1] Ŵ = (1/(kN)) Σ_n X_nᵀ J Y_n from N = %lld samples in %.2f s (%.2e samples/s)\n"
                "  ‖Ŵ − W_Σ‖_F / ‖W_Σ‖_F = %.4f   (sampling noise ‖SE‖_F / ‖W_Σ‖_F = %.4f;\n"
                "  the rest is the bias Σ_i (M(Θ_i) − I) W_i of the W-sum lemma)\n\n",
                (long long)s1.samples, s1.seconds, s1.samples / s1.seconds, rel_err, rel_se);
    report["stages"] = json::array({{{"name", "stage1_wsum"}, {"samples", s1.samples}, {"seconds", s1.seconds},
                                     {"w_sum_rel_error", rel_err}, {"standard_error_rel", rel_se}}});
    report["provenance"] = prov;
    const std::string report_path = a->out + "/report.json";
    if (auto e = write_json_atomically(report_path, report); !e.empty()) return fail("demo", kExitFailedRun, e);
    std::printf("[report] wrote %s\n", report_path.c_str());
    return kExitOk;
  };
}

}  // namespace mha::cli
