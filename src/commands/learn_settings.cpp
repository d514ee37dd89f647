#include "commands/learn_settings.hpp"


#include "commands/status.hpp"
#include "util/format.hpp"
#include "util/resources.hpp"

#include <cstdio>

namespace mha::commands {

using nlohmann::json;

LearnSettings::LearnSettings() {
  paper.threads = default_threads();
}

namespace {

constexpr unsigned kPaper = kMethodPaper, kAdam = kMethodAdam, kRandomPolish = kMethodRandomPolish;

// Field accessors: a captureless lambda per row keeps the table one literal.
#define MHA_FIELD(expr) [](LearnSettings& s) -> LearnField { return &s.expr; }

const std::vector<LearnOptionSpec> kTable = {
    {"--method", kMethodsAll, MHA_FIELD(method),
     "paper: the six stages (+ polishing); adam: gradient training of the same form; random-polish: polishing "
     "alone from random starts", {},
     "paper|adam|random-polish", nullptr, Recorded::never},
    {"--variant", kPaper, MHA_FIELD(variant),
     "paper: the stages as the paper writes them; extended: the project's choices (docs/variants.md)", {},
     "paper|extended"},
    {"--final-sculpt-samples", kPaper, MHA_FIELD(paper.final_sculpt_samples),
     "extended: sample budget of the final stage-4 round (0: 2.56e8 for m = 3, 3.2e7 otherwise; -1: no final round)", range(-1, two_to(40))},
    {"--final-rounds", kPaper, MHA_FIELD(paper.final_rounds),
     "extended: final stage-4 rounds, each with twice the samples of the one before and stage 3 (the last final "
     "round's heads as proxies) between two (0: a second one when the first's validation error is above "
     "0.36e-6 plus the declared label noise squared)", range(0, 4),
     nullptr, nullptr, Recorded::when_changed},
    {"--threads", kMethodsAll, MHA_FIELD(paper.threads), "worker threads (results do not depend on it)", range(1, 256), nullptr,
     "the machine's cores"},
    {"--max-seconds", kMethodsAll, MHA_FIELD(paper.max_seconds), "time budget: no new round starts after it (0: none)", range(0, 1e7)},
    {"--stage1-samples", kPaper, MHA_FIELD(paper.stage1_samples), "samples of stage 1", range(1, two_to(40))},
    {"--rounds", kPaper, MHA_FIELD(paper.max_rounds), "most sculpt/refine rounds (stages 2 or 4, then 3)", range(1, 20)},
    {"--sculpt-samples", kPaper, MHA_FIELD(paper.sculpt.sculpt.max_samples), "sample budget of each sculpt round", range(1, two_to(36))},
    {"--crude-sculpt-samples", kPaper, MHA_FIELD(paper.crude_sculpt_samples),
     "sample budget of round 0 (0: as --sculpt-samples)", range(0, two_to(36))},
    {"--constraints", kPaper, MHA_FIELD(paper.sculpt.sculpt.target_constraints), "slabs each sculpt round aims for (0: 3·d²)", range(0, two_to(24))},
    {"--margin-samples", kPaper, MHA_FIELD(paper.margin.max_samples), "sample budget of each stage-3 round", range(1, two_to(36))},
    {"--margin-events", kPaper, MHA_FIELD(paper.margin.target_events),
     "stage 3: large-margin events each round collects before it fits W_Σ (0: 16·d)", range(0, two_to(30)), nullptr, nullptr,
     Recorded::when_changed},
    {"--accept-fraction", kPaper, MHA_FIELD(paper.margin.accept_fraction),
     "stage 3: accept this top fraction of proxy margins", range(1e-9, 1)},
    {"--radius", kPaper | kRandomPolish, MHA_FIELD(paper.sculpt.sculpt.radius),
     "R: the body and the net live in ‖Θ‖_F ≤ R (random-polish: its starts' scale)", range(1e-3, 1e6)},
    {"--net-tuples", kPaper, MHA_FIELD(paper.net.max_tuples), "stage 6: most tuples of the exhaustive net", range(1, two_to(32))},
    {"--validation-samples", kPaper, MHA_FIELD(paper.validation_samples),
     "samples of the validation set every round's selection shares", range(1, two_to(28)), nullptr, nullptr, Recorded::when_changed},
    {"--test-samples", kMethodsAll, MHA_FIELD(paper.test_samples), "fresh samples for the test error (instances only)", range(0, two_to(28))},
    {"--reference-max-unknowns", kPaper, MHA_FIELD(paper.reference_max_unknowns),
     "run the reference paths only when d² is at most this (LPs/QP over d² unknowns)", range(1, two_to(20)), nullptr, nullptr,
     Recorded::when_changed},
    {"--label-noise", kMethodsAll, MHA_FIELD(label_noise),
     "add Gaussian noise of this relative size to every label (rms of the noise = this × rms of the sample's labels; "
     "drawn from --seed's label-noise stream)", range(0, 1e6),
     nullptr, nullptr, Recorded::always, nullptr, false, true},
    {"--assume-label-noise", kPaper, MHA_FIELD(paper.label_noise),
     "the labels' relative Gaussian noise as far as known: certification widens its slabs for it", range(0, 1),
     nullptr, "--label-noise"},
    {"--final-fit-samples", kPaper, MHA_FIELD(paper.final_fit_samples),
     "when polishing stops at a noise floor: the final fit's samples on an oracle (a dataset: all it has left); "
     "0: no final fit", range(0, two_to(36))},
    {"--polish-train-samples", kPaper, MHA_FIELD(paper.polish_options.samples),
     "polishing's training samples (0: max(256, 16·m·d/k, 2d²/(k(k−1))), the fewest that identify Θ while the "
     "softmax is not saturated)", range(0, two_to(24)), nullptr, nullptr, Recorded::when_changed},
    {"--polish-resamplings", kPaper, MHA_FIELD(paper.polish_resamplings),
     "when polishing's held-out samples contradict its fit (under-determined: a saturated softmax), polish "
     "again from the same start on 4× the samples, at most this many times (an oracle only; 0: polish once)",
     range(0, 8), nullptr, nullptr, Recorded::when_changed},
    {"--no-polish", kPaper, MHA_FIELD(no_polish), "stop after the paper's stages (no Levenberg–Marquardt polishing)", {},
     nullptr, nullptr, Recorded::always, "polish", true},
    {"--no-reference", kPaper, MHA_FIELD(no_reference),
     "skip the reference step (every stage's fast path against its reference path on the run's inputs)", {}, nullptr,
     nullptr, Recorded::always, "reference", true},
    {"--oracle", kPaper, MHA_FIELD(oracle),
     "stages to replace by the truth, comma-separated (stage1, hull = stages 2/4/5, stage3, stage6): the other "
     "stages then report their own error (needs an instance)", {},
     nullptr, nullptr, Recorded::never},
    {"--checkpoint", kPaper, MHA_FIELD(checkpoint),
     "write a checkpoint to this directory at every safe point (between stages); SIGINT/SIGTERM then stop at the "
     "next one, resumable with --resume", {},
     nullptr, nullptr, Recorded::never, nullptr, false, false, Role::folder_out},
    {"--resume", kPaper, MHA_FIELD(resume),
     "continue the run checkpointed in this directory (same input and options; --threads and --max-seconds may "
     "differ), checkpointing there", {},
     nullptr, nullptr, Recorded::never, nullptr, false, false, Role::folder_inout},
    {"--resume-other-build", kPaper, MHA_FIELD(resume_other_build),
     "with --resume: accept a checkpoint written by another build of mhalearn, whose steps may give other bytes "
     "(the report names that build and its last safe point under provenance.earlier_builds)", {},
     nullptr, nullptr, Recorded::never},
    {"--max-samples", kAdam | kRandomPolish, MHA_FIELD(adam.max_samples),
     "adam: training samples, the horizon of the cosine schedule (0: the schedule runs on --max-seconds); "
     "random-polish: most samples drawn (not given: no sample budget)", range(0, two_to(40))},
    {"--batch", kAdam, MHA_FIELD(adam.batch), "adam: batch size", range(1, two_to(24))},
    {"--learning-rate", kAdam, MHA_FIELD(adam.learning_rate), "adam: peak learning rate (cosine decay to 0)", range(1e-12, 10)},
    {"--init", kAdam, MHA_FIELD(init), "adam: starting point (symmetric: every head equal)", {}, "random|symmetric"},
    {"--stop-at-error", kAdam, MHA_FIELD(adam.stop_parameter_error),
     "adam, studies: stop once the max Θ and W errors against the instance are at most this (0: never)", range(0, 1)},
    {"--init-seed", kAdam | kRandomPolish, MHA_FIELD(adam.init_seed),
     "adam, random-polish: seed of the starting point(s)", {}},
    {"--init-theta-norm", kAdam | kRandomPolish, MHA_FIELD(adam.init_theta_norm),
     "adam: ‖Θ_i‖_F at the start (random-polish: not given, R·uniform[0,1) per head)", range(0, 1e6)},
    {"--starts", kRandomPolish, MHA_FIELD(random_polish.starts), "random-polish: most random starts", range(1, two_to(20))},
    {"--polish-samples", kRandomPolish, MHA_FIELD(random_polish.polish.samples),
     "random-polish: training samples of each fit (0: 4× polishing's default)", range(0, two_to(24))},
    {"--polish-iterations", kRandomPolish, MHA_FIELD(random_polish.polish.max_iterations),
     "random-polish: most Levenberg–Marquardt iterations per start", range(1, 100000)},
};

#undef MHA_FIELD

json field_json(LearnField field, bool negated) {
  return std::visit(
      [negated](auto* p) -> json {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, bool>) return negated ? !*p : *p;
        else return *p;
      },
      field);
}

std::string field_text(LearnField field) {
  return std::visit(
      [](auto* p) -> std::string {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, bool>) return *p ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>) return *p;
        else if constexpr (std::is_same_v<T, double>) return format("%g", *p);
        else return std::to_string(*p);
      },
      field);
}

