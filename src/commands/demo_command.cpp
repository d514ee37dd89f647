// demo: the main job. Generates the default instance, samples it, reports its
// conditions, cross-checks the fast forward pass against the MPFR reference,
// and learns the instance end to end (stages 1–6, then polishing) with the
// per-stage report. The work is demo_run.hpp's.
#include "commands/declarations.hpp"
#include "commands/demo_run.hpp"
#include "commands/stage_lines.hpp"
#include "commands/status.hpp"

namespace mha::commands {

namespace {

Result run_demo(Arguments& a, Context& ctx) {
  DemoArgs d;
  d.gen.d = static_cast<int>(a.integer("d"));
  d.gen.k = static_cast<int>(a.integer("k"));
  d.gen.m = static_cast<int>(a.integer("m"));
  d.gen.scale = a.number("scale");
  d.gen.seed = a.seed("seed");
  d.sample_seed = a.seed("sample-seed");
  d.written = a.integer("write-samples");
  d.checked = a.integer("cross-check");
  d.out = a.text("out");
  d.learn = learn_settings_from(a);
  d.given = given_learn_flags(a);
  Result r;
  if (auto e = learn_settings_problem(d.learn, d.given, true, a.spelling); !e.empty()) return r.failed(kExitBadInput, e);
  DemoRun run = run_demo_command(d, ctx);
  if (!run.report.is_null()) r.value = run.report;
  if (run.status != kExitOk) return r.failed(run.status, run.error);
  learner_verdict(*run.learned, r);
  return r;
}

Option integer_option(const char* name, const char* help, Range r, int64_t fallback) {
  Option o{name, Type::integer, help};
  o.range = r;
  return o.with_default(fallback);
}

}  // namespace

Command demo_command() {
  const DemoArgs defaults;
  Option out{"out", Type::text, "output directory", Role::folder_out};
  out.python_position = 0;
  Option sample_seed = option::seed("sample seed");
  sample_seed.name = "sample-seed";
  std::vector<Option> options = {
      option::d("token dimension").with_default(int64_t{defaults.gen.d}),
      option::k("sequence length").with_default(int64_t{defaults.gen.k}),
      option::m("heads").with_default(int64_t{defaults.gen.m}),
      option::scale("logit scale ‖Θ_i‖_F").with_default(defaults.gen.scale),
      option::seed("instance seed"), sample_seed,
      integer_option("write-samples", "samples written to X.npy / Y.npy", range(0, two_to(24)), defaults.written),
      integer_option("cross-check", "samples checked fast vs reference", range(1, two_to(20)), defaults.checked),
      out.with_default(defaults.out)};
  // The learner's budgets and switches; the samples and the method are demo's own.
  for (Option& o : learn_table_options(kMethodPaper, demo_excluded_learn_flags())) options.push_back(o);
  options.push_back({"verbose", Type::flag, "also print the learner's diagnostics (statistical outcomes, in its report) "
                                            "on stderr", Role::printing});
  return {"demo", "demo", "The main job on the default instance, with a per-stage report", options, run_demo};
}

}  // namespace mha::commands
