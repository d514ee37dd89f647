#include "commands/learn_checkpoints.hpp"

#include "commands/stop.hpp"
#include "util/clock.hpp"
#include "learn/checkpoint.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>

namespace mha::commands {

using nlohmann::json;

json resume_match(json options, const json& identity) {
  for (const char* key : {"threads", "max_seconds", "instance", "x", "y"}) options.erase(key);
  options["input"] = identity;
  return options;
}

bool SafePoints::operator()(const LearnState& state) {
  if (++reached == stop_at) request_stop();
  if (!dir.empty()) {
    const auto start = std::chrono::steady_clock::now();
    write_error = write_checkpoint(dir, state, match, provenance);
    seconds += seconds_since(start);
    if (!write_error.empty()) return false;
  }
  return !stop_requested();
}

std::string stop_at_from_environment(long long& stop_at) {
  const char* value = std::getenv("MHALEARN_STOP_AT_SAFE_POINT");
  if (!value) return "";
  char* end = nullptr;
  stop_at = std::strtoll(value, &end, 10);
  if (*value == '\0' || *end != '\0' || stop_at < 1) return "MHALEARN_STOP_AT_SAFE_POINT must be a positive integer";
  return "";
}

namespace {

// What "earlier_builds" keeps of the build that wrote `written` up to `safe_point`.
json earlier_build(const json& written, const std::string& safe_point) {
  json b = {{"until", safe_point}};
  for (const char* key : {"version", "git_commit", "build"})
    b[key] = written.is_object() && written.contains(key) ? written[key] : json(nullptr);
  return b;
}

}  // namespace

std::string read_resume(const std::string& dir, const json& match, json& provenance, bool other_build,
                        Spelling spelling, int k, int d, const LearnOptions& o, std::optional<LearnState>& state) {
  CheckpointRead c = read_checkpoint(dir);
  if (!c.ok()) return c.error;
  const json& written = c.checkpoint.provenance;
  const std::string other = build_difference(written, provenance);
  if (!other.empty() && !other_build)
    return dir + ": " + other + " (" + spell_flag("--resume-other-build", spelling) + " accepts it)";
  if (auto e = match_difference(c.checkpoint.match, match); !e.empty())
    return dir + " is the checkpoint of another run: " + e;
  if (auto e = check_resume(c.checkpoint.state, d, k, o.m, o); !e.empty()) return dir + ": " + e;
  json earlier = written.is_object() && written.contains("earlier_builds") ? written["earlier_builds"] : json::array();
  if (!other.empty()) earlier.push_back(earlier_build(written, safe_point_name(c.checkpoint.state)));
  if (!earlier.empty()) provenance["earlier_builds"] = std::move(earlier);
  state = std::move(c.checkpoint.state);
  return "";
}

std::string prepare_checkpoint_directory(const std::string& checkpoint) {
  if (has_checkpoint(checkpoint))
    return checkpoint + " already holds a checkpoint: continue it with --resume, or remove it";
  std::error_code ec;
  std::filesystem::create_directories(checkpoint, ec);  // now rather than after stage 1
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

}  // namespace mha::commands
