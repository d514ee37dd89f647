#include "cli/learn_checkpoints.hpp"

#include "cli/stop_signals.hpp"
#include "learn/checkpoint.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>

namespace mha::cli {

using nlohmann::json;

json resume_match(json options, const json& identity) {
  for (const char* key : {"threads", "max_seconds", "instance", "x", "y"}) options.erase(key);
  options["input"] = identity;
  return options;
}

bool SafePoints::operator()(const LearnState& state) {
  if (++reached == stop_at) StopSignals::request();
  if (!dir.empty()) {
    const auto start = std::chrono::steady_clock::now();
    write_error = write_checkpoint(dir, state, match, provenance);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!write_error.empty()) return false;
  }
  return !StopSignals::requested();
}

std::string stop_at_from_environment(long long& stop_at) {
  const char* value = std::getenv("MHALEARN_STOP_AT_SAFE_POINT");
  if (!value) return "";
  char* end = nullptr;
  stop_at = std::strtoll(value, &end, 10);
  if (*value == '\0' || *end != '\0' || stop_at < 1) return "MHALEARN_STOP_AT_SAFE_POINT must be a positive integer";
  return "";
}

std::string read_resume(const std::string& dir, const json& match, const json& provenance, int k, int d,
                        const LearnOptions& o, std::optional<LearnState>& state) {
  CheckpointRead c = read_checkpoint(dir);
  if (!c.ok()) return c.error;
  if (auto e = build_difference(c.checkpoint.provenance, provenance); !e.empty()) return dir + ": " + e;
  if (auto e = match_difference(c.checkpoint.match, match); !e.empty())
    return dir + " is the checkpoint of another run: " + e;
  if (auto e = check_resume(c.checkpoint.state, d, k, o.m, o); !e.empty()) return dir + ": " + e;
  state = std::move(c.checkpoint.state);
  return "";
}

std::string prepare_checkpoint_directory(const std::string& checkpoint) {
  if (has_checkpoint(checkpoint))
    return checkpoint + " already holds a checkpoint: continue it with --resume, or remove it";
  std::error_code ec;
  std::filesystem::create_directories(checkpoint, ec);
  if (ec) return "cannot create " + checkpoint + ": " + ec.message();
  return "";
}

std::string interrupted_message(const LearnReport& report, const SafePoints& points) {
  if (!points.write_error.empty())
    return "cannot checkpoint " + report.safe_point + ": " + points.write_error +
           " (the previous checkpoint, if any, is intact)";
  if (points.dir.empty()) return "interrupted " + report.safe_point + "; nothing to resume from (no --checkpoint)";
  return "interrupted " + report.safe_point + "; continue with the same command and --resume " + points.dir;
}

}  // namespace mha::cli
