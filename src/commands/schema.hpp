// Every subcommand declared once: its options, each with its type, range,
// default, help and role (a setting, an input file, an output file, a folder),
// and its run function, which returns the command's result. The command line
// (src/cli/, CLI11) and the Python module (python/module.cpp, pybind11) are
// loops over these declarations, and so are `mhalearn CMD --help`, Python's
// help() and docs/options.md (tests/docs/options_table.py compares all four).
//
// This layer knows neither CLI11 nor pybind11: a surface turns what the user
// gave (command-line text, Python objects) into Arguments, the run function
// computes, and the surface writes or returns the Result.
#pragma once

#include "data/npy.hpp"
#include "model/layer.hpp"
#include "util/processes.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace mha::commands {

// What a value is: an integer (int64), a seed (0..2^64-1), a real number, text,
// a switch, or a list of integers or of words (given comma-separated on the
// command line, as a list in Python).
enum class Type { integer, seed, number, text, flag, integers, texts };

// What a value names.
enum class Role {
  setting,       // a value the command reads
  instance_in,   // an instance file to read (Python: also an mhalearn.Instance)
  array_in,      // a .npy file to read (Python: also a numpy array)
  file_out,      // a file the command writes: the command line only (Python returns its content)
  folder_out,    // a folder the command writes into, created when missing
  folder_inout,  // a folder read and written again (learn --resume)
  printing,      // how the command line prints (--json, --quiet, --verbose): the command line only
};

// A closed range lo..hi, or (lo..hi] when lo_open; none when !set.
struct Range {
  double lo = 0, hi = 0;
  bool lo_open = false;
  bool set = false;
};
Range range(double lo, double hi, bool lo_open = false);
inline constexpr double two_to(int e) { return e == 0 ? 1.0 : 2.0 * two_to(e - 1); }

using Value = std::variant<std::monostate, bool, int64_t, uint64_t, double, std::string, std::vector<int64_t>,
                           std::vector<std::string>>;

struct Option {
  std::string name = {};  // the long flag without its dashes ("v-min"), or a positional's name ("instance")
  Type type = Type::text;
  std::string help = {};
  Role role = Role::setting;
  Range range = {};                       // integer and number options
  std::vector<std::string> choices = {};  // text options that take one of a few words
  Value fallback = {};                    // the default; monostate: none, the command decides (default_text says how)
  std::string default_text = {};          // the default as --help and help() show it ("" when none)
  bool required = false;
  bool positional = false;  // the command line's positional argument
  char short_flag = 0;      // 'o': -o
  bool sidecar = false;     // a file_out with a provenance sidecar beside it (PATH.json)
  std::string contract = {};  // an array_in: what the array may hold (file_kinds.hpp), for Python's dtype errors
  std::vector<std::string> needs = {}, excludes = {};  // option names
  int python_position = -1;     // Python's positional parameter index; -1: keyword-only
  std::string python_name = {};  // "" : the name with '-' as '_'
  bool negated = false;          // a flag whose Python keyword is its negation (--no-polish: polish=True)
  unsigned methods = 0;          // learn's options: the methods that read it (learn_settings.hpp); 0 otherwise

  // The option with this default (its text as help shows it: "6", "0.05", "boolean").
  Option with_default(Value value) const;
  // Whether Python takes it: all but the files the command line writes and its printing.
  bool in_python() const { return role != Role::file_out && role != Role::printing; }
  std::string flag() const;     // "--v-min", "-o,--output" as the usage names it; a positional's name
  std::string keyword() const;  // Python's: "v_min", "polish"
};

// How a message names an option: the command line's flag or Python's keyword.
enum class Spelling { cli, python };
// "--v-min" or "v_min": an option's name as `spelling` spells it.
std::string spell(const std::string& name, Spelling spelling);

struct Command;

// What the caller gave, checked (set_value): values by option name, and for
// Python the objects given in place of files.
struct Arguments {
  const Command* command = nullptr;
  Spelling spelling = Spelling::cli;
  std::map<std::string, Value> values;
  std::map<std::string, Instance> instances;  // instance_in options given as an mhalearn.Instance
  std::map<std::string, NpyArray> arrays;     // array_in options given as a numpy array

  bool given(const std::string& name) const;
  // The value given, else the option's default. std::logic_error when it has
  // neither or is of another type: a bug in the command, not bad input.
  int64_t integer(const std::string& name) const;
  uint64_t seed(const std::string& name) const;
  double number(const std::string& name) const;
  const std::string& text(const std::string& name) const;  // "" when not given and no default
  bool flag(const std::string& name) const;
  std::vector<int64_t> integers(const std::string& name) const;
  std::vector<std::string> texts(const std::string& name) const;
  int threads(const std::string& name = "threads") const;  // the machine's cores when not given
  // "--v-min" or "v_min": the option as the caller spelled it.
  std::string spell(const std::string& name) const;
};

