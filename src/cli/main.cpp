// mhalearn: the command-line tool. Each subcommand lives in its own file.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/processes.hpp"
#include "data/oracle.hpp"
#include "version.hpp"

#include <cstdio>
#include <exception>
#include <map>
#include <string>

#include <malloc.h>

int main(int argc, char** argv) {
  using namespace mha::cli;
  // Blocks of 1 MiB or more (drawn batches, designs, Jacobians) come from mmap
  // and go back to the system when freed. glibc's default threshold rises to
  // the size of the largest block freed so far, after which such blocks come
  // from the heap, where freed ones stay resident: learning from files at
  // (16,2,2) then peaked at 124 MB instead of 103 MB (docs/bench/streaming.md).
  // Setting the threshold fixes it (mallopt turns the adjustment off).
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  // The reproducible build is compiled for x86-64-v3: say so instead of dying
  // on an illegal instruction on an older CPU.
  if (std::string(mha::kArithmetic) == "reproducible" &&
      !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
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
  app.set_version_flag("--version", std::string("mhalearn ") + mha::kVersion + " (" + mha::kGitCommit +
                                        "; arithmetic: " + mha::kArithmetic + ", " + mha::kFloatingPointFlags + ")");
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
    std::fprintf(stderr, "mhalearn%s%s: error: %s (see --help)\n", command.empty() ? "" : " ", command.c_str(), e.what());
    return kExitBadInput;
  }
  const std::string command = app.get_subcommands().front()->get_name();
  // Only learn shares its work between ranks; the other commands run on rank 0.
  if (process_count() > 1 && !prints_and_writes() && command != "learn") return kExitOk;
  try {
    return runners.at(command)();
  } catch (const mha::DatasetError& e) {
    // A dataset file read in blocks held a bad value, or could not be read, in a block a stage drew.
    return fail(command, kExitBadInput, e.what());
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
