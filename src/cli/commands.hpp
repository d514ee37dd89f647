#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <set>
#include <string>

namespace mha {
namespace cli { struct LearnSettings; }  // cli/learn_settings.hpp: kept out of every subcommand's includes
struct LearnReport;
}  // namespace mha

namespace mha::cli {

// --threads defaulting to the machine's cores, which --help says in words (the
// help is the same on every machine; Python's signatures say the same).
inline CLI::Option* add_threads_option(CLI::App* cmd, int& threads, const std::string& help) {
  return cmd->add_option("--threads", threads, help)->default_str("the machine's cores");
}

// Each registers its subcommand on `app` and returns the function that runs it.
using Runner = std::function<int()>;
Runner add_generate(CLI::App& app);
Runner add_check(CLI::App& app);
Runner add_sample(CLI::App& app);
Runner add_forward(CLI::App& app);
Runner add_import(CLI::App& app);
Runner add_demo(CLI::App& app);
Runner add_hard(CLI::App& app);
Runner add_stage1(CLI::App& app);
Runner add_sculpt(CLI::App& app);
Runner add_study_wsum(CLI::App& app);
Runner add_learn(CLI::App& app);
Runner add_verify(CLI::App& app);

// The rows of learn's option table (cli/learn_settings.hpp) that `methods` read,
// but those in `skip`, as flags of `cmd` bound to `s`: learn registers them
// all, demo the learner's budgets and switches.
void add_learn_table_options(CLI::App* cmd, LearnSettings& s, unsigned methods, const std::set<std::string>& skip);
// The table's flags given on `cmd`'s command line.
std::set<std::string> given_learn_flags(const CLI::App& cmd);

// The end of a learn or demo whose files are written: every diagnostic marked as a
// warning on stderr (a statistical outcome: the exit status stays 0), then exit 4
// with one line when a reference row disagrees (README, "Exit status").
int learner_exit_status(const char* command, const LearnReport& report);

}  // namespace mha::cli
