#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace mha {
struct LearnOptions;  // learn/learner.hpp: kept out of every subcommand's includes
struct LearnReport;
}  // namespace mha

namespace mha::cli {

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

// The learner's budget and switch options, shared by learn and demo.
void add_learn_options(CLI::App* cmd, LearnOptions& o, bool& no_polish, bool& no_reference);

// The end of a learn or demo whose files are written: every diagnostic marked as a
// warning on stderr (a statistical outcome: the exit status stays 0), then exit 4
// with one line when a reference row disagrees (README, "Exit status").
int learner_exit_status(const char* command, const LearnReport& report);

}  // namespace mha::cli