bool in_choices(const char* choices, const std::string& value) {
  const std::string list = std::string("|") + choices + "|";
  return !value.empty() && value.find('|') == std::string::npos && list.find("|" + value + "|") != std::string::npos;
}

std::string method_owner(unsigned methods, Spelling spelling) {
  const std::string method = spelling == Spelling::cli ? "--method " : "method ";
  if (methods & kPaper) return "the learner's (" + method + "paper)";
  if (methods & kAdam) return "Adam's (" + method + "adam)";
  return "random-polish's";
}

unsigned method_bit(const std::string& method) {
  return method == "paper" ? kPaper : method == "adam" ? kAdam : kRandomPolish;
}

// An option given that the chosen method does not read: "" or the reason.
std::string unread_option_problem(const LearnSettings& s, const std::set<std::string>& given, Spelling spelling) {
  for (const LearnOptionSpec& spec : learn_option_table())
    if (given.count(spec.flag) && !(spec.methods & method_bit(s.method)))
      return spell_flag(spec.flag, spelling) + " does not apply to " + (spelling == Spelling::cli ? "--method " : "method ") +
             s.method + " (it is " + method_owner(spec.methods, spelling) + ")";
  return "";
}

std::string choice_problem(const LearnSettings& s, Spelling spelling) {
  for (const LearnOptionSpec& spec : learn_option_table()) {
    if (!spec.choices) continue;
    LearnSettings copy = s;
    const std::string value = *std::get<std::string*>(spec.field(copy));
    if (!in_choices(spec.choices, value))
      return spell_flag(spec.flag, spelling) + ": '" + value + "' is not one of " + spec.choices;
  }
  return "";
}

