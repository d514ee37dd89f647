// Every path a command will write is checked before it does any work (README,
// "Exit status": exit 2 with one line naming the path), so that a mistyped
// directory never costs a finished run. One table says, per subcommand, which
// options name files it writes, directories it writes into (creating them),
// and files it reads; `path_problem` checks them all:
//
//   - an output file: not a directory; its directory exists, is a directory and
//     is writable (the atomic writer puts its temporary file there); its .json
//     sidecar (sample, forward) is checked the same way;
//   - an output directory: an existing writable directory, or a path whose
//     nearest existing ancestor is a writable directory;
//   - no two outputs, and no output and input, are the same file (the same
//     path after resolving symbolic links and "..", or the same inode).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace mha::cli {

struct NamedPath {
  std::string option;  // as the user gave it: "-o", "--report", "--x", "instance"
  std::string path;
};

struct CommandPaths {
  std::vector<NamedPath> output_files, output_directories, inputs;
};

// The paths the parsed subcommand `cmd` was given, by role (its table row).
CommandPaths command_paths(const CLI::App& cmd);

// "" when every output can be written, else one line naming the path and why not.
std::string path_problem(const CommandPaths& paths);

}  // namespace mha::cli
