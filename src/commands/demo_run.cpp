#include "commands/demo_run.hpp"

#include "commands/fault_switch.hpp"
#include "commands/stage_lines.hpp"
#include "data/instance_io.hpp"
#include "data/npy.hpp"
#include "data/oracle.hpp"
#include "model/conditions.hpp"
#include "model/forward_check.hpp"
#include "learn/learner.hpp"
#include "learn/report.hpp"
#include "numeric/comparison.hpp"
#include "util/format.hpp"
#include "util/progress.hpp"
#include "util/resources.hpp"

#include <filesystem>

namespace mha::commands {

using nlohmann::json;

const std::set<std::string>& demo_excluded_learn_flags() {
  static const std::set<std::string> flags = {"--method", "--oracle", "--checkpoint", "--resume", "--validation-samples"};
  return flags;
}

namespace {

// A demo that stopped: its exit status and one line (and the learner's report if it ran).
DemoRun stopped(int status, std::string error, std::optional<LearnReport> learned = std::nullopt) {
  DemoRun run;
  run.status = status;
  run.error = std::move(error);
  run.learned = std::move(learned);
  return run;
}

json demo_provenance(const DemoArgs& a, const Context& ctx) {
  const GenerateOptions& g = a.gen;
  json options = {{"d", g.d}, {"k", g.k}, {"m", g.m}, {"scale", g.scale}, {"seed", g.seed}, {"sample_seed", a.sample_seed},
                  {"stage1_samples", a.learn.paper.stage1_samples}, {"rounds", a.learn.paper.max_rounds},
                  {"sculpt_samples", a.learn.paper.sculpt.sculpt.max_samples},
                  {"margin_samples", a.learn.paper.margin.max_samples}, {"polish", !a.learn.no_polish},
                  {"reference", !a.learn.no_reference}};
  json prov = ctx.provenance("demo", options);
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

// 5. The learner, end to end, each stage's line as the stage ends; the learned layer written when it succeeded.
DemoRun demo_learn(const DemoArgs& a, const SampleOracle& oracle, const Instance& inst, const json& prov,
                   const Context& ctx, json& report) {
  LearnOptions lo = paper_options(a.learn, a.given, a.gen.m, a.sample_seed);
  ctx.print(format("[learn] stages 1–6 of MATH.md §3%s; the truth is used only for the errors below\n\n",
                   lo.polish ? ", then polishing (reported separately)" : ""));
  StageLines lines(ctx, lo.variant);
  lo.at_safe_point = [&lines](const LearnState& state) {
    lines.update(state.report);
    check_interrupt();  // Python's Ctrl-C
    return true;
  };
  LearnResult learned = learn_layer(oracle, lo, &inst);
  lines.finish(learned.report, "\n");
  report["learn"] = to_json(learned.report);
  DemoRun run;
  run.learned = std::move(learned.report);
  if (!run.learned->ok) {
    run.status = kExitFailedRun;
    run.error = run.learned->message;
    return run;
  }
  Instance out;
  out.layer = learned.layer;
  out.k = inst.k;
  out.inputs = inst.inputs;
  out.provenance_json = prov.dump();
  const std::string learned_path = a.out + "/learned.json";
  if (auto e = write_instance(learned_path, out); !e.empty()) return stopped(kExitFailedRun, e, std::move(run.learned));
  ctx.print("[learn] wrote " + learned_path + "\n");
  return run;
}

// 1–2. The instance, written, and its conditions.
DemoRun demo_instance(const DemoArgs& a, const json& prov, const Context& ctx, Instance& inst, json& report) {
  GenerateResult gen = generate_instance(a.gen);
  if (!gen.ok) return stopped(kExitFailedRun, gen.error);
  inst = std::move(gen.instance);
  inst.provenance_json = prov.dump();
  const std::string inst_path = a.out + "/instance.json";
  if (auto e = write_instance(inst_path, inst); !e.empty()) return stopped(kExitFailedRun, e);
  ctx.print(format("[instance] wrote %s after %d draw(s)\n\n", inst_path.c_str(), gen.attempts));
  ctx.print("[conditions] MATH.md §2\n" + format_table(gen.report) + "\n");
  report["conditions"] = to_json(gen.report);
  return {};
}

// 3–4. Samples written, and the fast forward pass against the MPFR reference
// within the derived bound (the row `mhalearn verify forward` prints).
DemoRun demo_samples_and_cross_check(const DemoArgs& a, const Instance& inst, const SampleOracle& oracle,
                                     const Context& ctx, json& report) {
  if (a.written > 0) {
    if (auto e = write_demo_samples(a, inst, oracle); !e.empty()) return stopped(kExitFailedRun, e);
    ctx.print(format("[samples] wrote %lld samples to %s/X.npy, %s/Y.npy\n\n", (long long)a.written, a.out.c_str(),
                 a.out.c_str()));
  }
  const Comparison row = check_forward(inst.layer, oracle.draw(0, a.checked, a.learn.paper.threads).x,
                                       a.learn.paper.fast.forward);
  ctx.print(format("[cross-check] fast (double) vs reference (MPFR) forward pass on %lld samples:\n", (long long)a.checked) +
        format_table({row}) + "\n");
  report["cross_check"] = to_json(row);
  if (disagrees(row)) return stopped(kExitDisagreement, "fast and reference forward passes disagree beyond the derived bound");
  return {};
}

}  // namespace

DemoRun run_demo_command(DemoArgs a, const Context& ctx) {
  const GenerateOptions& g = a.gen;
  if (auto e = validate_generate_options(g); !e.empty()) return stopped(kExitBadInput, e);
  if (auto e = learn_fast_paths(a.learn.paper); !e.empty()) return stopped(kExitBadInput, e);
  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (ec) return stopped(kExitFailedRun, "cannot create " + a.out + ": " + ec.message());
  ctx.print(format("mhalearn demo: (d,k,m) = (%d,%d,%d), logit scale %g, instance seed %llu, sample seed %llu, %d threads\n\n",
               g.d, g.k, g.m, g.scale, (unsigned long long)g.seed, (unsigned long long)a.sample_seed,
               a.learn.paper.threads));
  json report;
  const json prov = demo_provenance(a, ctx);
  Instance inst;
  if (DemoRun r = demo_instance(a, prov, ctx, inst, report); r.status != kExitOk) return r;
  if (auto e = oracle_problem(inst); !e.empty()) return stopped(kExitFastPathOverflow, e);
  const SampleOracle oracle(inst, a.sample_seed);
  if (DemoRun r = demo_samples_and_cross_check(a, inst, oracle, ctx, report); r.status != kExitOk) return r;
  DemoRun run = demo_learn(a, oracle, inst, prov, ctx, report);
  if (run.status != kExitOk && run.learned->ok) return run;  // learned, but learned.json could not be written
  report["provenance"] = prov;
  report["provenance"]["resources"] = process_resources();  // what the run cost the machine
  const std::string report_path = a.out + "/report.json";
  if (auto e = write_json_atomically(report_path, report); !e.empty()) return stopped(kExitFailedRun, e, std::move(run.learned));
  ctx.print("[report] wrote " + report_path + "\n");
  run.report = std::move(report);
  return run;
}

}  // namespace mha::commands
