#include "commands/fault_switch.hpp"

#include "learn/learner.hpp"
#include "verify/verify.hpp"

#if MHALEARN_FAULT_INJECTION
#include "verify/faults.hpp"

#include <cstdio>
#include <cstdlib>
#endif

namespace mha::commands {

#if MHALEARN_FAULT_INJECTION
namespace {
// The stage named by MHALEARN_INJECT_FAULT ("" when unset or empty), or an error.
std::string injected_stage(std::string& error) {
  const char* value = std::getenv("MHALEARN_INJECT_FAULT");
  if (!value || !*value) return "";
  if (!faults::find_fault(value))
    error = std::string("MHALEARN_INJECT_FAULT=") + value + " is not a stage (forward, 1, 2, 3, 4, 5, 6 or polish)";
  return value;
}
}  // namespace

std::string verify_fast_paths(FastPaths& fast) {
  std::string error;
  const std::string stage = injected_stage(error);
  fast = FastPaths{};
  if (!error.empty()) return error;
  if (!stage.empty()) {
    fast = faults::with_fault(stage);
    std::fprintf(stderr, "mhalearn: fault injected into stage %s: %s\n", stage.c_str(),
                 faults::find_fault(stage)->what.c_str());
  }
  return "";
}

bool load_datasets_whole() {
  const char* value = std::getenv("MHALEARN_WHOLE_DATASET");
  return value && std::string(value) == "1";
}

std::string learn_fast_paths(LearnOptions& options) {
  std::string error;
  const std::string stage = injected_stage(error);
  if (!error.empty()) return error;
  if (stage.empty()) return "";
  // The learner's reference step checks every stage (learn/reference_checks.hpp).
  options.fast = faults::with_fault(stage);
  std::fprintf(stderr, "mhalearn: fault injected into stage %s: %s\n", stage.c_str(),
               faults::find_fault(stage)->what.c_str());
  return "";
}
#else
std::string verify_fast_paths(FastPaths& fast) {
  fast = FastPaths{};
  return "";
}

std::string learn_fast_paths(LearnOptions&) { return ""; }

bool load_datasets_whole() { return false; }
#endif

}  // namespace mha::commands
