#include "data/instance_io.hpp"

#include "data/atomic_file.hpp"

#include <cmath>

namespace mha {

using nlohmann::json;

namespace {
json matrix_to_json(const MatD& a) {
  json rows = json::array();
  for (Eigen::Index r = 0; r < a.rows(); ++r) {
    json row = json::array();
    for (Eigen::Index c = 0; c < a.cols(); ++c) row.push_back(a(r, c));
    rows.push_back(std::move(row));
  }
  return rows;
}

// Reads a d×d matrix; on failure sets `error` to a description of `where`.
bool matrix_from_json(const json& j, int d, const std::string& where, MatD& out, std::string& error) {
  if (!j.is_array() || static_cast<int>(j.size()) != d) {
    error = where + " must be an array of " + std::to_string(d) + " rows";
    return false;
  }
  out.resize(d, d);
  for (int r = 0; r < d; ++r) {
    const json& row = j[r];
    if (!row.is_array() || static_cast<int>(row.size()) != d) {
      error = where + "[" + std::to_string(r) + "] must be an array of " + std::to_string(d) + " numbers";
      return false;
    }
    for (int c = 0; c < d; ++c) {
      const json& v = row[c];
      if (!v.is_number()) {
        error = where + "[" + std::to_string(r) + "][" + std::to_string(c) + "] is not a number";
        return false;
      }
      out(r, c) = v.get<double>();
      if (!std::isfinite(out(r, c))) {
        error = where + "[" + std::to_string(r) + "][" + std::to_string(c) + "] is not finite";
        return false;
      }
    }
  }
  return true;
}

// Parses `text`, refusing values nested deeper than kMaxJsonDepth. The
// callback discards any array or object that opens deeper, so no deep value is
// ever built: nlohmann's dump() (and the copies made of provenance and
// extensions) recurse once per level and would exhaust the stack on a file
// nested ~65,000 levels deep. The parser itself is iterative. Returns "" or the
// error; throws json::exception on malformed text, as json::parse does.
std::string parse_bounded(const std::string& text, json& doc) {
  bool too_deep = false;
  const json::parser_callback_t limit = [&too_deep](int depth, json::parse_event_t event, json&) {
    // `depth` counts the arrays and objects enclosing the one that opens.
    const bool opens = event == json::parse_event_t::object_start || event == json::parse_event_t::array_start;
    if (opens && depth >= kMaxJsonDepth) too_deep = true;
    return !(opens && depth >= kMaxJsonDepth);
  };
  doc = json::parse(text, limit);
  if (too_deep) return "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
  return "";
}

bool positive_int(const json& doc, const char* key, int max, int& out, std::string& error) {
  if (!doc.contains(key) || !doc[key].is_number_integer()) {
    error = std::string("\"") + key + "\" must be an integer";
    return false;
  }
  const auto v = doc[key].get<int64_t>();
  if (v < 1 || v > max) {
    error = std::string("\"") + key + "\" = " + std::to_string(v) + " is outside 1.." + std::to_string(max);
    return false;
  }
  out = static_cast<int>(v);
  return true;
}
}  // namespace

json instance_to_json(const Instance& inst) {
  json heads = json::array();
  for (const auto& h : inst.layer.heads) heads.push_back({{"theta", matrix_to_json(h.theta)}, {"w", matrix_to_json(h.w)}});
  json doc;
  doc["format"] = kInstanceFormat;
  doc["schema_version"] = kInstanceSchemaVersion;
  doc["d"] = inst.d();
  doc["k"] = inst.k;
  doc["m"] = inst.m();
  doc["inputs"] = to_string(inst.inputs);
  doc["heads"] = std::move(heads);
  doc["provenance"] = json::parse(inst.provenance_json);
  if (inst.extensions_json != "{}") doc["extensions"] = json::parse(inst.extensions_json);
  return doc;
}

InstanceReadResult instance_from_json_text(const std::string& text, const std::string& name) {
  InstanceReadResult result;
  auto fail = [&](const std::string& what) {
    result.error = name + ": " + what;
    return result;
  };
  json doc;
  std::string depth_error;
  try {
    depth_error = parse_bounded(text, doc);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e999
    // e.what() is one line: "[json.exception.parse_error.101] parse error at line 1, column 5: ..."
    std::string what = e.what();
    if (auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    return fail("malformed or truncated JSON (" + what + ")");
  }
  if (!depth_error.empty()) return fail(depth_error);
  if (!doc.is_object()) return fail("top level must be a JSON object");
  if (!doc.contains("format") || doc["format"] != kInstanceFormat)
    return fail(std::string("\"format\" must be \"") + kInstanceFormat + "\"");
  if (!doc.contains("schema_version") || !doc["schema_version"].is_number_integer() ||
      doc["schema_version"].get<int64_t>() != kInstanceSchemaVersion)
    return fail("unsupported \"schema_version\" (this build reads version " + std::to_string(kInstanceSchemaVersion) + ")");
  std::string error;
  int d = 0, k = 0, m = 0;
  if (!positive_int(doc, "d", kMaxInstanceD, d, error) || !positive_int(doc, "k", 1024, k, error) ||
      !positive_int(doc, "m", kMaxInstanceHeads, m, error))
    return fail(error);
  Instance inst;
  inst.k = k;
  if (!doc.contains("inputs") || !doc["inputs"].is_string() ||
      !parse_input_kind(doc["inputs"].get<std::string>(), inst.inputs))
    return fail("\"inputs\" must be \"boolean\" or \"gaussian\"");
  if (!doc.contains("heads") || !doc["heads"].is_array() || static_cast<int>(doc["heads"].size()) != m)
    return fail("\"heads\" must be an array of m = " + std::to_string(m) + " heads");
  for (int i = 0; i < m; ++i) {
    const json& h = doc["heads"][i];
    const std::string where = "heads[" + std::to_string(i) + "]";
    if (!h.is_object() || !h.contains("theta") || !h.contains("w"))
      return fail(where + " must be an object with \"theta\" and \"w\"");
    Head head;
    if (!matrix_from_json(h["theta"], d, where + ".theta", head.theta, error) ||
        !matrix_from_json(h["w"], d, where + ".w", head.w, error))
      return fail(error);
    inst.layer.heads.push_back(std::move(head));
  }
  if (auto e = validate_instance(inst); !e.empty()) return fail(e);
  inst.provenance_json = doc.contains("provenance") ? doc["provenance"].dump() : "{}";
  if (doc.contains("extensions")) {
    if (!doc["extensions"].is_object()) return fail("\"extensions\" must be an object");
    inst.extensions_json = doc["extensions"].dump();
  }
  result.ok = true;
  result.instance = std::move(inst);
  return result;
}

InstanceReadResult read_instance(const std::string& path) {
  std::string text, error;
  if (!read_whole_file(path, text, error)) {
    InstanceReadResult r;
    r.error = error;
    return r;
  }
  return instance_from_json_text(text, path);
}

std::string write_json_atomically(const std::string& path, const json& value) {
  return write_file_atomically(path, value.dump(2) + "\n");
}

std::string write_instance(const std::string& path, const Instance& inst) {
  if (auto e = validate_instance(inst); !e.empty()) return "refusing to write " + path + ": " + e;
  return write_json_atomically(path, instance_to_json(inst));
}

}  // namespace mha
