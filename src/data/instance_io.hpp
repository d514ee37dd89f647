// Instance files: JSON with a format tag, a schema version, provenance and the
// parameters. Doubles are written in the shortest form that reads back to the
// same bits (nlohmann-json's dtoa), so files round-trip bit-exactly.
//
// {
//   "format": "mhalearn.instance", "schema_version": 1,
//   "d": 16, "k": 2, "m": 2, "inputs": "boolean",
//   "heads": [ {"theta": [[...d numbers...] ×d], "w": [[...] ×d]}, ... ],
//   "provenance": { "tool": "mhalearn", "version": ..., "git_commit": ..., "command": ..., "seed": ..., "options": {...} }
// }
#pragma once

#include "data/provenance.hpp"
#include "model/layer.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace mha {

constexpr const char* kInstanceFormat = "mhalearn.instance";
constexpr int kInstanceSchemaVersion = 1;
// Deepest nesting of arrays and objects an instance file may have. The schema
// needs 5 levels (file, heads, head, rows, row); the rest is room for the
// provenance and extensions that producers write.
constexpr int kMaxJsonDepth = 64;
// Largest d and m an instance file may declare.
constexpr int kMaxInstanceD = 1024;
constexpr int kMaxInstanceHeads = 64;

struct InstanceReadResult {
  bool ok = false;
  std::string error;   // one line, starts with the file name
  Instance instance;
};

nlohmann::json instance_to_json(const Instance& inst);
// `name` is used in error messages only.
InstanceReadResult instance_from_json_text(const std::string& text, const std::string& name);
InstanceReadResult read_instance(const std::string& path);
// Validates, then writes atomically. Returns "" or an error line.
std::string write_instance(const std::string& path, const Instance& inst);

// JSON text with a trailing newline, written atomically.
std::string write_json_atomically(const std::string& path, const nlohmann::json& value);

}  // namespace mha