std::string paper_problem(const LearnSettings& s, bool has_truth, Spelling sp) {
  OracleStages oracle;
  if (auto e = parse_oracle_stages(s.oracle, oracle); !e.empty()) return spell_flag("--oracle", sp) + ": " + e;
  if (oracle.any() && !has_truth) return spell_flag("--oracle", sp) + " needs the true instance, not data";
  if (!s.checkpoint.empty() && !s.resume.empty() && s.checkpoint != s.resume)
    return spell_flag("--checkpoint", sp) + " and " + spell_flag("--resume", sp) +
           " name different directories (resuming keeps checkpointing in its own)";
  if (s.resume_other_build && s.resume.empty())
    return spell_flag("--resume-other-build", sp) + " applies only with " + spell_flag("--resume", sp);
  if (s.paper.final_rounds > 1 && (s.variant != "extended" || s.paper.final_sculpt_samples < 0))
    return spell_flag("--final-rounds", sp) + ": final rounds belong to the extended variant with a final round "
           "(not variant paper, not final sculpt samples -1)";
  return "";
}

std::string adam_problem(const LearnSettings& s, bool has_truth, Spelling sp) {
  if (s.adam.stop_parameter_error > 0 && !has_truth) return spell_flag("--stop-at-error", sp) + " needs the true instance, not data";
  if (s.adam.max_samples == 0 && s.paper.max_seconds <= 0)
    return spell_flag("--max-samples", sp) + " 0 needs a " + spell_flag("--max-seconds", sp) + " budget for the schedule";
  return "";
}

}  // namespace

