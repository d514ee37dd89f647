// demo: the main job. Generates the default instance, samples it, reports its
// conditions, cross-checks the fast forward pass against the MPFR reference,
// and learns the instance end to end (stages 1–6, then polishing) with the
// per-stage report.
#include "cli/commands.hpp"
#include "cli/learn_settings.hpp"
#include "cli/common.hpp"
#include "cli/fault_switch.hpp"
#include "data/instance_io.hpp"
#include "data/npy.hpp"
#include "data/oracle.hpp"
#include "model/conditions.hpp"
#include "model/forward_check.hpp"
#include "model/instance_gen.hpp"
#include "learn/learner.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

namespace mha::cli {

using nlohmann::json;

namespace {

// What `demo` was asked.
struct DemoArgs {
  GenerateOptions gen;
  std::string out = "mhalearn-demo";
  int64_t written = 1000, checked = 256;
  LearnSettings learn;           // the learner's options, from learn's table
  std::set<std::string> given;  // the table's flags given
  uint64_t sample_seed = 1;
};

void add_demo_options(CLI::App* cmd, DemoArgs& a) {
  cmd->add_option("--d", a.gen.d, "token dimension")->capture_default_str();
  cmd->add_option("--k", a.gen.k, "sequence length")->capture_default_str();
  cmd->add_option("--m", a.gen.m, "heads")->capture_default_str();
  cmd->add_option("--scale", a.gen.scale, "logit scale ‖Θ_i‖_F")->capture_default_str();
  cmd->add_option("--seed", a.gen.seed, "instance seed")->capture_default_str();
  cmd->add_option("--sample-seed", a.sample_seed, "sample seed")->capture_default_str();
  cmd->add_option("--write-samples", a.written, "samples written to X.npy / Y.npy")->capture_default_str();
  cmd->add_option("--cross-check", a.checked, "samples checked fast vs reference")->capture_default_str();
  cmd->add_option("--out", a.out, "output directory")->capture_default_str();
  // The learner's budgets and switches; the samples and method are demo's own.
  add_learn_table_options(cmd, a.learn, kMethodPaper,
                          {"--method", "--oracle", "--checkpoint", "--resume", "--validation-samples"});
}

json demo_provenance(const DemoArgs& a) {
  const GenerateOptions& g = a.gen;
  json options = {{"d", g.d}, {"k", g.k}, {"m", g.m}, {"scale", g.scale}, {"seed", g.seed}, {"sample_seed", a.sample_seed},
                  {"stage1_samples", a.learn.paper.stage1_samples}, {"rounds", a.learn.paper.max_rounds},
                  {"sculpt_samples", a.learn.paper.sculpt.sculpt.max_samples},
                  {"margin_samples", a.learn.paper.margin.max_samples}, {"polish", !a.learn.no_polish},
                  {"reference", !a.learn.no_reference}};
  json prov = make_provenance("demo", options);
  prov["seed"] = g.seed;
  return prov;
}

// The first --write-samples samples as X.npy (int8 ±1 for Boolean inputs,
// float64 otherwise) and Y.npy: "" or the first error.
std::string write_demo_samples(const DemoArgs& a, const Instance& inst, const SampleOracle& oracle) {
  const GenerateOptions& g = a.gen;
  const LabelledBatch b = oracle.draw(0, a.written, a.learn.paper.threads);
  const std::vector<int64_t> shape = {a.written, g.k, g.d};
  std::string err;
  if (inst.inputs == InputKind::boolean) {
    std::vector<int8_t> x(static_cast<size_t>(a.written) * g.k * g.d);
    for (int64_t i = 0; i < a.written; ++i) {
      const MatD s = b.x.sample(i);
      for (int t = 0; t < g.k; ++t)
        for (int j = 0; j < g.d; ++j) x[(i * g.k + t) * g.d + j] = static_cast<int8_t>(s(t, j));
    }
    err = write_npy_int8(a.out + "/X.npy", shape, x.data());
  } else {
    err = write_npy_float64(a.out + "/X.npy", shape, b.x.values.data());
  }
  if (err.empty()) err = write_npy_float64(a.out + "/Y.npy", shape, b.y.data());
  return err;
}

// 5. The learner, end to end; the learned layer written when it succeeded.
// Returns the learner's result, or the exit status of a failed write in `status`.
LearnResult demo_learn(const DemoArgs& a, const SampleOracle& oracle, const Instance& inst, const json& prov,
                       json& report, int& status) {
  const LearnOptions lo = paper_options(a.learn, a.given, a.gen.m, a.sample_seed);
  std::printf("[learn] stages 1–6 of MATH.md §3%s; the truth is used only for the errors below\n\n",
              lo.polish ? ", then polishing (reported separately)" : "");
  LearnResult learned = learn_layer(oracle, lo, &inst);
  std::printf("%s\n", format_table(learned.report).c_str());
  report["learn"] = to_json(learned.report);
  status = kExitOk;
  if (learned.report.ok) {
    Instance out;
    out.layer = learned.layer;
    out.k = inst.k;
    out.inputs = inst.inputs;
    out.provenance_json = prov.dump();
    const std::string learned_path = a.out + "/learned.json";
    if (auto e = write_instance(learned_path, out); !e.empty()) status = fail("demo", kExitFailedRun, e);
    else std::printf("[learn] wrote %s\n", learned_path.c_str());
  }
  return learned;
}

int run_demo(DemoArgs& a) {
  const GenerateOptions& g = a.gen;
  if (auto e = validate_generate_options(g); !e.empty()) return fail("demo", kExitBadInput, e);
  if (auto e = learn_fast_paths(a.learn.paper); !e.empty()) return fail("demo", kExitBadInput, e);
  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (ec) return fail("demo", kExitFailedRun, "cannot create " + a.out + ": " + ec.message());
  json report;
  std::printf("mhalearn demo: (d,k,m) = (%d,%d,%d), logit scale %g, instance seed %llu, sample seed %llu, %d threads\n\n",
              g.d, g.k, g.m, g.scale, (unsigned long long)g.seed, (unsigned long long)a.sample_seed, a.learn.paper.threads);

  // 1. Instance.
  GenerateResult gen = generate_instance(g);
  if (!gen.ok) return fail("demo", kExitFailedRun, gen.error);
  Instance& inst = gen.instance;
  const json prov = demo_provenance(a);
  inst.provenance_json = prov.dump();
  const std::string inst_path = a.out + "/instance.json";
  if (auto e = write_instance(inst_path, inst); !e.empty()) return fail("demo", kExitFailedRun, e);
  std::printf("[instance] wrote %s after %d draw(s)\n\n", inst_path.c_str(), gen.attempts);

  // 2. Conditions.
  std::printf("[conditions] MATH.md §2\n%s\n", format_table(gen.report).c_str());
  report["conditions"] = to_json(gen.report);

  // 3. Samples.
  if (auto e = oracle_problem(inst); !e.empty()) return fail("demo", kExitFastPathOverflow, e);
  SampleOracle oracle(inst, a.sample_seed);
  if (a.written > 0) {
    if (auto e = write_demo_samples(a, inst, oracle); !e.empty()) return fail("demo", kExitFailedRun, e);
    std::printf("[samples] wrote %lld samples to %s/X.npy, %s/Y.npy\n\n", (long long)a.written, a.out.c_str(), a.out.c_str());
  }

  // 4. Fast vs reference forward passes, against the derived error bound
  //    (model/forward_check.hpp: the row `mhalearn verify forward` prints).
  const Comparison row = check_forward(inst.layer, oracle.draw(0, a.checked, a.learn.paper.threads).x, a.learn.paper.fast.forward);
  std::printf("[cross-check] fast (double) vs reference (MPFR) forward pass on %lld samples:\n%s\n",
              (long long)a.checked, format_table({row}).c_str());
  report["cross_check"] = to_json(row);
  if (disagrees(row)) return fail("demo", kExitDisagreement, "fast and reference forward passes disagree beyond the derived bound");

  // 5. The learner, end to end.
  int status = kExitOk;
  const LearnResult learned = demo_learn(a, oracle, inst, prov, report, status);
  if (status != kExitOk) return status;
  report["provenance"] = prov;
  const std::string report_path = a.out + "/report.json";
  if (auto e = write_json_atomically(report_path, report); !e.empty()) return fail("demo", kExitFailedRun, e);
  std::printf("[report] wrote %s\n", report_path.c_str());
  if (!learned.report.ok) return fail("demo", kExitFailedRun, learned.report.message);
  return learner_exit_status("demo", learned.report);
}

}  // namespace

Runner add_demo(CLI::App& app) {
  auto* cmd = app.add_subcommand("demo", "The main job on the default instance, with a per-stage report");
  auto a = std::make_shared<DemoArgs>();
  add_demo_options(cmd, *a);
  return [a, cmd] {
    a->given = given_learn_flags(*cmd);
    if (auto e = learn_settings_problem(a->learn, a->given, true, Spelling::cli); !e.empty())
      return fail("demo", kExitBadInput, e);
    return run_demo(*a);
  };
}

}  // namespace mha::cli
