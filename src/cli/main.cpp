// mhalearn: the command-line tool. The subcommands are declared once in
// src/commands/ (schema.hpp); here they become a command line (app.hpp), run
// with the process's streams, signals and MPI job, and their files are
// written as a set.
#include "cli/app.hpp"
#include "cli/file_set.hpp"
#include "cli/processes.hpp"
#include "cli/standard_streams.hpp"
#include "cli/stop_signals.hpp"
#include "commands/paths.hpp"
#include "commands/status.hpp"
#include "data/instance_io.hpp"
#include "data/oracle.hpp"
#include "data/provenance.hpp"
#include "geometry/convex_body.hpp"
#include "util/progress.hpp"
#include "version.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>

#include <malloc.h>

namespace {

using namespace mha;
using namespace mha::cli;
using commands::Arguments;
using commands::Command;
using commands::kExitBadInput;
using commands::kExitFailedRun;
using commands::kExitInterrupted;
using commands::kExitOk;

int fail(const std::string& command, int code, const std::string& message) {
  std::fprintf(stderr, "mhalearn %s: error: %s\n", command.c_str(), message.c_str());
  return code;
}

// The reproducible x86-64 build is compiled for x86-64-v3: main says so instead
// of dying on an illegal instruction on an older CPU. (Every aarch64 CPU has
// the armv8-a base level the ARM build is compiled for.)
bool cpu_runs_this_build() {
#if defined(__x86_64__)
  return std::string(kArithmetic) != "reproducible" ||
         (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
#else
  return true;
#endif
}

// The process before any command: its streams, memory, CPU and MPI job.
// Returns -1 to go on, else the exit status.
int start_process(int& argc, char**& argv) {
  prepare_standard_streams();
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
  if (!prints_and_writes() && (!std::freopen("/dev/null", "w", stdout) || !std::freopen("/dev/null", "w", stderr)))
    return kExitFailedRun;
  return -1;
}

// The parse error as one line: an unknown subcommand is named as such.
std::string parse_error_line(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-') {
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
    return std::string("unknown subcommand '") + commands::printable_path(argv[1]) + "' (one of: " + names + ")";
  }
  return commands::printable_path(e.what());
}

// The command line parsed into checked arguments. Returns -1 to go on, else the exit status.
int parse(CommandLine& cl, int argc, char** argv, Arguments& args) {
  CLI::App& app = cl.app();
  // --help and --version: printed, and stdout checked as every command's.
  const auto printed = [&app](const CLI::Error& e) {
    app.exit(e);
    flush_cout();
    return finish_stdout(kExitOk, "");
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return printed(e);
  } catch (const CLI::CallForAllHelp& e) {
    return printed(e);
  } catch (const CLI::CallForVersion& e) {
    return printed(e);
  } catch (const CLI::ParseError& e) {
    const std::string command = app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name();
    std::fprintf(stderr, "mhalearn%s%s: error: %s (see --help)\n", command.empty() ? "" : " ", command.c_str(),
                 parse_error_line(app, e, argc, argv).c_str());
    return kExitBadInput;
  }
  const std::string command = cl.chosen().name;
  if (auto e = cl.arguments(args); !e.empty()) return fail(command, kExitBadInput, e + " (see --help)");
  // Every path can be used, before any work (README, "Exit status").
  if (auto e = commands::path_problem(args); !e.empty()) return fail(command, kExitBadInput, e);
  return -1;
}

void configure_progress_lines(const std::string& command, const Arguments& args) {
  ProgressSettings progress;
  progress.quiet = args.flag("quiet") || !prints_and_writes();
  progress.log_lines = true;
  progress.prefix = "mhalearn " + command + ": ";
  // Tests only (tests/cli/progress_lines.py): a shorter interval than 10 s between log lines.
  if (const char* v = std::getenv("MHALEARN_TEST_PROGRESS_INTERVAL")) progress.interval_seconds = std::atof(v);
  configure_progress(progress);
}

// What the command needs of the command line: stdout, stderr, its files, the MPI job, the stop signals.
commands::Context context(const Command& c, const Arguments& args, FileSet& files) {
  commands::Context ctx;
  const std::string prefix = "mhalearn " + c.name + ": ";
  ctx.print = [](const std::string& text) { print(text); };
  ctx.warn = [prefix](const std::string& line) { std::fprintf(stderr, "%swarning: %s\n", prefix.c_str(), line.c_str()); };
  ctx.verbose = args.command->find("verbose") && args.flag("verbose");
  ctx.note = [prefix](const std::string& line) { std::fprintf(stderr, "%sdiagnostic: %s\n", prefix.c_str(), line.c_str()); };
  ctx.provenance = [](const std::string& command, const nlohmann::json& options) { return make_provenance(command, options); };
  ctx.open_array = [&args, &files](const std::string& option, const std::vector<int64_t>& shape, NpyDtype dtype,
                                   std::unique_ptr<commands::ArrayOut>& out) {
    return files.open_array(args.text(option), shape, dtype, out);
  };
  ctx.processes = job_processes();
  ctx.writes = prints_and_writes();
  ctx.stop_on_signals = [] { return std::unique_ptr<commands::Scope>(std::make_unique<StopSignals>()); };
  return ctx;
}

// The command run, its exceptions as one line.
commands::Result run(const Command& c, Arguments& args, commands::Context& ctx) {
  commands::Result r;
  try {
    r = c.run(args, ctx);
  } catch (const DatasetError& e) {
    // A dataset file read in blocks held a bad value, or could not be read, in a block a stage drew.
    r.failed(kExitBadInput, e.what());
  } catch (const CentreTooLarge& e) {
    // Every rank computes the centre itself, from the same slabs: all of them stop here.
    fail(c.name, kExitFailedRun, e.what());
    abort_processes(kExitFailedRun);
    r.failed(kExitFailedRun, e.what());
  } catch (const std::bad_alloc&) {
    // Possibly on this rank alone: the others would wait for it in stage 6 forever.
    fail(c.name, kExitFailedRun, "out of memory");
    abort_processes(kExitFailedRun);
    r.failed(kExitFailedRun, "out of memory");
  } catch (const std::exception& e) {
    // Library entry points validate their inputs; reaching here is a bug, but
    // still one line and a non-zero exit rather than an abort.
    fail(c.name, kExitFailedRun, std::string("internal error: ") + e.what());
    abort_processes(kExitFailedRun);
    r.failed(kExitFailedRun, std::string("internal error: ") + e.what());
  }
  return r;
}

// The files the user named that the command gave content for, as one set: "" or the error.
std::string write_files(const Arguments& args, const commands::Result& r, FileSet& files) {
  for (const auto& [name, out] : r.outputs) {
    if (!args.values.count(name)) continue;
    const std::string& path = args.text(name);
    if (out.document) files.add(path, out.document->dump(2) + "\n");
    if (out.instance) {
      if (auto e = validate_instance(*out.instance); !e.empty()) return "refusing to write " + path + ": " + e;
      files.add(path, instance_to_json(*out.instance).dump(2) + "\n");
    }
    if (out.text) files.add(path, *out.text);
    if (out.sidecar && !output_target(path).write_through) files.add(path + ".json", out.sidecar->dump(2) + "\n");
  }
  return files.publish();
}

// Whether the user named a file or folder the command writes.
bool names_outputs(const Arguments& args) {
  for (const commands::Option& o : args.command->options)
    if ((o.role == commands::Role::file_out || o.role == commands::Role::folder_out ||
         o.role == commands::Role::folder_inout) &&
        args.given(o.name))
      return true;
  return args.command->name == "demo";  // its folder has a default
}

int run_and_write(const Command& c, Arguments& args) {
  // Only learn shares its work between ranks; the other commands run on rank 0.
  if (process_count() > 1 && !prints_and_writes() && c.name != "learn") return kExitOk;
  remove_temporary_files_on_signals();
  configure_progress_lines(c.name, args);
  set_files_pending(names_outputs(args));
  FileSet files;
  commands::Context ctx = context(c, args, files);
  std::optional<Heartbeat> heartbeat;
  if (!args.flag("quiet") && prints_and_writes()) heartbeat.emplace();
  commands::Result r = run(c, args, ctx);
  heartbeat.reset();
  const bool refused = (r.status == kExitBadInput || r.status == commands::kExitFastPathOverflow) && r.outputs.empty();
  if (!refused && prints_and_writes())
    if (auto e = write_files(args, r, files); !e.empty()) return finish_stdout(fail(c.name, kExitFailedRun, e), c.name);
  print(r.summary);
  if (r.status == kExitInterrupted) std::fprintf(stderr, "mhalearn %s: %s\n", c.name.c_str(), r.error.c_str());
  else if (r.status != kExitOk) fail(c.name, r.status, r.error);
  return finish_stdout(r.status, c.name);
}

}  // namespace

int main(int argc, char** argv) {
  if (const int status = start_process(argc, argv); status >= 0) return status;
  struct LeaveJob {
    ~LeaveJob() { finish_processes(); }
  } leave_job;
  CommandLine cl;
  Arguments args;
  if (const int status = parse(cl, argc, argv, args); status >= 0) return status;
  return run_and_write(cl.chosen(), args);
}
