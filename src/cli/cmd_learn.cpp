// learn: the whole learner (stages 1–6 and polishing) on an instance's oracle
// or on a .npy dataset, with budgets, a per-stage report and the learned layer;
// or, with --method adam, the gradient-trained baseline on the same samples;
// or, with --method random-polish, polishing alone from random starts.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/fault_switch.hpp"
#include "cli/input.hpp"
#include "cli/option_ranges.hpp"
#include "cli/processes.hpp"
#include "data/instance_io.hpp"
#include "baseline/adam.hpp"
#include "cli/stop_signals.hpp"
#include "data/atomic_file.hpp"
#include "data/provenance.hpp"
#include "learn/checkpoint.hpp"
#include "cli/learn_checkpoints.hpp"
#include "cli/learn_settings.hpp"
#include "util/format.hpp"
#include "baseline/random_polish.hpp"
#include "learn/learner.hpp"

#include <set>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

namespace mha::cli {

using nlohmann::json;

int learner_exit_status(const char* command, const LearnReport& report) {
  for (const Diagnostic& d : report.diagnostics)
    if (d.warning)
      std::fprintf(stderr, "mhalearn %s: warning: stage %s%s: %s: %s\n", command, d.stage.c_str(),
                   d.round >= 0 ? (", round " + std::to_string(d.round)).c_str() : "", d.name.c_str(), d.detail.c_str());
  const std::vector<std::string> disagreements = report.disagreements();
  if (disagreements.empty()) return kExitOk;
  return fail(command, kExitDisagreement,
              "a fast path disagrees with its reference beyond the derived bound (after escalation), " +
                  std::to_string(disagreements.size()) + " row(s); first: " + disagreements.front());
}

namespace {

}  // namespace

void add_learn_table_options(CLI::App* cmd, LearnSettings& s, unsigned methods, const std::set<std::string>& skip) {
  for (const LearnOptionSpec& spec : learn_option_table()) {
    if (spec.input || !(spec.methods & methods) || skip.count(spec.flag)) continue;
    CLI::Option* opt = std::visit(
        [&](auto* field) -> CLI::Option* {
          if constexpr (std::is_same_v<decltype(field), bool*>) return cmd->add_flag(spec.flag, *field, spec.help);
          else return cmd->add_option(spec.flag, *field, spec.help);
        },
        spec.field(s));
    if (spec.choices) {
      std::vector<std::string> choices;
      std::string list = spec.choices;
      for (size_t at = 0; at <= list.size();) {
        const size_t bar = std::min(list.find('|', at), list.size());
        choices.push_back(list.substr(at, bar - at));
        at = bar + 1;
      }
      opt->check(CLI::IsMember(choices));
    }
    if (spec.default_text) opt->default_str(spec.default_text);
    else if (!std::holds_alternative<bool*>(spec.field(s))) opt->capture_default_str();
  }
}

std::set<std::string> given_learn_flags(const CLI::App& cmd) {
  std::set<std::string> given;
  for (const LearnOptionSpec& spec : learn_option_table())
    if (cmd.get_option_no_throw(spec.flag) && cmd.count(spec.flag) > 0) given.insert(spec.flag);
  return given;
}

namespace {

// Where the samples come from, as the options record names it.
json source_record(const Input& in) {
  return {{"instance", in.instance_path}, {"x", in.x_path}, {"y", in.y_path}, {"seed", in.seed}};
}

std::string source_line(const Input& in) {
  return in.instance ? "oracle of " + in.instance_path + ", seed " + std::to_string(in.seed)
                     : "dataset of " + std::to_string(in.source->available()) + " samples";
}

// A baseline's report (with provenance), then its layer: the exit status of `learn --method adam|random-polish`.
int write_baseline_outputs(json rep, bool ok, const std::string& message, const Layer& layer, const SampleSource& source,
                           const json& options, const std::string& report, const std::string& out) {
  const json provenance = make_provenance("learn", options);
  if (!report.empty() && prints_and_writes())
    if (auto e = write_json_atomically(report, learn_report_record(std::move(rep), provenance)); !e.empty())
      return fail("learn", kExitFailedRun, e);
  if (!ok) return fail("learn", kExitFailedRun, message);
  if (!out.empty() && prints_and_writes())
    if (auto e = write_instance(out, learned_instance(layer, source, provenance)); !e.empty())
      return fail("learn", kExitFailedRun, e);
  return kExitOk;
}

int run_adam(const Input& in, const AdamOptions& o, const json& options, const std::string& report,
             const std::string& out) {
  const Instance* truth = in.instance ? &*in.instance : nullptr;
  const SampleSource& source = *in.source;
  std::printf("mhalearn learn --method adam: (d,k,m) = (%d,%d,%d), %s, %d threads\n", source.d(), source.k(), o.m,
              source_line(in).c_str(), o.threads);
  std::printf("batch %lld, Adam(%.3g, %.3g, %.0e), rate %.1e with cosine decay over %s, init %s (seed %llu)\n\n",
              (long long)o.batch, o.beta1, o.beta2, o.epsilon, o.learning_rate,
              o.max_samples > 0 ? (std::to_string(o.max_samples) + " training samples").c_str()
                                : (std::to_string(o.max_seconds) + " s").c_str(),
              to_string(o.init), (unsigned long long)o.init_seed);
  const AdamResult r = train_adam(source, o, truth);
  std::printf("%s", format_table(r.report).c_str());
  return write_baseline_outputs(to_json(r.report), r.report.ok, r.report.message, r.layer, source, options, report, out);
}

int run_random_polish(const Input& in, const RandomPolishOptions& o, const json& options, const std::string& report,
                      const std::string& out) {
  const Instance* truth = in.instance ? &*in.instance : nullptr;
  const SampleSource& source = *in.source;
  if (auto e = check_random_polish(source, o); !e.empty()) return fail("learn", kExitBadInput, e);
  std::printf("mhalearn learn --method random-polish: (d,k,m) = (%d,%d,%d), %s, %d threads\n", source.d(), source.k(), o.m,
              source_line(in).c_str(), o.threads);
  std::printf("polishing alone from up to %d random starts (init seed %llu, ‖Θ_i‖_F %s), budgets: %s samples, %s s\n\n",
              o.starts, (unsigned long long)o.init_seed,
              o.init_theta_norm > 0 ? std::to_string(o.init_theta_norm).c_str() : ("R·uniform[0,1), R = " + std::to_string(o.radius)).c_str(),
              o.max_samples > 0 ? std::to_string(o.max_samples).c_str() : "no limit",
              o.max_seconds > 0 ? std::to_string(o.max_seconds).c_str() : "no limit");
  const RandomPolishResult r = random_polish(source, o, truth);
  std::printf("%s", format_table(r.report).c_str());
  return write_baseline_outputs(to_json(r.report), r.report.ok, r.report.message, r.layer, source, options, report, out);
}

// What identifies the samples for a checkpoint: the instance file's bytes
// (with --seed and --label-noise, which are options), or the dataset files by
// path and size (the learner also compares the validation set's CRC-64 on resuming).
json input_identity(const Input& in) {
  namespace fs = std::filesystem;
  if (in.instance) {
    std::string bytes, error;
    if (!read_whole_file(in.instance_path, bytes, error)) return {{"instance_unreadable", error}};
    return {{"instance_crc64", format("%016llx", (unsigned long long)crc64(bytes))}, {"instance_bytes", bytes.size()}};
  }
  json id;
  for (const auto& [key, path] : {std::pair{"x", in.x_path}, std::pair{"y", in.y_path}}) {
    std::error_code ec;
    id[key] = fs::weakly_canonical(path, ec).string();
    id[std::string(key) + "_bytes"] = fs::file_size(path, ec);
  }
  id["samples"] = in.source->available();
  return id;
}

// The run stopped at a safe point: the partial report, one line, exit 5 (or 1
// when the checkpoint itself could not be written).
int report_interrupted(const LearnReport& report, const SafePoints& points, const std::string& report_path,
                       const json& provenance) {
  if (!report_path.empty()) {
    json rep = learn_report_record(to_json(report), provenance);
    rep["checkpoint"] = points.dir.empty() || !points.write_error.empty() ? json(nullptr) : json(points.dir);
    if (auto e = write_json_atomically(report_path, rep); !e.empty()) return fail("learn", kExitFailedRun, e);
  }
  if (!points.write_error.empty()) return fail("learn", kExitFailedRun, interrupted_message(report, points));
  std::fprintf(stderr, "mhalearn learn: %s\n", interrupted_message(report, points).c_str());
  return kExitInterrupted;
}

struct LearnArgs {
  Input in;
  LearnSettings s;
  int m = 0;
  std::string report, out;
};

// The checkpoint hook of a paper run and the state to resume from; "" or the error.
std::string prepare_safe_points(const LearnArgs& a, const LearnOptions& o, const json& provenance, const json& options,
                                SafePoints& points, std::optional<LearnState>& resume) {
  const LearnSettings& s = a.s;
  if (process_count() > 1 && (!s.checkpoint.empty() || !s.resume.empty()))
    return "--checkpoint and --resume are not available under mpirun (the ranks would have to agree on every stop)";
  points.dir = s.resume.empty() ? s.checkpoint : s.resume;
  points.match = resume_match(options, input_identity(a.in));
  points.provenance = provenance;  // with earlier builds named once resumed (read_resume)
  if (auto e = stop_at_from_environment(points.stop_at); !e.empty()) return e;
  if (!s.resume.empty()) {
    if (auto e = read_resume(s.resume, points.match, points.provenance, s.resume_other_build, Spelling::cli,
                             a.in.source->k(), a.in.source->d(), o, resume);
        !e.empty())
      return "--resume: " + e;
  } else if (!s.checkpoint.empty()) {
    if (auto e = prepare_checkpoint_directory(s.checkpoint); !e.empty()) return "--checkpoint: " + e;
  }
  return "";
}

void print_learn_header(const Input& in, const LearnOptions& o, const std::optional<LearnState>& resume,
                        const std::string& resume_dir, const json& provenance) {
  std::printf("mhalearn learn: (d,k,m) = (%d,%d,%d), %s, %d threads\n", in.source->d(), in.source->k(), o.m,
              source_line(in).c_str(), o.threads);
  const std::vector<std::string> oracles = oracle_stage_names(o.oracle);
  if (!oracles.empty()) {
    std::string list;
    for (const auto& name : oracles) list += (list.empty() ? "" : ", ") + name;
    std::printf("stages replaced by the truth: %s\n", list.c_str());
  }
  if (resume) std::printf("resuming %s from %s\n", safe_point_name(*resume).c_str(), resume_dir.c_str());
  if (resume && provenance.contains("earlier_builds"))
    for (const json& b : provenance["earlier_builds"])
      std::printf("steps until %s taken by another build: git commit %s\n", b["until"].get<std::string>().c_str(),
                  b["git_commit"].dump().c_str());
  std::printf("\n");
}

// The six stages and polishing (--method paper), with checkpoints.
int run_paper(const LearnArgs& a, LearnOptions o, const json& options) {
  const Instance* truth = a.in.instance ? &*a.in.instance : nullptr;
  const SampleSource& source = *a.in.source;
  if (source.k() * o.m > source.d())
    std::fprintf(stderr, "mhalearn learn: warning: k·m = %d > d = %d, the certification lemma does not apply\n",
                 source.k() * o.m, source.d());
  if (auto e = learn_fast_paths(o); !e.empty()) return fail("learn", kExitBadInput, e);
  o.processes = job_processes();  // the sample and tuple loops over the ranks of an MPI job (same bytes as one process)
  SafePoints points;
  std::optional<LearnState> resume;
  if (auto e = prepare_safe_points(a, o, make_provenance("learn", options), options, points, resume); !e.empty())
    return fail("learn", kExitBadInput, e);
  const json& provenance = points.provenance;
  o.at_safe_point = [&points](const LearnState& state) { return points(state); };
  print_learn_header(a.in, o, resume, a.s.resume, provenance);
  LearnResult r;
  {
    const StopSignals signals;
    try {
      r = learn_layer(source, o, truth, resume ? &*resume : nullptr);
    } catch (const std::invalid_argument& e) {
      if (!resume) throw;
      return fail("learn", kExitBadInput, "--resume: " + a.s.resume + ": " + e.what());  // other samples
    }
  }
  std::printf("%s", format_table(r.report).c_str());
  if (!points.dir.empty() && !r.report.interrupted)
    std::fprintf(stderr, "mhalearn learn: %lld checkpoints written to %s in %.2f s\n", points.reached,
                 points.dir.c_str(), points.seconds);
  if (r.report.interrupted) return report_interrupted(r.report, points, a.report, provenance);
  if (!a.report.empty() && prints_and_writes())
    if (auto e = write_json_atomically(a.report, learn_report_record(to_json(r.report), provenance)); !e.empty())
      return fail("learn", kExitFailedRun, e);
  if (!r.report.ok) return fail("learn", kExitFailedRun, r.report.message);
  if (!a.out.empty() && prints_and_writes())
    if (auto e = write_instance(a.out, learned_instance(r.layer, source, provenance)); !e.empty())
      return fail("learn", kExitFailedRun, e);
  return learner_exit_status("learn", r.report);
}

// Checks the arguments, opens the input and runs the chosen method.
int run_learn(LearnArgs& a, const CLI::App& cmd) {
  const std::set<std::string> given = given_learn_flags(cmd);
  a.s.label_noise = a.in.label_noise;
  if (auto e = learn_settings_problem(a.s, given, !a.in.instance_path.empty(), Spelling::cli); !e.empty())
    return fail("learn", kExitBadInput, e);
  if (a.m > kLearnerMaxHeads)
    return fail("learn", kExitBadInput,
                "--m " + std::to_string(a.m) + ": the learner takes at most " + std::to_string(kLearnerMaxHeads) +
                    " heads (its report compares every permutation of them)");
  if (auto r = open_input(a.in); !r.error.empty()) return fail("learn", r.exit_code, r.error);
  const Instance* truth = a.in.instance ? &*a.in.instance : nullptr;
  const int m = a.m > 0 ? a.m : truth ? truth->m() : 0;
  if (m < 1) return fail("learn", kExitBadInput, "with --x/--y give the number of heads with --m");
  if (truth && m != truth->m()) return fail("learn", kExitBadInput, "--m differs from the instance's number of heads");
  if (auto e = check_learn_input(a.in.source->k(), a.in.source->d(), m); !e.empty())
    return fail("learn", kExitBadInput, e);
  json options = learn_options_record(a.s, given, m, source_record(a.in));
  if (a.s.method == "random-polish")
    return run_random_polish(a.in, random_polish_options(a.s, given, m, a.in.seed), options, a.report, a.out);
  if (a.s.method == "adam") return run_adam(a.in, adam_options(a.s, m, a.in.seed), options, a.report, a.out);
  if (process_count() > 1) options["processes"] = process_count();
  return run_paper(a, paper_options(a.s, given, m, a.in.seed), options);
}

}  // namespace

Runner add_learn(CLI::App& app) {
  auto* cmd = app.add_subcommand("learn", "Learn a layer end to end: stages 1–6 of MATH.md §3, then polishing");
  auto a = std::make_shared<LearnArgs>();
  add_input_options(cmd, a->in);
  cmd->add_option("--m", a->m, "number of heads (default: the instance's; the learner takes at most 8)");
  add_learn_table_options(cmd, a->s, kMethodsAll, {});  // every method's options (learn_settings.hpp)
  cmd->add_option("--report", a->report, "JSON report to write");
  cmd->add_option("-o,--output", a->out, "write the learned layer here (instance JSON)");
  return [a, cmd] { return run_learn(*a, *cmd); };
}

}  // namespace mha::cli
