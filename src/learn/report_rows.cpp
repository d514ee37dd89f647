#include "learn/report_rows.hpp"

namespace mha {

using nlohmann::json;

json to_json(const ReferenceCheck& c) {
  json j = to_json(c.comparison);
  if (c.round >= 0) j["round"] = c.round;
  return j;
}

ReferenceCheck reference_check_from_json(const json& j) {
  return {j.contains("round") ? j.at("round").get<int>() : -1, comparison_from_json(j)};
}

Diagnostic diagnostic_from_json(const json& j) {
  return {j.at("stage").get<std::string>(), j.contains("round") ? j.at("round").get<int>() : -1,
          j.at("name").get<std::string>(), j.at("detail").get<std::string>(), j.at("warning").get<bool>()};
}

json to_json(const Diagnostic& d) {
  json j = {{"stage", d.stage}, {"name", d.name}, {"detail", d.detail}, {"warning", d.warning}};
  if (d.round >= 0) j["round"] = d.round;
  return j;
}

}  // namespace mha
