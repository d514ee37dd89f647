// Every path a command was given, checked before it does any work (README,
// "Exit status": exit 2 with one line naming the path), so that what can be
// known before publishing never costs a finished run. The options' roles
// (schema.hpp) say what each path is:
//
//   - every path: valid UTF-8 (reports and provenance record paths as JSON text);
//   - an output file: not a directory, a block device or a socket (an existing
//     character device or pipe is written through, never replaced); its folder
//     exists, is writable and is not one of the kernel's virtual file systems
//     (/proc, /sys); its name, with the temporary file's suffix, fits the file
//     system; its .json sidecar (sample, forward) is checked the same way;
//   - an output folder: an existing writable folder, or a path whose nearest
//     existing ancestor is a writable folder; a folder read and written again
//     (learn --resume): an existing writable folder;
//   - no two outputs, and no output and input, are the same file (the same path
//     after resolving symbolic links and "..", or the same inode), but for a
//     character device (/dev/null) written through twice.
#pragma once

#include "commands/schema.hpp"

#include <string>

namespace mha::commands {

// "" when every path the arguments name can be used, else one line.
std::string path_problem(const Arguments& args);
// "" when a file can be written at `path` (`name` names it in the line), else one line.
std::string output_file_problem(const std::string& name, const std::string& path);

// A path as a message may print it: bytes that are not UTF-8 as \xHH.
std::string printable_path(const std::string& path);

// Whether `text` is valid UTF-8.
bool valid_utf8(const std::string& text);

}  // namespace mha::commands
