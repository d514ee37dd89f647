// Whether a checkpoint may be resumed by this run: its match (the options and
// input identity) and the build that wrote it (checkpoint.hpp).
#include "learn/checkpoint.hpp"

#include <map>
#include <string>
#include <utility>

namespace mha {

using nlohmann::json;

namespace {

std::string short_dump(const json* v) {
  if (!v) return "absent";
  std::string s = v->dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// The first differing key under `prefix`, depth first in sorted key order.
std::string first_difference(const json& a, const json& b, const std::string& prefix) {
  if (a.is_object() && b.is_object()) {
    std::map<std::string, std::pair<const json*, const json*>> keys;  // sorted union
    for (auto it = a.begin(); it != a.end(); ++it) keys[it.key()].first = &it.value();
    for (auto it = b.begin(); it != b.end(); ++it) keys[it.key()].second = &it.value();
    for (const auto& [key, values] : keys) {
      const std::string path = prefix.empty() ? key : prefix + "." + key;
      if (!values.first || !values.second || *values.first != *values.second) {
        if (values.first && values.second) return first_difference(*values.first, *values.second, path);
        return "'" + path + "' is " + short_dump(values.first) + " in the checkpoint, " + short_dump(values.second) +
               " in this run";
      }
    }
    return "";
  }
  if (a == b) return "";
  return "'" + prefix + "' is " + short_dump(&a) + " in the checkpoint, " + short_dump(&b) + " in this run";
}

}  // namespace

std::string match_difference(const json& checkpoint, const json& run) {
  std::string d = first_difference(checkpoint, run, "");
  for (char& c : d)
    if (c == '\n' || c == '\r') c = ' ';  // keys are the checkpoint's: one line whatever they hold
  return d;
}

std::string build_difference(const json& checkpoint, const json& run) {
  static const char* const keys[] = {"/version", "/git_commit", "/build/arithmetic", "/build/isa_level",
                                     "/build/fp_flags", "/build/compiler", "/build/libraries"};
  for (const char* key : keys) {
    const json::json_pointer pointer(key);
    const json* a = checkpoint.is_object() && checkpoint.contains(pointer) ? &checkpoint.at(pointer) : nullptr;
    const json* b = run.contains(pointer) ? &run.at(pointer) : nullptr;
    if (!a || !b || *a != *b)
      return std::string("it was written by another build of mhalearn (") + (key + 1) + " " + short_dump(a) +
             ", this build's " + short_dump(b) + "), whose bytes may differ";
  }
  return "";
}

}  // namespace mha
