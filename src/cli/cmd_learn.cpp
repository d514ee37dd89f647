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
#include "util/format.hpp"
#include "baseline/random_polish.hpp"
#include "learn/learner.hpp"

#include <chrono>
#include <set>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

namespace mha::cli {

using nlohmann::json;

void add_learn_options(CLI::App* cmd, LearnOptions& o, bool& no_polish, bool& no_reference) {
  cmd->add_option("--variant", o.variant,
                  "paper: the stages as the paper writes them; extended: the project's choices (docs/variants.md)")
      ->transform(CLI::CheckedTransformer(std::map<std::string, LearnVariant>{{"paper", LearnVariant::paper},
                                                                             {"extended", LearnVariant::extended}}))
      ->default_str("extended");
  cmd->add_option("--final-sculpt-samples", o.final_sculpt_samples,
                  "extended: sample budget of the final stage-4 round (0: 2.56e8 for m = 3, 3.2e7 otherwise; -1: no final round)")
      ->capture_default_str();
  cmd->add_option("--final-rounds", o.final_rounds,
                  "extended: final stage-4 rounds, each with twice the samples of the one before and stage 3 "
                  "(the last final round's heads as proxies) between two")
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "worker threads (results do not depend on it)")->capture_default_str();
  cmd->add_option("--max-seconds", o.max_seconds, "time budget: no new round starts after it (0: none)")->capture_default_str();
  cmd->add_option("--stage1-samples", o.stage1_samples, "samples of stage 1")->capture_default_str();
  cmd->add_option("--rounds", o.max_rounds, "most sculpt/refine rounds (stages 2 or 4, then 3)")->capture_default_str();
  cmd->add_option("--sculpt-samples", o.sculpt.sculpt.max_samples, "sample budget of each sculpt round")->capture_default_str();
  cmd->add_option("--crude-sculpt-samples", o.crude_sculpt_samples, "sample budget of round 0 (0: as --sculpt-samples)")
      ->capture_default_str();
  cmd->add_option("--constraints", o.sculpt.sculpt.target_constraints, "slabs each sculpt round aims for (0: 3·d²)")
      ->capture_default_str();
  cmd->add_option("--margin-samples", o.margin.max_samples, "sample budget of each stage-3 round")->capture_default_str();
  cmd->add_option("--margin-events", o.margin.target_events,
                  "stage 3: large-margin events each round collects before it fits W_Σ (0: 16·d)")
      ->capture_default_str();
  cmd->add_option("--accept-fraction", o.margin.accept_fraction, "stage 3: accept this top fraction of proxy margins")
      ->capture_default_str();
  cmd->add_option("--radius", o.sculpt.sculpt.radius, "R: the body and the net live in ‖Θ‖_F ≤ R")->capture_default_str();
  cmd->add_option("--net-tuples", o.net.max_tuples, "stage 6: most tuples of the exhaustive net")->capture_default_str();
  cmd->add_option("--test-samples", o.test_samples, "fresh samples for the test error (instances only)")->capture_default_str();
  cmd->add_option("--reference-max-unknowns", o.reference_max_unknowns,
                  "run the reference paths only when d² is at most this (LPs/QP over d² unknowns)")
      ->capture_default_str();
  cmd->add_option("--assume-label-noise", o.label_noise,
                  "the labels' relative Gaussian noise as far as known: certification widens its slabs for it "
                  "(default: --label-noise)");
  cmd->add_option("--final-fit-samples", o.final_fit_samples,
                  "when polishing stops at a noise floor: the final fit's samples on an oracle (a dataset: all it has "
                  "left); 0: no final fit")
      ->capture_default_str();
  cmd->add_flag("--no-polish", no_polish, "stop after the paper's stages (no Levenberg–Marquardt polishing)");
  cmd->add_flag("--no-reference", no_reference,
                "skip the reference step (every stage's fast path against its reference path on the run's inputs)");
}

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

