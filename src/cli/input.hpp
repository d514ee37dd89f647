// Where a stage command's samples come from: an instance's streaming oracle
// (the truth is then known and used for the report) or a dataset of .npy files.
#pragma once

#include "cli/common.hpp"
#include "data/oracle.hpp"

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>

namespace mha::cli {

struct Input {
  std::string instance_path, x_path, y_path;
  uint64_t seed = 1;
  double label_noise = 0;  // relative Gaussian noise added to every label (data/noisy_source.hpp)
  std::optional<Instance> instance;
  std::unique_ptr<SampleSource> source;
};

void add_input_options(CLI::App* cmd, Input& in);

struct OpenResult {
  std::string error;  // "" on success, else one line
  int exit_code = 0;  // kExitBadInput, or kExitFastPathOverflow when the oracle could overflow
};
OpenResult open_input(Input& in);

}  // namespace mha::cli
