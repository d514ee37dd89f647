// stage1, sculpt: the first two stages of the learner on an instance (streaming
// oracle) or on a dataset, with sample and time budgets. The work is
// stage_runs.hpp's; here are the declarations and what the files receive.
#include "commands/declarations.hpp"
#include "commands/input.hpp"
#include "commands/stage_runs.hpp"
#include "commands/status.hpp"

namespace mha::commands {

using nlohmann::json;

namespace {

// What a stage command's run gives its surface: the report and the -o document
// even when the run failed after it ran (the report says how), else nothing.
Result stage_result(StageRun run) {
  Result r;
  if (run.report.is_null()) return r.failed(run.status, run.error);  // refused before it ran
  r.status = run.status;
  r.error = run.error;
  r.value = run.report;
  r.outputs["report"].document = std::move(run.report);
  r.outputs["output"].document = std::move(run.output);
  r.summary = std::move(run.text);
  return r;
}

Result run_stage1(Arguments& a, Context& ctx) {
  Result r;
  if (a.flag("reference") && !a.given("instance"))
    return r.failed(kExitBadInput, a.spell("reference") + " needs an instance (the MPFR labels come from it)");
  Samples in;
  if (!open_samples(a, in, r)) return r;
  Stage1Args s;
  s.samples = a.integer("samples");
  s.threads = a.threads();
  s.max_seconds = a.number("max-seconds");
  s.reference = a.flag("reference");
  s.reference_samples = a.integer("reference-samples");
  s.precision = static_cast<unsigned>(a.integer("precision"));
  const Instance* truth = in.instance ? &*in.instance : nullptr;
  return stage_result(run_stage1_command(s, *in.source, truth, in.seed, in.record, ctx));
}

}  // namespace

Command stage1_command() {
  const Stage1Args defaults;
  Option samples{"samples", Type::integer, "samples to use"};
  samples.range = range(1, two_to(40));
  Option reference{"reference", Type::flag,
                   "also run the reference path: the population value Σ_i M(Θ_i) W_i by exact enumeration when k·d ≤ "
                   "20, and in every case the fast vs MPFR statistic on the same first --reference-samples samples"};
  Option reference_samples{"reference-samples", Type::integer, "samples of the same-sample cross-check"};
  reference_samples.range = range(1, two_to(24));
  reference_samples.needs = {"reference"};
  Option precision = option::precision("MPFR bits of the reference");
  precision.needs = {"reference"};
  std::vector<Option> options = sample_input_options("sample seed of the oracle");
  options.insert(options.end(), {samples.with_default(defaults.samples), option::threads(),
                                 option::max_seconds("time budget (0: none)"), reference,
                                 reference_samples.with_default(defaults.reference_samples), precision,
                                 option::report(), option::output("write Ŵ (JSON) here")});
  return {"stage1", "stage1", "Stage 1: crude estimate Ŵ of W_Σ = Σ_i W_i (MATH.md §3)", options, run_stage1};
}

namespace {

// The sculpt arguments from the options (SculptArgs: the learner's defaults
// where an option is not given).
SculptArgs sculpt_args(const Arguments& a) {
  SculptArgs s;
  SculptOptions& so = s.learn.sculpt.sculpt;
  s.spelling = a.spelling;
  s.m = a.given("m") ? static_cast<int>(a.integer("m")) : 0;
  s.w_source = a.text("w-sum");
  s.learn.stage1_samples = a.integer("stage1-samples");
  if (a.given("tau")) s.tau = a.number("tau");
  s.pilot_samples_given = a.given("pilot-samples");
  s.learn.sculpt.pilot_samples = a.integer("pilot-samples");
  so.certify.v_min = a.number("v-min");
  if (a.given("v-min-rule"))
    s.v_min_rule = a.text("v-min-rule") == "every" ? CertifyOptions::VMinRule::every_entry : CertifyOptions::VMinRule::pairwise;
  if (a.given("selection"))
    s.selection = a.text("selection") == "best" ? SculptOptions::Selection::best_rows : SculptOptions::Selection::threshold;
  s.distinct = a.flag("distinct");
  if (a.given("sigma-min")) s.sigma_min = a.number("sigma-min");
  if (a.given("w-error")) s.w_error = a.number("w-error");
  s.rows = a.text("rows");
  so.radius = a.number("radius");
  so.target_constraints = a.integer("target");
  if (a.given("max-samples")) s.max_samples = a.integer("max-samples");
  so.max_seconds = a.number("max-seconds");
  s.learn.threads = a.threads();
  return s;
}

Result run_sculpt(Arguments& a, Context& ctx) {
  Result r;
  Samples in;
  if (!open_samples(a, in, r)) return r;
  const Instance* truth = in.instance ? &*in.instance : nullptr;
  json source = in.record;
  source.erase("x"), source.erase("y");  // as the provenance has always recorded sculpt's source
  return stage_result(run_sculpt_command(sculpt_args(a), *in.source, truth, in.label_noise, source, ctx));
}

Option number_option(const char* name, const char* help, Range r) {
  Option o{name, Type::number, help};
  o.range = r;
  return o;
}

Option choice_option(const char* name, const char* help, std::vector<std::string> choices) {
  Option o{name, Type::text, help};
  o.choices = std::move(choices);
  return o;
}

}  // namespace

Command sculpt_command() {
  const SculptArgs defaults;
  const SculptOptions& so = defaults.learn.sculpt.sculpt;
  Option m = option::m("number of heads (needed with --x/--y; taken from the instance otherwise)");
  Option stage1_samples{"stage1-samples", Type::integer, "samples for stage 1"};
  stage1_samples.range = range(1, two_to(40));
  Option pilot{"pilot-samples", Type::integer, "samples of the pilot that chooses the adaptive τ"};
  pilot.range = range(1, two_to(30));
  Option target{"target", Type::integer, "stop once this many constraints are kept (0: 3d²)"};
  target.range = range(0, two_to(30));
  Option max_samples{"max-samples", Type::integer,
                     "sample budget of stage 2 (default: the learner's, " + std::to_string(defaults.learn.crude_sculpt_samples) +
                         " with the stage-1 Ŵ, " + std::to_string(so.max_samples) + " with the oracle)"};
  max_samples.range = range(0, two_to(40));
  std::vector<Option> options = sample_input_options("sample seed of the oracle");
  options.insert(
      options.end(),
      {m, choice_option("w-sum", "W_Σ estimate: stage1 (run stage 1 first) or oracle (exact, from the instance)",
                        {"stage1", "oracle"}).with_default(defaults.w_source),
       stage1_samples.with_default(defaults.learn.stage1_samples),
       number_option("tau", "fix τ: certify when ρ ≤ τ‖y_a‖ (default: adaptive, from a pilot sample, as the learner)",
                     range(0, 1e3)),
       pilot.with_default(defaults.learn.sculpt.pilot_samples),
       number_option("v-min", "smallest allowed pattern entry", range(0, 1)).with_default(so.certify.v_min),
       choice_option("v-min-rule", "every: a row is kept only when all its entries are ≥ v_min; pairwise: each pair "
                     "(a, j) with both entries ≥ v_min gives its slab (default: the learner's round's)",
                     {"every", "pairwise"}),
       choice_option("selection", "threshold: rows with residual ≤ τ until the target; best: the target's worth of rows "
                     "with the smallest residuals over the whole budget (τ from the data, no pilot; default: the "
                     "learner's round's)",
                     {"threshold", "best"}),
       {"distinct", Type::flag, "drop slabs identical to a kept one (repeated rows of a small Boolean domain)"},
       number_option("sigma-min", "assumed lower bound on σ_min(C), 0: 0.5(√d − √(km)) (default: the learner's, "
                     "optimistic 1e3 with the stage-1 Ŵ, 0.5(√d − √(km)) with the oracle)", range(0, 1e6)),
       number_option("w-error", "assumed bound on ‖W_Σ − Ŵ‖_op (default 0, as the learner's round 0)", range(0, 1e6)),
       choice_option("rows", "certify all rows or only the first (the paper)", {"all", "first"}).with_default(defaults.rows),
       number_option("radius", "R of the ball ‖Θ‖_F ≤ R", range(1e-3, 1e6)).with_default(so.radius),
       target.with_default(so.target_constraints), max_samples,
       option::max_seconds("time budget of stage 2 (0: none)").with_default(so.max_seconds), option::threads(),
       option::report(), option::output("write the body K (JSON) here")});
  return {"sculpt", "sculpt", "Stage 2: certify coincident attention rows and sculpt the convex body K (MATH.md §3)",
          options, run_sculpt};
}

}  // namespace mha::commands
