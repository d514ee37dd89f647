#include "cli/input.hpp"

#include "cli/fault_switch.hpp"
#include "cli/file_kinds.hpp"
#include "data/instance_io.hpp"
#include "data/noisy_source.hpp"
#include "data/npy.hpp"

namespace mha::cli {

void add_input_options(CLI::App* cmd, Input& in) {
  cmd->add_option("instance", in.instance_path, "instance file (JSON): samples come from its oracle");
  cmd->add_option("--x", in.x_path, std::string("dataset inputs (.npy) instead of an instance; ") + kInputsContract);
  cmd->add_option("--y", in.y_path, std::string("dataset labels (.npy); ") + kLabelsContract);
  cmd->add_option("--seed", in.seed, "sample seed of the oracle")->capture_default_str();
  cmd->add_option("--label-noise", in.label_noise,
                  "add Gaussian noise of this relative size to every label (rms of the noise = this × rms of the "
                  "sample's labels; drawn from --seed's label-noise stream)")
      ->capture_default_str();
}

namespace {
// Wraps the opened source in the requested label noise (none when 0).
void add_label_noise(Input& in) {
  if (in.label_noise > 0) in.source = std::make_unique<NoisySource>(std::move(in.source), in.label_noise, in.seed);
}
}  // namespace

OpenResult open_input(Input& in) {
  const bool have_instance = !in.instance_path.empty();
  const bool have_data = !in.x_path.empty() || !in.y_path.empty();
  auto bad = [](std::string e) { return OpenResult{std::move(e), kExitBadInput}; };
  if (have_instance == have_data) return bad("give either an instance file or both --x and --y");
  if (have_instance) {
    InstanceReadResult r = read_instance(in.instance_path);
    if (!r.ok) return bad(r.error);
    if (auto e = oracle_problem(r.instance); !e.empty())
      return {in.instance_path + ": " + e, kExitFastPathOverflow};
    in.instance = std::move(r.instance);
    in.source = std::make_unique<SampleOracle>(*in.instance, in.seed);
    add_label_noise(in);
    return {};
  }
  if (in.x_path.empty() || in.y_path.empty()) return bad("--x and --y must be given together");
  if (load_datasets_whole()) {  // the test build's switch (fault_switch.hpp)
    NpyResult x = read_npy(in.x_path), y = read_npy(in.y_path);
    if (!x.ok) return bad(x.error);
    if (!y.ok) return bad(y.error);
    DatasetOpen data = open_dataset(std::move(x.array), std::move(y.array));
    if (!data.source) return bad(data.error);
    in.source = std::move(data.source);
  } else {
    // Read block by block as the stages draw (NpyDatasetSource): a bad value
    // in a drawn block ends the run with DatasetError, which main() reports
    // as bad input.
    DatasetFilesOpen data = open_dataset_files(in.x_path, in.y_path);
    if (!data.source) return bad(data.error);
    in.source = std::move(data.source);
  }
  add_label_noise(in);
  return {};
}

}  // namespace mha::cli
