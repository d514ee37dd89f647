// Outputs are written atomically: into a temporary file beside the target,
// flushed, then renamed over it, so a crash or a bad input never leaves a
// half-written file under the requested name.
#pragma once

#include <string>
#include <string_view>

namespace mha {

// Returns an empty string on success, else a one-line error naming the path.
std::string write_file_atomically(const std::string& path, std::string_view bytes);

// Reads a whole file. Returns false and sets `error` when it cannot be read.
bool read_whole_file(const std::string& path, std::string& bytes, std::string& error);

}  // namespace mha