void add_adam_options(CLI::App* cmd, AdamOptions& o, std::string& init) {
  cmd->add_option("--max-samples", o.max_samples,
                  "adam: training samples, the horizon of the cosine schedule (0: the schedule runs on --max-seconds); "
                  "random-polish: most samples drawn (not given: no sample budget)")
      ->capture_default_str();
  cmd->add_option("--batch", o.batch, "adam: batch size")->capture_default_str();
  cmd->add_option("--learning-rate", o.learning_rate, "adam: peak learning rate (cosine decay to 0)")->capture_default_str();
  cmd->add_option("--init", init, "adam: starting point (symmetric: every head equal)")->capture_default_str()
      ->check(CLI::IsMember({"random", "symmetric"}));
  cmd->add_option("--stop-at-error", o.stop_parameter_error,
                  "adam, studies: stop once the max Θ and W errors against the instance are at most this (0: never)")
      ->capture_default_str();
  cmd->add_option("--init-seed", o.init_seed, "adam, random-polish: seed of the starting point(s)")->capture_default_str();
  cmd->add_option("--init-theta-norm", o.init_theta_norm, "adam: ‖Θ_i‖_F at the start (random-polish: not given, R·uniform[0,1) per head)")->capture_default_str();
}

// The long names of the options `cmd` registered from index `first` on.
std::set<std::string> option_names_from(const CLI::App* cmd, size_t first) {
  std::set<std::string> out;
  const auto options = cmd->get_options();
  for (size_t i = first; i < options.size(); ++i)
    for (const std::string& name : options[i]->get_lnames()) out.insert("--" + name);
  return out;
}

struct MethodOptions {
  std::set<std::string> learner, adam, random_polish;
};

// An option given that the chosen --method does not read is refused, naming
// both. The baselines read a few of the learner's and Adam's options (their
// runners below copy them); the learner reads none of the baselines'.
std::string method_option_problem(const CLI::App& cmd, const std::string& method, const MethodOptions& g) {
  const std::set<std::string> shared_with_baselines = {"--threads", "--max-seconds", "--test-samples"};
  auto reads = [&](const std::string& name) {
    if (method == "paper") return g.learner.count(name) > 0;
    if (method == "adam") return g.adam.count(name) > 0 || shared_with_baselines.count(name) > 0;
    return g.random_polish.count(name) > 0 || shared_with_baselines.count(name) > 0 || name == "--radius" ||
           name == "--max-samples" || name == "--init-theta-norm" || name == "--init-seed";
  };
  for (const std::set<std::string>* group : {&g.learner, &g.adam, &g.random_polish})
    for (const std::string& name : *group)
      if (cmd.count(name) > 0 && !reads(name))
        return name + " does not apply to --method " + method + " (it is " +
               (g.learner.count(name) ? "the learner's (--method paper)" : g.adam.count(name) ? "Adam's (--method adam)"
                                                                                         : "random-polish's") +
               ")";
  return "";
}

// A baseline's report (with provenance), then its layer: the exit status of `learn --method adam|random-polish`.
int write_baseline_outputs(json rep, bool ok, const std::string& message, const Layer& layer, const SampleSource& source,
                           const json& options, const std::string& report, const std::string& out) {
  if (!report.empty() && prints_and_writes()) {
    rep["provenance"] = make_provenance("learn", options);
    if (auto e = write_json_atomically(report, rep); !e.empty()) return fail("learn", kExitFailedRun, e);
  }
  if (!ok) return fail("learn", kExitFailedRun, message);
  if (!out.empty() && prints_and_writes()) {
    Instance learned;
    learned.layer = layer;
    learned.k = source.k();
    learned.inputs = source.draw(0, 1, 1).x.kind;
    learned.provenance_json = make_provenance("learn", options).dump();
    if (auto e = write_instance(out, learned); !e.empty()) return fail("learn", kExitFailedRun, e);
  }
  return kExitOk;
}