// What a file_out option holds once the command has run: the command line
// writes it (as a set, nothing published until every file is complete), Python
// returns it.
struct Output {
  std::optional<nlohmann::json> document;  // a JSON file
  std::optional<Instance> instance;        // an instance file
  std::optional<std::string> text;         // a text file
  std::optional<nlohmann::json> sidecar;   // the provenance sidecar of an array streamed to the file
};

struct Result {
  int status = 0;                          // the exit status (README, "Exit status")
  std::string error;                       // one line, when status ≠ 0
  nlohmann::json value;                    // what Python returns as a dict or list (a report, rows)
  std::map<std::string, Output> outputs;   // by option name: what the given files receive
  std::string summary;                     // what the command line prints once its files are written

  Result& failed(int code, std::string message) {
    status = code;
    error = std::move(message);
    return *this;
  }
};

// A streamed array output (sample's --x and --y, forward's -o): blocks in order.
struct ArrayOut {
  virtual ~ArrayOut() = default;
  virtual std::string append_int8(const int8_t* data, int64_t count) = 0;
  virtual std::string append_float64(const double* data, int64_t count) = 0;
};

// An object that undoes something when destroyed (the command line's stop signals).
struct Scope {
  virtual ~Scope() = default;
};

// What a command needs of the surface that runs it.
struct Context {
  // Text as it is made: the command line prints it at once, Python collects it.
  std::function<void(const std::string&)> print = [](const std::string&) {};
  // A line the user should act on: "warning: ..." on stderr, Python's warnings.warn.
  std::function<void(const std::string&)> warn = [](const std::string&) {};
  // What --verbose prints (the learner's diagnostics: statistical outcomes, in its report).
  bool verbose = false;
  std::function<void(const std::string&)> note = [](const std::string&) {};
  // The provenance record of a command with these options (Python's adds "interface": "python").
  std::function<nlohmann::json(const std::string& command, const nlohmann::json& options)> provenance;
  // The streamed array output of a file_out option (its path for the command
  // line, an array for Python): "" or why it cannot be opened.
  std::function<std::string(const std::string& option, const std::vector<int64_t>& shape, NpyDtype dtype,
                            std::unique_ptr<ArrayOut>& out)>
      open_array;
  // learn under mpirun: the ranks that share the loops; only the one that
  // writes prints and writes files.
  Processes processes;
  bool writes = true;
  // learn: SIGINT and SIGTERM stop the run at its next safe point while the returned object lives.
  std::function<std::unique_ptr<Scope>()> stop_on_signals = [] { return std::unique_ptr<Scope>(); };
};

struct Command {
  std::string name;         // "study-wsum"
  std::string python_name;  // "study_wsum", "import_attention"; "" when Python has no function for it
  std::string summary;      // one line: --help's first line and help()'s
  std::vector<Option> options;
  std::function<Result(Arguments&, Context&)> run;

  const Option* find(const std::string& name) const;
  const Option* find_keyword(const std::string& keyword) const;
};

// Every subcommand, in the order `mhalearn --help` lists them.
const std::vector<Command>& commands();
const Command* find_command(const std::string& name);

// ---- Values -----------------------------------------------------------------

// The command line's text as a value of the option's type: "" or why not
// ("'abc' is not an integer", "'-1' is not a seed ...").
std::string parse_text(const Option& option, const std::string& text, Value& out);
// "" or why the value is not allowed: out of range, not one of the choices.
std::string check_value(const Option& option, const Value& value);
// Checks and stores a value (parse_text's or Python's): "" or why not.
std::string set_value(Arguments& args, const Option& option, Value value);
// Required options, and what an option needs or excludes: "" or the first problem, spelled.
std::string check_combinations(const Arguments& args);

// "1024", "2^40", "1e-06": a range end as messages and help print it.
std::string format_bound(double v, bool integer);
// "1..256", "(0..1]", "" for none; choices as "fast, reference".
std::string format_range(const Option& option);
// "integer", "number", "text", ...: the type as help() and docs/options.md name it.
const char* type_name(Type type);
// The schema as data (each command with its options): Python's help() and
// docs/options.md are made from it.
nlohmann::json commands_json();

// ---- Options several commands share: each declared once ---------------------

namespace option {
Option threads(std::string help = "worker threads (results do not depend on it)");
Option seed(std::string help);
Option d(std::string help = "token dimension d");
Option k(std::string help = "sequence length k");
Option m(std::string help = "number of heads m");
Option scale(std::string help);
Option inputs();
Option precision(std::string help);
Option max_seconds(std::string help);
Option label_noise();
Option output(std::string help);
Option report(std::string help = "JSON report to write");
Option json_flag(std::string help);
Option instance_file(std::string help);
}  // namespace option

}  // namespace mha::commands
