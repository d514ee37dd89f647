// The files a command writes, published together: every one is written in
// full and flushed before the first is renamed into place, so that a failure
// while writing them (a full disk, a name the file system refuses) leaves every
// previous output as it was, and sample's X, Y and their sidecars never
// describe different runs. A character device or a pipe among them is written
// through (data/atomic_file.hpp) after the others are in place.
#pragma once

#include "commands/schema.hpp"
#include "data/atomic_file.hpp"
#include "data/npy.hpp"

#include <memory>
#include <string>
#include <vector>

namespace mha::cli {

class FileSet {
 public:
  // A streamed array (sample's --x, forward's -o): its writer, open now.
  std::string open_array(const std::string& path, const std::vector<int64_t>& shape, NpyDtype dtype,
                         std::unique_ptr<commands::ArrayOut>& out);
  // A file whose bytes are known: written when the set is published.
  void add(const std::string& path, std::string bytes);
  // "" or the first error; on an error nothing of the set has replaced a previous file
  // (but a device or pipe written through before it).
  std::string publish();

 private:
  std::vector<std::shared_ptr<NpyWriter>> arrays_;
  std::vector<std::pair<std::string, std::string>> documents_;
};

}  // namespace mha::cli