std::string spell_flag(const char* flag, Spelling spelling) {
  if (spelling == Spelling::cli) return flag;
  const LearnOptionSpec* spec = find_learn_option_by_flag(flag);
  return spec ? learn_keyword(*spec) : flag;
}

const std::vector<LearnOptionSpec>& learn_option_table() { return kTable; }

std::string learn_keyword(const LearnOptionSpec& spec) {
  if (spec.keyword) return spec.keyword;
  std::string name = std::string(spec.flag).substr(2);
  for (char& c : name) c = c == '-' ? '_' : c;
  return name;
}

const LearnOptionSpec* find_learn_option_by_flag(const std::string& flag) {
  for (const LearnOptionSpec& spec : kTable)
    if (flag == spec.flag) return &spec;
  return nullptr;
}

const LearnOptionSpec* find_learn_option_by_keyword(const std::string& keyword) {
  for (const LearnOptionSpec& spec : kTable)
    if (keyword == learn_keyword(spec)) return &spec;
  return nullptr;
}

std::string learn_default_text(const LearnOptionSpec& spec) {
  if (spec.default_text) return spec.default_text;
  LearnSettings defaults;
  return field_text(spec.field(defaults));
}

std::string learn_methods_text(unsigned methods) {
  std::string out;
  for (const auto& [bit, name] : {std::pair{kPaper, "paper"}, {kAdam, "adam"}, {kRandomPolish, "random-polish"}})
    if (methods & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

std::string learn_settings_problem(const LearnSettings& s, const std::set<std::string>& given, bool has_truth,
                                   Spelling spelling) {
  if (auto e = choice_problem(s, spelling); !e.empty()) return e;
  if (auto e = unread_option_problem(s, given, spelling); !e.empty()) return e;
  if (s.method == "paper") return paper_problem(s, has_truth, spelling);
  if (s.method == "adam") return adam_problem(s, has_truth, spelling);
  return "";
}

LearnOptions paper_options(const LearnSettings& s, const std::set<std::string>& given, int m, uint64_t test_seed) {
  LearnOptions o = s.paper;
  o.m = m;
  o.variant = s.variant == "paper" ? LearnVariant::paper : LearnVariant::extended;
  o.polish = !s.no_polish;
  o.reference = !s.no_reference;
  o.test_seed = test_seed;
  if (!given.count("--assume-label-noise")) o.label_noise = s.label_noise;
  parse_oracle_stages(s.oracle, o.oracle);  // checked by learn_settings_problem
  return o;
}

AdamOptions adam_options(const LearnSettings& s, int m, uint64_t test_seed) {
  AdamOptions o = s.adam;
  parse_adam_init(s.init, o.init);  // checked by learn_settings_problem
  o.m = m;
  o.threads = s.paper.threads;
  o.max_seconds = s.paper.max_seconds;
  o.test_samples = s.paper.test_samples;
  o.test_seed = test_seed;
  return o;
}

RandomPolishOptions random_polish_options(const LearnSettings& s, const std::set<std::string>& given, int m,
                                          uint64_t test_seed) {
  RandomPolishOptions o = s.random_polish;
  o.m = m;
  o.threads = s.paper.threads;
  o.max_seconds = s.paper.max_seconds;
  o.test_samples = s.paper.test_samples;
  o.test_seed = test_seed;
  o.radius = s.paper.sculpt.sculpt.radius;
  o.init_seed = s.adam.init_seed;
  o.max_samples = given.count("--max-samples") ? s.adam.max_samples : 0;
  o.init_theta_norm = given.count("--init-theta-norm") ? s.adam.init_theta_norm : 0;
  return o;
}

json learn_options_record(const LearnSettings& settings, const std::set<std::string>& given, int m, const json& source) {
  LearnSettings s = settings;  // the values the method reads, where they differ from the fields
  if (!given.count("--assume-label-noise")) s.paper.label_noise = s.label_noise;
  if (s.method == "random-polish") {
    const RandomPolishOptions rp = random_polish_options(settings, given, m, 1);
    s.adam.max_samples = rp.max_samples;
    s.adam.init_theta_norm = rp.init_theta_norm;
  }
  json record = source;
  record["m"] = m;
  if (s.method != "paper") record["method"] = s.method;
  const LearnSettings defaults;
  for (const LearnOptionSpec& spec : learn_option_table()) {
    if (!(spec.methods & method_bit(s.method)) || spec.recorded == Recorded::never) continue;
    LearnSettings default_copy = defaults;
    const json value = field_json(spec.field(s), spec.negated);
    if (spec.recorded == Recorded::when_changed && value == field_json(spec.field(default_copy), spec.negated)) continue;
    record[learn_keyword(spec)] = value;
  }
  // The baselines' fixed settings, recorded as they always were.
  if (s.method == "adam")
    record.update({{"schedule", "cosine"}, {"beta1", s.adam.beta1}, {"beta2", s.adam.beta2}, {"epsilon", s.adam.epsilon},
                   {"validation_samples", s.adam.validation_samples}});
  if (s.method == "random-polish") record["validation_samples"] = s.random_polish.validation_samples;
  OracleStages oracle;
  parse_oracle_stages(s.oracle, oracle);
  if (oracle.any()) record["oracle"] = oracle_stage_names(oracle);
  return record;
}

namespace {

// A row as an option of a command's declaration: its type from its field,
// its default from the field's initial value.
Option table_option(const LearnOptionSpec& spec) {
  LearnSettings defaults;
  Option o{std::string(spec.flag).substr(2), Type::text, spec.help, spec.role};
  o.range = spec.range;
  o.methods = spec.methods;
  o.negated = spec.negated;
  if (spec.keyword) o.python_name = spec.keyword;
  std::visit(
      [&o](auto* field) {
        using T = std::remove_pointer_t<decltype(field)>;
        if constexpr (std::is_same_v<T, bool>) o.type = Type::flag, o.fallback = false;
        else if constexpr (std::is_same_v<T, std::string>) o.type = Type::text, o.fallback = *field;
        else if constexpr (std::is_same_v<T, double>) o.type = Type::number, o.fallback = *field;
        else if constexpr (std::is_same_v<T, uint64_t>) o.type = Type::seed, o.fallback = *field;
        else o.type = Type::integer, o.fallback = int64_t{*field};
      },
      spec.field(defaults));
  if (o.type == Type::text && std::get<std::string>(o.fallback).empty()) o.fallback = std::monostate{};
  if (spec.choices) {
    const std::string list = spec.choices;
    for (size_t at = 0; at <= list.size();) {
      const size_t bar = std::min(list.find('|', at), list.size());
      o.choices.push_back(list.substr(at, bar - at));
      at = bar + 1;
    }
  }
  o.default_text = o.type == Type::flag ? "" : learn_default_text(spec);
  if (spec.default_text) o.fallback = std::monostate{};  // decided by the command (the machine's cores, --label-noise)
  return o;
}

}  // namespace

std::vector<Option> learn_table_options(unsigned methods, const std::set<std::string>& skip) {
  std::vector<Option> out;
  for (const LearnOptionSpec& spec : learn_option_table())
    if (!spec.input && (spec.methods & methods) && !skip.count(spec.flag)) out.push_back(table_option(spec));
  return out;
}

LearnSettings learn_settings_from(const Arguments& a) {
  LearnSettings s;
  for (const LearnOptionSpec& spec : learn_option_table()) {
    const std::string name = std::string(spec.flag).substr(2);
    if (!a.values.count(name)) continue;
    const Value& v = a.values.at(name);
    std::visit(
        [&v](auto* field) {
          using T = std::remove_pointer_t<decltype(field)>;
          if constexpr (std::is_same_v<T, bool>) *field = std::get<bool>(v);
          else if constexpr (std::is_same_v<T, std::string>) *field = std::get<std::string>(v);
          else if constexpr (std::is_same_v<T, double>) *field = std::get<double>(v);
          else if constexpr (std::is_same_v<T, uint64_t>) *field = std::get<uint64_t>(v);
          else *field = static_cast<T>(std::get<int64_t>(v));
        },
        spec.field(s));
  }
  return s;
}

std::set<std::string> given_learn_flags(const Arguments& a) {
  std::set<std::string> given;
  for (const LearnOptionSpec& spec : learn_option_table())
    if (a.values.count(std::string(spec.flag).substr(2))) given.insert(spec.flag);
  return given;
}

json learn_report_record(json report, const json& provenance) {
  report["provenance"] = provenance;
  // What the run cost the machine, read as the report is written (docs/formats.md).
  report["provenance"]["resources"] = process_resources();
  return report;
}

Instance learned_instance(const Layer& layer, const SampleSource& source, const json& provenance) {
  Instance learned;
  learned.layer = layer;
  learned.k = source.k();
  learned.inputs = source.draw(0, 1, 1).x.kind;  // as the data were drawn
  learned.provenance_json = provenance.dump();
  return learned;
}

}  // namespace mha::commands
