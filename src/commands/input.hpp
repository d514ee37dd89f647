// Where a command's inputs come from: an instance file or (Python) an
// mhalearn.Instance; the samples of learn, stage1 and sculpt from an
// instance's streaming oracle (the truth is then known and used for the
// report) or from a dataset, .npy files read in blocks or (Python) arrays.
#pragma once

#include "commands/schema.hpp"
#include "data/oracle.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mha::commands {

// The options that say where the samples come from: the instance (the
// positional; Python's first parameter, `python_name` when not "instance"),
// --x, --y, --seed (with `seed_help`) and --label-noise.
std::vector<Option> sample_input_options(const std::string& seed_help, const std::string& python_name = "instance");

// The instance an instance_in option names (the object Python gave, or the
// file read): false, with `r` failed (exit 2), when it cannot be read.
bool load_instance(const Arguments& a, const std::string& option, Instance& out, Result& r);

struct Samples {
  std::optional<Instance> instance;     // the truth, when the samples come from its oracle
  std::unique_ptr<SampleSource> source;  // with the label noise asked for
  nlohmann::json record;                 // where they come from, as the provenance's options say
  nlohmann::json identity;               // what identifies them for a checkpoint (learn --checkpoint)
  uint64_t seed = 1;
  double label_noise = 0;
};

// The samples of the arguments' instance or --x/--y: false, with `r` failed
// (exit 2, or 3 when the instance's oracle could overflow double), when they
// cannot be had. `identity`: also what identifies them (reads the instance
// file's bytes, or checksums arrays). Arrays Python gave are moved into the source.
bool open_samples(Arguments& a, Samples& out, Result& r, bool identity = false);

}  // namespace mha::commands