int run_adam(const Input& in, const AdamOptions& adam, int m, const std::string& report, const std::string& out) {
  const Instance* truth = in.instance ? &*in.instance : nullptr;
  const SampleSource& source = *in.source;
  AdamOptions o = adam;
  o.m = m;
  o.test_seed = in.seed;
  std::printf("mhalearn learn --method adam: (d,k,m) = (%d,%d,%d), %s, %d threads\n", source.d(), source.k(), m,
              truth ? ("oracle of " + in.instance_path + ", seed " + std::to_string(in.seed)).c_str()
                    : ("dataset of " + std::to_string(source.available()) + " samples").c_str(),
              o.threads);
  std::printf("batch %lld, Adam(%.3g, %.3g, %.0e), rate %.1e with cosine decay over %s, init %s (seed %llu)\n\n",
              (long long)o.batch, o.beta1, o.beta2, o.epsilon, o.learning_rate,
              o.max_samples > 0 ? (std::to_string(o.max_samples) + " training samples").c_str()
                                : (std::to_string(o.max_seconds) + " s").c_str(),
              to_string(o.init), (unsigned long long)o.init_seed);
  const AdamResult r = train_adam(source, o, truth);
  std::printf("%s", format_table(r.report).c_str());
  json options = {{"method", "adam"}, {"instance", in.instance_path}, {"x", in.x_path}, {"y", in.y_path}, {"seed", in.seed},
                  {"m", m}, {"batch", o.batch}, {"learning_rate", o.learning_rate}, {"schedule", "cosine"},
                  {"beta1", o.beta1}, {"beta2", o.beta2}, {"epsilon", o.epsilon}, {"max_samples", o.max_samples},
                  {"max_seconds", o.max_seconds}, {"validation_samples", o.validation_samples},
                  {"init", to_string(o.init)}, {"init_seed", o.init_seed}, {"init_theta_norm", o.init_theta_norm},
                  {"stop_at_error", o.stop_parameter_error}, {"threads", o.threads}, {"label_noise", in.label_noise}};
  return write_baseline_outputs(to_json(r.report), r.report.ok, r.report.message, r.layer, source, options, report, out);
}

// ---- Checkpoints (learn/checkpoint.hpp) -----------------------------------------

// What identifies the samples: the instance file's bytes (with --seed and
// --label-noise, which are options), or the dataset files by path and size
// (the learner also compares the validation set's CRC-64 on resuming).
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

// The options a resumed run must repeat: all but the thread count and the time
// budget (neither changes what a step computes), with the input's identity in
// place of its paths.
json resume_match(json options, const Input& in) {
  for (const char* key : {"threads", "max_seconds", "instance", "x", "y"}) options.erase(key);
  options["input"] = input_identity(in);
  return options;
}

// The learner's safe-point hook: write the checkpoint (when there is a
// directory), then stop if a signal asked to. MHALEARN_STOP_AT_SAFE_POINT=N
// (tests) asks at the N-th safe point of this process, as a signal during the
// step before it would.
struct SafePoints {
  std::string dir;
  json match, provenance;
  long long stop_at = 0;
  long long reached = 0;
  std::string write_error;
  double seconds = 0;  // spent writing checkpoints

  bool operator()(const LearnState& state) {
    if (++reached == stop_at) StopSignals::request();
    if (!dir.empty()) {
      const auto start = std::chrono::steady_clock::now();
      write_error = write_checkpoint(dir, serialise_checkpoint(state, match, provenance));
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!write_error.empty()) return false;
    }
    return !StopSignals::requested();
  }
};

// "" or the error: MHALEARN_STOP_AT_SAFE_POINT, when set, is a positive integer.
std::string stop_at_from_environment(long long& stop_at) {
  const char* value = std::getenv("MHALEARN_STOP_AT_SAFE_POINT");
  if (!value) return "";
  char* end = nullptr;
  stop_at = std::strtoll(value, &end, 10);
  if (*value == '\0' || *end != '\0' || stop_at < 1) return "MHALEARN_STOP_AT_SAFE_POINT must be a positive integer";
  return "";
}

