// Checkpoints of a long learn (docs/formats.md, "Learner checkpoints"): the
// driver's state at a safe point (LearnState, learner.hpp) written to a
// directory so that `learn --resume DIR` continues it to the bytes an
// uninterrupted run gives.
//
// A checkpoint is a manifest, DIR/checkpoint.json, and the arrays it names,
// DIR/array-<crc>.npy. Scalars are JSON, every double as a hexadecimal float
// (exact, and "inf"/"nan" where they occur); matrices are float64 .npy files
// named by the CRC-64 of their bytes, so an array several checkpoints share
// (the selected round's body) is written once, and a damaged or mismatched
// file is refused. The manifest also carries the writer's provenance and the
// caller's `match`: the options and input identity a resumed run must repeat.
//
// Writing is atomic as a set: the new arrays first (each atomically), then the
// manifest (atomically renamed over the old one), then the arrays no longer
// named are removed. A crash at any point leaves a manifest whose arrays are
// all there: the previous checkpoint or the new one.
#pragma once

#include "learn/learner.hpp"

#include <boost/crc.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace mha {

inline constexpr const char* kCheckpointFormat = "mhalearn.learn-checkpoint";
inline constexpr int kCheckpointSchemaVersion = 2;
inline constexpr const char* kCheckpointManifest = "checkpoint.json";

// CRC-64/XZ (ECMA-182 polynomial, reflected, inverted): Boost.CRC's table-driven
// implementation. Detects damage and mix-ups, not tampering.
using Crc64 = boost::crc_optimal<64, 0x42F0E1EBA9EA3693ULL, ~0ULL, ~0ULL, true, true>;
uint64_t crc64(std::string_view bytes);

// "before round 1's net (stage 6)", "before polishing", ...: one line.
std::string safe_point_name(const LearnState& state);

// A checkpoint in memory: the manifest's text and the array files it names.
struct CheckpointFiles {
  std::string manifest;
  std::map<std::string, std::string> arrays;  // file name (array-<crc>.npy) → .npy bytes
};

// `match` and `provenance` are stored as given (the CLI: the options and input
// identity; make_provenance). Throws std::invalid_argument for a state the
// reader would refuse (check_learn_state).
CheckpointFiles serialise_checkpoint(const LearnState& state, const nlohmann::json& match,
                                     const nlohmann::json& provenance);

struct Checkpoint {
  LearnState state;
  nlohmann::json match, provenance;
};

struct CheckpointRead {
  std::string error;  // "" on success, else one line naming the file and the problem
  Checkpoint checkpoint;
  bool ok() const { return error.empty(); }
};

// The bytes of an array file the manifest names, or nullopt when there is none.
using CheckpointArrays = std::function<std::optional<std::string>(const std::string& file)>;

// Parses a manifest; never throws on malformed input. `verify_names`: each
// array's bytes must have the CRC-64 its file name says (the fuzz harness turns
// it off to reach the .npy parsing behind it).
CheckpointRead parse_checkpoint(std::string_view manifest, const CheckpointArrays& arrays,
                                const std::string& name_for_errors, bool verify_names = true);

// "" when the state is one a run can stand at (a safe point, with the products
// that step needs, every array of the shape (d, k, m) gives), else one line.
std::string check_learn_state(const LearnState& state);

// Directory I/O. write_checkpoint creates `dir` when missing; both return "" /
// an error naming the path. Written from the state, the files are those
// serialise_checkpoint makes, the slabs' array streamed from the slabs instead
// of put together in memory first (at d = 128 it is 4–5 GB).
std::string write_checkpoint(const std::string& dir, const CheckpointFiles& files);
std::string write_checkpoint(const std::string& dir, const LearnState& state, const nlohmann::json& match,
                             const nlohmann::json& provenance);
CheckpointRead read_checkpoint(const std::string& dir);
bool has_checkpoint(const std::string& dir);

// The first key (sorted) whose value differs between a checkpoint's match and
// this run's, as one line ("" when equal): "option 'rounds' is 3 in the
// checkpoint, 2 in this run".
std::string match_difference(const nlohmann::json& checkpoint, const nlohmann::json& run);

// "" when the checkpoint's provenance names this build (version, commit and
// what decides the arithmetic: its bytes would be this build's), else one line.
std::string build_difference(const nlohmann::json& checkpoint_provenance, const nlohmann::json& run_provenance);

}  // namespace mha
