// One line of a stage's report, as the learner records it (learn/report.hpp
// writes the list): what the stage used (samples, seconds), what it found (a
// one-line summary) and its stage-specific fields. Each stage's record is built
// in its own folder (stages/*/record.hpp), beside its fast path and its check.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace mha {

struct StageRecord {
  std::string stage;   // "1", "2", "3", "4", "5", "6", "polish", "fit"
  int round = -1;      // -1: not part of a round
  int64_t samples = 0;
  double seconds = 0;
  std::string summary; // one line for the table
  nlohmann::json details;
};

// A stage the learner replaced by a product taken from the truth (`learn --oracle`).
inline StageRecord oracle_record(const char* stage, int round, const std::string& what) {
  return StageRecord{stage, round, 0, 0, "oracle: " + what, {{"oracle", true}, {"supplied", what}}};
}

}  // namespace mha