// Reads and checks the checkpoint of --resume against this run; "" or the error.
std::string read_resume(const std::string& dir, const json& match, const json& provenance, int k, int d,
                        const LearnOptions& o, std::optional<LearnState>& state) {
  CheckpointRead c = read_checkpoint(dir);
  if (!c.ok()) return c.error;
  if (auto e = build_difference(c.checkpoint.provenance, provenance); !e.empty()) return dir + ": " + e;
  if (auto e = match_difference(c.checkpoint.match, match); !e.empty())
    return dir + " is the checkpoint of another run: " + e;
  if (auto e = check_resume(c.checkpoint.state, d, k, o.m, o); !e.empty()) return dir + ": " + e;
  state = std::move(c.checkpoint.state);
  return "";
}

// The run stopped at a safe point: the partial report, one line, exit 5 (or 1
// when the checkpoint itself could not be written).
int report_interrupted(const LearnReport& report, const SafePoints& points, const std::string& report_path,
                       const json& provenance) {
  if (!report_path.empty()) {
    json rep = to_json(report);
    rep["checkpoint"] = points.dir.empty() || !points.write_error.empty() ? json(nullptr) : json(points.dir);
    rep["provenance"] = provenance;
    if (auto e = write_json_atomically(report_path, rep); !e.empty()) return fail("learn", kExitFailedRun, e);
  }
  if (!points.write_error.empty())
    return fail("learn", kExitFailedRun, "cannot checkpoint " + report.safe_point + ": " + points.write_error +
                                             " (the previous checkpoint, if any, is intact)");
  if (points.dir.empty())
    std::fprintf(stderr, "mhalearn learn: interrupted %s; nothing to resume from (no --checkpoint)\n",
                 report.safe_point.c_str());
  else
    std::fprintf(stderr, "mhalearn learn: interrupted %s; continue with the same command and --resume %s\n",
                 report.safe_point.c_str(), points.dir.c_str());
  return kExitInterrupted;
}

void add_random_polish_options(CLI::App* cmd, RandomPolishOptions& o) {
  cmd->add_option("--starts", o.starts, "random-polish: most random starts")->capture_default_str();
  cmd->add_option("--polish-samples", o.polish.samples, "random-polish: training samples of each fit (0: 4× polishing's default)")
      ->capture_default_str();
  cmd->add_option("--polish-iterations", o.polish.max_iterations, "random-polish: most Levenberg–Marquardt iterations per start")
      ->capture_default_str();
}

int run_random_polish(const Input& in, const RandomPolishOptions& rp, const std::string& report, const std::string& out) {
  const Instance* truth = in.instance ? &*in.instance : nullptr;
  const SampleSource& source = *in.source;
  RandomPolishOptions o = rp;
  o.test_seed = in.seed;
  if (auto e = check_random_polish(source, o); !e.empty()) return fail("learn", kExitBadInput, e);
  std::printf("mhalearn learn --method random-polish: (d,k,m) = (%d,%d,%d), %s, %d threads\n", source.d(), source.k(), o.m,
              truth ? ("oracle of " + in.instance_path + ", seed " + std::to_string(in.seed)).c_str()
                    : ("dataset of " + std::to_string(source.available()) + " samples").c_str(),
              o.threads);
  std::printf("polishing alone from up to %d random starts (init seed %llu, ‖Θ_i‖_F %s), budgets: %s samples, %s s\n\n",
              o.starts, (unsigned long long)o.init_seed,
              o.init_theta_norm > 0 ? std::to_string(o.init_theta_norm).c_str() : ("R·uniform[0,1), R = " + std::to_string(o.radius)).c_str(),
              o.max_samples > 0 ? std::to_string(o.max_samples).c_str() : "no limit",
              o.max_seconds > 0 ? std::to_string(o.max_seconds).c_str() : "no limit");
  const RandomPolishResult r = random_polish(source, o, truth);
  std::printf("%s", format_table(r.report).c_str());
  json options = {{"method", "random-polish"}, {"instance", in.instance_path}, {"x", in.x_path}, {"y", in.y_path},
                  {"seed", in.seed}, {"m", o.m}, {"starts", o.starts}, {"max_samples", o.max_samples},
                  {"max_seconds", o.max_seconds}, {"validation_samples", o.validation_samples}, {"init_seed", o.init_seed},
                  {"init_theta_norm", o.init_theta_norm}, {"radius", o.radius}, {"polish_samples", o.polish.samples},
                  {"polish_iterations", o.polish.max_iterations}, {"threads", o.threads}, {"label_noise", in.label_noise}};
  return write_baseline_outputs(to_json(r.report), r.report.ok, r.report.message, r.layer, source, options, report, out);
}

}  // namespace

