// stdout as the command line uses it: every write checked, nothing lost.
//
// SIGPIPE is ignored while a command runs, so that a reader that stops early
// (`mhalearn learn … | head -1`) is seen as a failed write (EPIPE) instead of
// ending the process before its files are written. With files still to write
// the command goes on, writes them, and then ends as SIGPIPE would have ended
// it (exit 141, no message); with none, it ends at once. Any other failed
// write — a full device (`> /dev/full`), stdout closed (`>&-`) — is one line
// on stderr and exit 1 once the files are written.
#pragma once

#include <string>
#include <string_view>

namespace mha::cli {

// First thing in main: stdin, stdout and stderr open (a closed one is opened on
// /dev/null, so that no file the command opens takes its number, and a closed
// stdout is remembered as a write error), SIGPIPE ignored.
void prepare_standard_streams();

// Whether the command still has files to write when a reader stops early.
void set_files_pending(bool pending);

// Writes `text` to stdout at once (a terminal, a file and a pipe alike). After
// a failed write nothing more is written.
void print(std::string_view text);

// Flushes what CLI11 wrote (--help, --version) through std::cout.
void flush_cout();

// The exit status once the command's files are written: `status` when the
// command failed; else, when a write to stdout failed, exit 1 with one line
// (`command` names it), or for a closed pipe the end SIGPIPE would have made.
int finish_stdout(int status, const std::string& command);

}  // namespace mha::cli
