// mhalearn: the command-line tool. Each subcommand lives in its own file.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/option_ranges.hpp"
#include "cli/outputs.hpp"
#include "cli/processes.hpp"
#include "cli/stop_signals.hpp"
#include "data/oracle.hpp"
#include "data/provenance.hpp"
#include "geometry/convex_body.hpp"
#include "util/progress.hpp"
#include "version.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <optional>
#include <string>

#include <malloc.h>

namespace {

using namespace mha::cli;

bool g_quiet = false;

// One range per option name everywhere (cli/option_ranges.hpp), checked on the
// text before it is converted, so "abc" says it is not a number and "-1" is not
// a seed; and --quiet on every subcommand.
void add_option_checks(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands({})) {
    for (CLI::Option* opt : sub->get_options()) {
      for (const std::string& name : opt->get_lnames()) {
        const std::string flag = "--" + name;
        if (flag == "--seed" || flag == "--sample-seed" || flag == "--init-seed") {
          opt->check(CLI::Validator([](std::string& text) { return seed_problem(text); }, "in 0..2^64-1"));
        } else if (const OptionRange* r = find_option_range(flag)) {
          opt->check(CLI::Validator([r](std::string& text) { return range_problem(*r, text); }, "in " + format_range(*r)));
        }
      }
    }
    sub->add_flag("--quiet", g_quiet, "no progress lines on stderr (a terminal's bar, or a log's line every 10 s)");
  }
}

// The parse error as one line: an unknown subcommand is named as such.
std::string parse_error_line(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-') {
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
    return std::string("unknown subcommand '") + argv[1] + "' (one of: " + names + ")";
  }
  return e.what();
}

// The reproducible x86-64 build is compiled for x86-64-v3: main says so instead
// of dying on an illegal instruction on an older CPU. (Every aarch64 CPU has
// the armv8-a base level the ARM build is compiled for.)
bool cpu_runs_this_build() {
#if defined(__x86_64__)
  return std::string(mha::kArithmetic) != "reproducible" ||
         (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
#else
  return true;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  // Stage and round lines reach a log or a pipe as they are printed, not at exit.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // Blocks of 1 MiB or more (drawn batches, designs, Jacobians) come from mmap
  // and go back to the system when freed. glibc's default threshold rises to
  // the size of the largest block freed so far, after which such blocks come
  // from the heap, where freed ones stay resident: learning from files at
  // (16,2,2) then peaked at 124 MB instead of 103 MB (docs/bench/streaming.md).
  // Setting the threshold fixes it (mallopt turns the adjustment off).
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  if (!cpu_runs_this_build()) {
    std::fprintf(stderr, "mhalearn: error: this build needs an x86-64-v3 CPU (AVX2 and FMA); "
                         "configure with -DMHALEARN_ARCH=native on this machine\n");
    return kExitFailedRun;
  }
  // Under mpirun: join the job; only rank 0 prints (src/cli/processes.hpp).
  if (const std::string e = start_processes(argc, argv); !e.empty()) {
    std::fprintf(stderr, "mhalearn: error: %s\n", e.c_str());
    return kExitBadInput;
  }
  struct LeaveJob {
    ~LeaveJob() { finish_processes(); }
  } leave_job;
  if (!prints_and_writes() && (!std::freopen("/dev/null", "w", stdout) || !std::freopen("/dev/null", "w", stderr)))
    return kExitFailedRun;
  CLI::App app{"mhalearn: learn a multi-head attention layer (Chen & Li, STOC 2025) with verified reference paths"};
  app.set_version_flag("--version", mha::version_text());
  app.require_subcommand(1);
  std::map<std::string, Runner> runners;
  runners["generate"] = add_generate(app);
  runners["check"] = add_check(app);
  runners["sample"] = add_sample(app);
  runners["forward"] = add_forward(app);
  runners["import"] = add_import(app);
  runners["stage1"] = add_stage1(app);
  runners["sculpt"] = add_sculpt(app);
  runners["study-wsum"] = add_study_wsum(app);
  runners["learn"] = add_learn(app);
  runners["verify"] = add_verify(app);
  runners["demo"] = add_demo(app);
  runners["hard"] = add_hard(app);
  add_option_checks(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string command = app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name();
    std::fprintf(stderr, "mhalearn%s%s: error: %s (see --help)\n", command.empty() ? "" : " ", command.c_str(),
                 parse_error_line(app, e, argc, argv).c_str());
    return kExitBadInput;
  }
  const std::string command = app.get_subcommands().front()->get_name();
  // Only learn shares its work between ranks; the other commands run on rank 0.
  if (process_count() > 1 && !prints_and_writes() && command != "learn") return kExitOk;
  // Every output can be written, before any work (README, "Exit status").
  if (const std::string e = path_problem(command_paths(*app.get_subcommands().front())); !e.empty())
    return fail(command, kExitBadInput, e);
  remove_temporary_files_on_signals();
  mha::ProgressSettings progress;
  progress.quiet = g_quiet || !prints_and_writes();
  progress.log_lines = true;
  progress.prefix = "mhalearn " + command + ": ";
  // Tests only (tests/cli/progress_lines.py): a shorter interval than 10 s between log lines.
  if (const char* v = std::getenv("MHALEARN_TEST_PROGRESS_INTERVAL")) progress.interval_seconds = std::atof(v);
  mha::configure_progress(progress);
  std::optional<mha::Heartbeat> heartbeat;
  if (!progress.quiet) heartbeat.emplace();
  try {
    return runners.at(command)();
  } catch (const mha::DatasetError& e) {
    // A dataset file read in blocks held a bad value, or could not be read, in a block a stage drew.
    return fail(command, kExitBadInput, e.what());
  } catch (const mha::CentreTooLarge& e) {
    // Every rank computes the centre itself, from the same slabs: all of them stop here.
    fail(command, kExitFailedRun, e.what());
    abort_processes(kExitFailedRun);
    return kExitFailedRun;
  } catch (const std::bad_alloc&) {
    // Possibly on this rank alone: the others would wait for it in stage 6 forever.
    fail(command, kExitFailedRun, "out of memory");
    abort_processes(kExitFailedRun);
    return kExitFailedRun;
  } catch (const std::exception& e) {
    // Library entry points validate their inputs; reaching here is a bug, but
    // still one line and a non-zero exit rather than an abort.
    fail(command, kExitFailedRun, std::string("internal error: ") + e.what());
    abort_processes(kExitFailedRun);
    return kExitFailedRun;
  }
}