Runner add_learn(CLI::App& app) {
  auto* cmd = app.add_subcommand("learn", "Learn a layer end to end: stages 1–6 of MATH.md §3, then polishing");
  struct Args {
    Input in;
    LearnOptions o;
    AdamOptions adam;
    RandomPolishOptions random_polish;
    std::string method = "paper", init = "random";
    int m = 0;
    bool no_polish = false, no_reference = false;
    std::string report, out, oracle;
    std::string checkpoint, resume;
  };
  auto a = std::make_shared<Args>();
  a->o.threads = default_threads();
  add_input_options(cmd, a->in);
  cmd->add_option("--m", a->m, "number of heads (default: the instance's; the learner takes at most 8)");
  cmd->add_option("--method", a->method, "paper: the six stages (+ polishing); adam: gradient training of the same form; "
                 "random-polish: polishing alone from random starts")
      ->capture_default_str()->check(CLI::IsMember({"paper", "adam", "random-polish"}));
  // Each method's own options, so that one another method ignores is refused (method_option_problem).
  auto groups = std::make_shared<MethodOptions>();
  size_t before = cmd->get_options().size();
  add_learn_options(cmd, a->o, a->no_polish, a->no_reference);
  groups->learner = option_names_from(cmd, before);
  before = cmd->get_options().size();
  add_adam_options(cmd, a->adam, a->init);
  groups->adam = option_names_from(cmd, before);
  before = cmd->get_options().size();
  add_random_polish_options(cmd, a->random_polish);
  groups->random_polish = option_names_from(cmd, before);
  cmd->add_option("--oracle", a->oracle,
                  "stages to replace by the truth, comma-separated (stage1, hull = stages 2/4/5, stage3, stage6): "
                  "the other stages then report their own error (needs an instance)");
  cmd->add_option("--report", a->report, "JSON report to write");
  cmd->add_option("-o,--output", a->out, "write the learned layer here (instance JSON)");
  cmd->add_option("--checkpoint", a->checkpoint,
                  "write a checkpoint to this directory at every safe point (between stages); "
                  "SIGINT/SIGTERM then stop at the next one, resumable with --resume");
  cmd->add_option("--resume", a->resume,
                  "continue the run checkpointed in this directory (same input and options; --threads and "
                  "--max-seconds may differ), checkpointing there");
  return [a, cmd, groups] {
    if (auto e = method_option_problem(*cmd, a->method, *groups); !e.empty()) return fail("learn", kExitBadInput, e);
    if (a->m > kLearnerMaxHeads)
      return fail("learn", kExitBadInput,
                  "--m " + std::to_string(a->m) + ": the learner takes at most " + std::to_string(kLearnerMaxHeads) +
                      " heads (its report compares every permutation of them)");
    if (auto r = open_input(a->in); !r.error.empty()) return fail("learn", r.exit_code, r.error);
    const Instance* truth = a->in.instance ? &*a->in.instance : nullptr;
    LearnOptions o = a->o;
    o.m = a->m > 0 ? a->m : truth ? truth->m() : 0;
    if (o.m < 1) return fail("learn", kExitBadInput, "with --x/--y give the number of heads with --m");
    if (truth && o.m != truth->m()) return fail("learn", kExitBadInput, "--m differs from the instance's number of heads");
    const SampleSource& source = *a->in.source;
    if (auto e = parse_oracle_stages(a->oracle, o.oracle); !e.empty()) return fail("learn", kExitBadInput, "--oracle: " + e);
    if (o.oracle.any() && !truth) return fail("learn", kExitBadInput, "--oracle needs the true instance, not --x/--y");
    if (o.oracle.any() && a->method != "paper") return fail("learn", kExitBadInput, "--oracle applies to --method paper");
    if (a->method != "paper" && !(a->checkpoint.empty() && a->resume.empty()))
      return fail("learn", kExitBadInput, "--checkpoint and --resume apply to --method paper");
    if (!a->checkpoint.empty() && !a->resume.empty() && a->checkpoint != a->resume)
      return fail("learn", kExitBadInput, "--checkpoint and --resume name different directories (--resume keeps "
                                          "checkpointing in its own)");
    if (a->method == "random-polish") {
      RandomPolishOptions rp = a->random_polish;
      rp.m = o.m;
      rp.threads = a->o.threads;
      rp.max_seconds = a->o.max_seconds;
      rp.test_samples = a->o.test_samples;
      rp.radius = a->o.sculpt.sculpt.radius;
      rp.init_seed = a->adam.init_seed;
      // Shared flags whose Adam defaults mean something else here: used only when given.
      rp.max_samples = cmd->count("--max-samples") ? a->adam.max_samples : 0;
      rp.init_theta_norm = cmd->count("--init-theta-norm") ? a->adam.init_theta_norm : 0;
      if (auto e = check_learn_input(source.k(), source.d(), o.m); !e.empty()) return fail("learn", kExitBadInput, e);
      return run_random_polish(a->in, rp, a->report, a->out);
    }
    if (a->method == "adam") {
      AdamOptions adam = a->adam;
      parse_adam_init(a->init, adam.init);
      adam.threads = a->o.threads;
      adam.max_seconds = a->o.max_seconds;
      adam.test_samples = a->o.test_samples;
      if (adam.stop_parameter_error > 0 && !a->in.instance)
        return fail("learn", kExitBadInput, "--stop-at-error needs the true instance, not --x/--y");
      if (adam.max_samples == 0 && adam.max_seconds <= 0)
        return fail("learn", kExitBadInput, "--max-samples 0 needs a --max-seconds budget for the schedule");
      return run_adam(a->in, adam, o.m, a->report, a->out);
    }
    if (auto e = check_learn_input(source.k(), source.d(), o.m); !e.empty()) return fail("learn", kExitBadInput, e);
    if (source.k() * o.m > source.d())
      std::fprintf(stderr, "mhalearn learn: warning: k·m = %d > d = %d, the certification lemma does not apply\n",
                   source.k() * o.m, source.d());
    o.polish = !a->no_polish;
    o.reference = !a->no_reference;
    o.test_seed = a->in.seed;
    if (cmd->count("--assume-label-noise") == 0) o.label_noise = a->in.label_noise;
    if (auto e = learn_fast_paths(o); !e.empty()) return fail("learn", kExitBadInput, e);
    if (o.final_rounds > 1 && (o.variant != LearnVariant::extended || o.final_sculpt_samples < 0))
      return fail("learn", kExitBadInput, "--final-rounds: final rounds belong to the extended variant with a final round "
                                          "(not --variant paper, not --final-sculpt-samples -1)");
    o.net.processes = net_processes();  // stage 6 over the ranks of an MPI job (same bytes as one process)
    if (process_count() > 1 && (!a->checkpoint.empty() || !a->resume.empty()))
      return fail("learn", kExitBadInput,
                  "--checkpoint and --resume are not available under mpirun (the ranks would have to agree on every stop)");
    json options = {{"instance", a->in.instance_path}, {"x", a->in.x_path}, {"y", a->in.y_path}, {"seed", a->in.seed},
                    {"m", o.m}, {"variant", to_string(o.variant)}, {"final_sculpt_samples", o.final_sculpt_samples},
                    {"stage1_samples", o.stage1_samples}, {"rounds", o.max_rounds},
                    {"sculpt_samples", o.sculpt.sculpt.max_samples}, {"crude_sculpt_samples", o.crude_sculpt_samples}, {"constraints", o.sculpt.sculpt.target_constraints},
                    {"margin_samples", o.margin.max_samples}, {"accept_fraction", o.margin.accept_fraction},
                    {"radius", o.sculpt.sculpt.radius}, {"net_tuples", o.net.max_tuples}, {"polish", o.polish},
                    {"reference", o.reference}, {"max_seconds", o.max_seconds}, {"threads", o.threads},
                    {"label_noise", a->in.label_noise}, {"assume_label_noise", o.label_noise},
                    {"final_fit_samples", o.final_fit_samples}};
    const std::vector<std::string> oracles = oracle_stage_names(o.oracle);
    if (!oracles.empty()) options["oracle"] = oracles;
    // Only when given, so that reports made before the option read the same.
    if (o.margin.target_events != 0) options["margin_events"] = o.margin.target_events;
    if (o.final_rounds != 1) options["final_rounds"] = o.final_rounds;
    if (process_count() > 1) options["processes"] = process_count();
    const json provenance = make_provenance("learn", options);
    SafePoints points;
    points.dir = a->resume.empty() ? a->checkpoint : a->resume;
    points.match = resume_match(options, a->in);
    points.provenance = provenance;
    if (auto e = stop_at_from_environment(points.stop_at); !e.empty()) return fail("learn", kExitBadInput, e);
    std::optional<LearnState> resume;
    if (!a->resume.empty()) {
      if (auto e = read_resume(a->resume, points.match, provenance, source.k(), source.d(), o, resume); !e.empty())
        return fail("learn", kExitBadInput, "--resume: " + e);
    } else if (!a->checkpoint.empty()) {
      if (has_checkpoint(a->checkpoint))
        return fail("learn", kExitBadInput, "--checkpoint " + a->checkpoint +
                                                " already holds a checkpoint: continue it with --resume, or remove it");
      // Now rather than after stage 1.
      std::error_code ec;
      std::filesystem::create_directories(a->checkpoint, ec);
      if (ec) return fail("learn", kExitBadInput, "--checkpoint: cannot create " + a->checkpoint + ": " + ec.message());
    }
    o.at_safe_point = [&points](const LearnState& state) { return points(state); };
    std::printf("mhalearn learn: (d,k,m) = (%d,%d,%d), %s, %d threads\n", source.d(), source.k(), o.m,
                truth ? ("oracle of " + a->in.instance_path + ", seed " + std::to_string(a->in.seed)).c_str()
                      : ("dataset of " + std::to_string(source.available()) + " samples").c_str(),
                o.threads);
    if (!oracles.empty()) {
      std::string list;
      for (const auto& name : oracles) {
        if (!list.empty()) list += ", ";
        list += name;
      }
      std::printf("stages replaced by the truth: %s\n", list.c_str());
    }
    if (resume) std::printf("resuming %s from %s\n", safe_point_name(*resume).c_str(), a->resume.c_str());
    std::printf("\n");
    LearnResult r;
    {
      const StopSignals signals;
      try {
        r = learn_layer(source, o, truth, resume ? &*resume : nullptr);
      } catch (const std::invalid_argument& e) {
        if (!resume) throw;
        return fail("learn", kExitBadInput, "--resume: " + a->resume + ": " + e.what());  // other samples
      }
    }
    std::printf("%s", format_table(r.report).c_str());
    if (!points.dir.empty() && !r.report.interrupted)
      std::fprintf(stderr, "mhalearn learn: %lld checkpoints written to %s in %.2f s\n", points.reached,
                   points.dir.c_str(), points.seconds);
    if (r.report.interrupted) return report_interrupted(r.report, points, a->report, provenance);
    if (!a->report.empty() && prints_and_writes()) {
      json rep = to_json(r.report);
      rep["provenance"] = provenance;
      if (auto e = write_json_atomically(a->report, rep); !e.empty()) return fail("learn", kExitFailedRun, e);
    }
    if (!r.report.ok) return fail("learn", kExitFailedRun, r.report.message);
    if (!a->out.empty() && prints_and_writes()) {
      Instance learned;
      learned.layer = r.layer;
      learned.k = source.k();
      learned.inputs = source.draw(0, 1, 1).x.kind;  // as the data were drawn
      learned.provenance_json = provenance.dump();
      if (auto e = write_instance(a->out, learned); !e.empty()) return fail("learn", kExitFailedRun, e);
    }
    return learner_exit_status("learn", r.report);
  };
}

}  // namespace mha::cli
