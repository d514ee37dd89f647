// The options of `learn`, defined once. Each row of learn_option_table() is one
// option: its flag, the methods that read it, the field it sets, its range,
// its help and how the report records it. learn's and demo's declarations
// (schema.hpp) are made from it (learn_table_options), so the command line,
// Python, help() and docs/options.md all show it, and the report's options
// record is made from it (learn_options_record).
#pragma once

#include "commands/schema.hpp"

#include "baseline/adam.hpp"
#include "baseline/random_polish.hpp"
#include "data/oracle.hpp"
#include "learn/learner.hpp"

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <variant>
#include <vector>

namespace mha::commands {

// Which `--method` values read an option (a bit set).
enum LearnMethods : unsigned { kMethodPaper = 1, kMethodAdam = 2, kMethodRandomPolish = 4, kMethodsAll = 7 };

// Everything `learn` reads, for every method, as given; learn_settings_problem
// checks it and the *_options functions turn it into one method's options.
struct LearnSettings {
  std::string method = "paper";
  std::string variant = "extended";
  std::string init = "random";  // adam's starting point
  std::string oracle;           // stages replaced by the truth, comma-separated
  bool no_polish = false, no_reference = false;
  double label_noise = 0;       // the input's (commands/input.hpp): noise added to every label
  std::string checkpoint, resume;
  bool resume_other_build = false;  // accept a checkpoint of another build (learn_checkpoints.hpp)
  LearnOptions paper;
  AdamOptions adam;
  RandomPolishOptions random_polish;
  LearnSettings();
};

using LearnField = std::variant<int*, int64_t*, uint64_t*, double*, bool*, std::string*>;

// How the report's options record keeps an option.
enum class Recorded { always, when_changed, never };

struct LearnOptionSpec {
  const char* flag;     // as the CLI spells it
  unsigned methods;     // LearnMethods
  LearnField (*field)(LearnSettings&);
  const char* help;
  Range range = {};                    // numbers: the values allowed
  const char* choices = nullptr;       // "paper|extended": the values a text option takes
  const char* default_text = nullptr;  // when the default is not the field's initial value
  Recorded recorded = Recorded::always;  // when_changed: added after reports were published
  const char* keyword = nullptr;       // Python's name when not the flag's (--no-polish: polish, negated)
  bool negated = false;                // keyword = !flag
  bool input = false;                  // declared with the input options (commands/input.hpp), not by learn
  Role role = Role::setting;           // --checkpoint and --resume name folders
};

const std::vector<LearnOptionSpec>& learn_option_table();

// Python's keyword (and the record's key) of `spec`: "final_rounds", "polish".
std::string learn_keyword(const LearnOptionSpec& spec);
const LearnOptionSpec* find_learn_option_by_flag(const std::string& flag);
const LearnOptionSpec* find_learn_option_by_keyword(const std::string& keyword);

// The default as --help, help() and docs/options.md print it.
std::string learn_default_text(const LearnOptionSpec& spec);
// "paper, adam": the methods that read `spec`.
std::string learn_methods_text(unsigned methods);

// `flag` (a row's, as the CLI spells it) as `spelling` spells it: "--final-rounds" or "final_rounds".
std::string spell_flag(const char* flag, Spelling spelling);

// The rows `methods` read, but the input rows and those in `skip`, as options
// of a command's declaration (learn: all of them; demo: the paper learner's).
std::vector<Option> learn_table_options(unsigned methods, const std::set<std::string>& skip);
// The settings the arguments give (each row's field: the value given, else its default).
LearnSettings learn_settings_from(const Arguments& args);
// The table's flags the arguments give.
std::set<std::string> given_learn_flags(const Arguments& args);

// "" or the one-line reason the settings cannot run: a value outside its
// choices, an option given (`given`: flags) that the method does not read, the
// combinations the methods refuse. `has_truth`: the samples come from an instance.
std::string learn_settings_problem(const LearnSettings& s, const std::set<std::string>& given, bool has_truth,
                                   Spelling spelling);

// One method's options from checked settings (`given`: the flags given; m, the
// heads; test_seed, the samples' seed). Random-polish reads --max-samples and
// --init-theta-norm only when given (their defaults are Adam's).
LearnOptions paper_options(const LearnSettings& s, const std::set<std::string>& given, int m, uint64_t test_seed);
AdamOptions adam_options(const LearnSettings& s, int m, uint64_t test_seed);
RandomPolishOptions random_polish_options(const LearnSettings& s, const std::set<std::string>& given, int m,
                                          uint64_t test_seed);

// The report's options record: every option the method reads (as recorded),
// with `source` (where the samples came from: instance path or arrays, seed)
// merged in.
nlohmann::json learn_options_record(const LearnSettings& s, const std::set<std::string>& given, int m,
                                    const nlohmann::json& source);

// What every learn run writes, made here only (the CLI's --report and -o, the
// Python module's return values): the report with its provenance, and the
// learned layer as an instance whose inputs are drawn as the samples were.
nlohmann::json learn_report_record(nlohmann::json report, const nlohmann::json& provenance);
Instance learned_instance(const Layer& layer, const SampleSource& source, const nlohmann::json& provenance);

}  // namespace mha::commands
