// learn: the whole learner (stages 1–6 and polishing) on an instance's oracle
// or on a dataset, with budgets, a per-stage report and the learned layer; or,
// with --method adam, the gradient-trained baseline on the same samples; or,
// with --method random-polish, polishing alone from random starts.
#include "commands/declarations.hpp"
#include "commands/fault_switch.hpp"
#include "commands/input.hpp"
#include "commands/learn_checkpoints.hpp"
#include "commands/learn_settings.hpp"
#include "commands/stage_lines.hpp"
#include "commands/status.hpp"
#include "commands/stop.hpp"
#include "learn/checkpoint.hpp"
#include "util/format.hpp"
#include "util/progress.hpp"

#include <limits>
#include <stdexcept>

namespace mha::commands {

using nlohmann::json;

namespace {

// learn: its report compares the learned heads with the truth under every
// permutation (m! of them), so the learner takes at most this many heads.
constexpr int kLearnerMaxHeads = 8;

std::string source_line(const Samples& in) {
  if (!in.instance) return "dataset of " + std::to_string(in.source->available()) + " samples";
  return "oracle of " + (in.record.contains("instance") ? in.record["instance"].get<std::string>() : std::string("the instance")) +
         ", seed " + std::to_string(in.seed);
}

// What every method's run gives: the report (with its provenance) and the
// layer when it finished; Python also gets the printed table.
void learn_outputs(Result& r, json report, const std::string& table, const json& provenance, const Layer* layer,
                   const SampleSource& source) {
  report = learn_report_record(std::move(report), provenance);
  r.value = report;
  r.value["table"] = table;
  r.outputs["report"].document = std::move(report);
  if (layer) r.outputs["output"].instance = learned_instance(*layer, source, provenance);
}

Result run_adam(const Samples& in, const AdamOptions& o, const json& options, Context& ctx) {
  const Instance* truth = in.instance ? &*in.instance : nullptr;
  const SampleSource& source = *in.source;
  ctx.print(format("mhalearn learn --method adam: (d,k,m) = (%d,%d,%d), %s, %d threads\n", source.d(), source.k(), o.m,
                   source_line(in).c_str(), o.threads) +
            format("batch %lld, Adam(%.3g, %.3g, %.0e), rate %.1e with cosine decay over %s, init %s (seed %llu)\n\n",
                   (long long)o.batch, o.beta1, o.beta2, o.epsilon, o.learning_rate,
                   o.max_samples > 0 ? (std::to_string(o.max_samples) + " training samples").c_str()
                                     : (std::to_string(o.max_seconds) + " s").c_str(),
                   to_string(o.init), (unsigned long long)o.init_seed));
  const AdamResult run = train_adam(source, o, truth);
  const std::string table = format_table(run.report);
  ctx.print(table);
  Result r;
  learn_outputs(r, to_json(run.report), table, ctx.provenance("learn", options), run.report.ok ? &run.layer : nullptr, source);
  if (!run.report.ok) r.failed(kExitFailedRun, run.report.message);
  return r;
}

Result run_random_polish(const Samples& in, const RandomPolishOptions& o, const json& options, Context& ctx) {
  const Instance* truth = in.instance ? &*in.instance : nullptr;
  const SampleSource& source = *in.source;
  Result r;
  if (auto e = check_random_polish(source, o); !e.empty()) return r.failed(kExitBadInput, e);
  ctx.print(format("mhalearn learn --method random-polish: (d,k,m) = (%d,%d,%d), %s, %d threads\n", source.d(),
                   source.k(), o.m, source_line(in).c_str(), o.threads) +
            format("polishing alone from up to %d random starts (init seed %llu, ‖Θ_i‖_F %s), budgets: %s samples, %s s\n\n",
                   o.starts, (unsigned long long)o.init_seed,
                   o.init_theta_norm > 0 ? std::to_string(o.init_theta_norm).c_str()
                                         : ("R·uniform[0,1), R = " + std::to_string(o.radius)).c_str(),
                   o.max_samples > 0 ? std::to_string(o.max_samples).c_str() : "no limit",
                   o.max_seconds > 0 ? std::to_string(o.max_seconds).c_str() : "no limit"));
  const RandomPolishResult run = random_polish(source, o, truth);
  const std::string table = format_table(run.report);
  ctx.print(table);
  learn_outputs(r, to_json(run.report), table, ctx.provenance("learn", options), run.report.ok ? &run.layer : nullptr, source);
  if (!run.report.ok) r.failed(kExitFailedRun, run.report.message);
  return r;
}

// The checkpoint hook of a paper run and the state to resume from; "" or the error.
std::string prepare_safe_points(const Arguments& a, const LearnSettings& s, const Samples& in, const LearnOptions& o,
                                const json& options, const Context& ctx, SafePoints& points,
                                std::optional<LearnState>& resume) {
  if (o.processes.size > 1 && (!s.checkpoint.empty() || !s.resume.empty()))
    return a.spell("checkpoint") + " and " + a.spell("resume") +
           " are not available under mpirun (the ranks would have to agree on every stop)";
  points.dir = s.resume.empty() ? s.checkpoint : s.resume;
  points.match = resume_match(options, in.identity);
  points.provenance = ctx.provenance("learn", options);  // with earlier builds named once resumed (read_resume)
  if (auto e = stop_at_from_environment(points.stop_at); !e.empty()) return e;
  if (!s.resume.empty()) {
    if (auto e = read_resume(s.resume, points.match, points.provenance, s.resume_other_build, a.spelling,
                             in.source->k(), in.source->d(), o, resume);
        !e.empty())
      return a.spell("resume") + ": " + e;
  } else if (!s.checkpoint.empty() && ctx.writes) {
    if (auto e = prepare_checkpoint_directory(s.checkpoint); !e.empty()) return a.spell("checkpoint") + ": " + e;
  }
  return "";
}

std::string learn_header(const Samples& in, const LearnOptions& o, const std::optional<LearnState>& resume,
                         const std::string& resume_dir, const json& provenance) {
  std::string text = format("mhalearn learn: (d,k,m) = (%d,%d,%d), %s, %d threads\n", in.source->d(), in.source->k(),
                            o.m, source_line(in).c_str(), o.threads);
  // Outside the lemma's regime the run goes on (its slabs' widths are then not certified): a fact of the run, not a fault.
  if (in.source->k() * o.m > in.source->d())
    text += format("k·m = %d > d = %d: the certification lemma does not apply\n", in.source->k() * o.m, in.source->d());
  std::string list;
  for (const auto& name : oracle_stage_names(o.oracle)) list += (list.empty() ? "" : ", ") + name;
  if (!list.empty()) text += "stages replaced by the truth: " + list + "\n";
  if (resume) text += "resuming " + safe_point_name(*resume) + " from " + resume_dir + "\n";
  if (resume && provenance.contains("earlier_builds"))
    for (const json& b : provenance["earlier_builds"])
      text += "steps until " + b["until"].get<std::string>() + " taken by another build: git commit " +
              b["git_commit"].dump() + "\n";
  return text + "\n";
}

// The learner under the stop signals, each stage's line printed as it ends.
LearnResult learn_with_lines(const Arguments& a, const Samples& in, LearnOptions& o, const std::optional<LearnState>& resume,
                             SafePoints& points, StageLines& lines, Context& ctx, Result& r) {
  o.at_safe_point = [&points, &lines](const LearnState& state) {
    lines.update(state.report);
    check_interrupt();  // Python's Ctrl-C: the last checkpoint stays the last safe point's
    return points(state);
  };
  clear_stop_request();  // a request is this run's (a Python process runs many)
  const std::unique_ptr<Scope> signals = ctx.stop_on_signals();
  try {
    return learn_layer(*in.source, o, in.instance ? &*in.instance : nullptr, resume ? &*resume : nullptr);
  } catch (const std::invalid_argument& e) {
    if (!resume) throw;
    r.failed(kExitBadInput, a.spell("resume") + ": " + a.text("resume") + ": " + e.what());  // other samples
    return {};
  }
}

// The six stages and polishing (--method paper), with checkpoints.
Result run_paper(const Arguments& a, const LearnSettings& s, Samples& in, LearnOptions o, json options, Context& ctx) {
  Result r;
  const SampleSource& source = *in.source;
  if (auto e = learn_fast_paths(o); !e.empty()) return r.failed(kExitBadInput, e);
  o.processes = ctx.processes;  // the sample and tuple loops over the ranks of an MPI job (same bytes as one process)
  if (o.processes.size > 1) options["processes"] = o.processes.size;
  SafePoints points;
  std::optional<LearnState> resume;
  if (auto e = prepare_safe_points(a, s, in, o, options, ctx, points, resume); !e.empty()) return r.failed(kExitBadInput, e);
  ctx.print(learn_header(in, o, resume, s.resume, points.provenance));
  StageLines lines(ctx, resume ? resume->report.variant : o.variant);
  const LearnResult run = learn_with_lines(a, in, o, resume, points, lines, ctx, r);
  if (r.status != kExitOk) return r;
  const std::string checkpoints = !points.dir.empty() && !run.report.interrupted
                                      ? format("%lld checkpoints written to %s in %.2f s\n", points.reached,
                                               points.dir.c_str(), points.seconds)
                                      : "";
  lines.finish(run.report, checkpoints);
  learn_outputs(r, to_json(run.report), format_table(run.report), points.provenance,
                run.report.ok ? &run.layer : nullptr, source);
  if (run.report.interrupted) {
    const json dir = points.dir.empty() || !points.write_error.empty() ? json(nullptr) : json(points.dir);
    (*r.outputs["report"].document)["checkpoint"] = dir;
    r.value["checkpoint"] = dir;
    return r.failed(points.write_error.empty() ? kExitInterrupted : kExitFailedRun, interrupted_message(run.report, points));
  }
  if (!run.report.ok) return r.failed(kExitFailedRun, run.report.message);
  learner_verdict(run.report, r);
  return r;
}

// "" or why a dataset cannot feed the learner at all: polishing keeps its
// samples at the dataset's end, and the validation set comes first.
std::string dataset_problem(const Arguments& a, const Samples& in, const LearnOptions& o) {
  const int64_t available = in.source->available();
  if (in.instance || available == std::numeric_limits<int64_t>::max()) return "";
  const int64_t reserve = o.polish ? polish_samples_needed(in.source->d(), in.source->k(), o.m, o.polish_options) : 0;
  if (available - reserve >= o.validation_samples) return "";
  return format("the dataset has %lld samples; the learner needs more than %lld: %lld for its validation set (%s)",
                (long long)available, (long long)(reserve + o.validation_samples), (long long)o.validation_samples,
                a.spell("validation-samples").c_str()) +
         (reserve > 0 ? format(" and the %lld polishing keeps at its end (%s keeps none)", (long long)reserve,
                               a.spelling == Spelling::cli ? "--no-polish" : "polish=False")
                      : std::string()) +
         ", then the stages' own";
}

// The number of heads: given, or the instance's. "" or why not.
std::string heads_problem(const Arguments& a, const Samples& in, int& m) {
  m = a.given("m") ? static_cast<int>(a.integer("m")) : in.instance ? in.instance->m() : 0;
  if (m < 1) return "with " + a.spell("x") + "/" + a.spell("y") + " give the number of heads with " + a.spell("m");
  if (in.instance && m != in.instance->m()) return a.spell("m") + " differs from the instance's number of heads";
  return check_learn_input(in.source->k(), in.source->d(), m);
}

Result run_learn(Arguments& a, Context& ctx) {
  Result r;
  LearnSettings s = learn_settings_from(a);
  const std::set<std::string> given = given_learn_flags(a);
  s.label_noise = a.number("label-noise");
  if (auto e = learn_settings_problem(s, given, a.given("instance"), a.spelling); !e.empty())
    return r.failed(kExitBadInput, e);
  if (a.given("m") && a.integer("m") > kLearnerMaxHeads)
    return r.failed(kExitBadInput, a.spell("m") + " " + std::to_string(a.integer("m")) + ": the learner takes at most " +
                                       std::to_string(kLearnerMaxHeads) + " heads (its report compares every permutation of them)");
  Samples in;
  if (!open_samples(a, in, r, !s.checkpoint.empty() || !s.resume.empty())) return r;
  int m = 0;
  if (auto e = heads_problem(a, in, m); !e.empty()) return r.failed(kExitBadInput, e);
  const json options = learn_options_record(s, given, m, in.record);
  if (s.method == "random-polish") return run_random_polish(in, random_polish_options(s, given, m, in.seed), options, ctx);
  if (s.method == "adam") return run_adam(in, adam_options(s, m, in.seed), options, ctx);
  LearnOptions o = paper_options(s, given, m, in.seed);
  if (auto e = dataset_problem(a, in, o); !e.empty()) return r.failed(kExitBadInput, e);
  return run_paper(a, s, in, std::move(o), options, ctx);
}

}  // namespace

Command learn_command() {
  std::vector<Option> options = sample_input_options("sample seed of the oracle", "source");
  options[2].python_position = 1;  // learn(source, y, m): X, Y and the heads, or an instance
  Option m = option::m("number of heads (default: the instance's; the learner takes at most 8)");
  m.python_position = 2;
  options.push_back(m);
  for (Option& o : learn_table_options(kMethodsAll, {})) options.push_back(o);
  options.insert(options.end(), {option::report(), option::output("write the learned layer here (instance JSON)"),
                                 {"verbose", Type::flag, "also print the learner's diagnostics (statistical outcomes, in "
                                                         "its report) on stderr", Role::printing}});
  return {"learn", "learn", "Learn a layer end to end: stages 1–6 of MATH.md §3, then polishing", options, run_learn};
}

}  // namespace mha::commands
