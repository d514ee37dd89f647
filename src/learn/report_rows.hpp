// The learner report's reference rows and diagnostics (learn/report.hpp), with
// their JSON both ways: the report writes them, a checkpoint reads them back
// (learn/checkpoint.cpp, which the fuzz harnesses link without the learner).
#pragma once

#include "numeric/comparison.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace mha {

// A reference row of a run: the round whose inputs it checked (−1: not in a round).
struct ReferenceCheck {
  int round = -1;
  Comparison comparison;
};

// A statistical outcome worth the user's attention — the sculpted body not thin
// across the hull, the proxy far from the minimum-norm point of K — reported by
// name with the measured quantity. Never a disagreement of two computations:
// `learn` prints it as a warning and still exits 0 (README, "Exit status").
struct Diagnostic {
  std::string stage;
  int round = -1;
  std::string name;    // e.g. "body not thin across the hull"
  std::string detail;  // one line: the measured quantity against what it is compared with
  bool warning = false;  // beyond the stated threshold of its kind: printed on stderr by learn and demo
};

nlohmann::json to_json(const ReferenceCheck& check);
nlohmann::json to_json(const Diagnostic& diagnostic);
// And back: throw on a malformed object (nlohmann::json::exception, std::invalid_argument).
// Non-finite doubles, written as null, read back as NaN.
ReferenceCheck reference_check_from_json(const nlohmann::json& j);
Diagnostic diagnostic_from_json(const nlohmann::json& j);

}  // namespace mha
