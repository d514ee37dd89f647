// RapidCheck properties inside Catch2, deterministic by default.
//
// Each property runs `cases` cases with a seed derived from a fixed base seed
// and the property's description, so CI runs are reproducible. Environment:
//   MHALEARN_PROPERTY_SEED   base seed (default 20261121)
//   MHALEARN_PROPERTY_SCALE  multiplies every case count (default 1; e.g. 20 locally)
// A failure prints the seed, the case count and the shrunk counterexample.
#pragma once

#include <rapidcheck.h>
#include <catch2/catch.hpp>

#include <cstdint>
#include <sstream>
#include <string>

namespace mha::test {

uint64_t property_base_seed();
int property_scale();
rc::detail::TestParams property_params(const std::string& description, int cases);

template <class Testable>
void property(const std::string& description, int cases, Testable&& testable) {
  using namespace rc::detail;
  const TestParams params = property_params(description, cases);
  TestMetadata metadata;
  metadata.id = description;
  metadata.description = description;
  const TestResult result = checkProperty(toProperty(std::forward<Testable>(testable)), metadata, params);
  std::ostringstream msg;
  msg << "property: " << description << "\n  seed=" << params.seed << " cases=" << params.maxSuccess
      << " (MHALEARN_PROPERTY_SEED=" << property_base_seed() << ", MHALEARN_PROPERTY_SCALE=" << property_scale() << ")\n";
  printResultMessage(result, msg);
  if (result.template is<SuccessResult>()) {
    const auto success = result.template get<SuccessResult>();
    if (!success.distribution.empty()) WARN(msg.str());
    SUCCEED(description);
  } else {
    FAIL(msg.str());
  }
}

// Test of the tester: runs the property against a deliberately wrong
// implementation and passes only when the property finds a counterexample
// within `cases` cases (the shrunk counterexample is printed, as a reminder
// of what the property catches). A property that cannot reject a wrong
// implementation is vacuous.
template <class Testable>
void property_rejects(const std::string& description, int cases, Testable&& testable) {
  using namespace rc::detail;
  TestParams params = property_params(description, cases);
  params.disableShrinking = true;  // any counterexample will do: shrinking would only re-run the costly case
  TestMetadata metadata;
  metadata.id = description;
  metadata.description = description;
  const TestResult result = checkProperty(toProperty(std::forward<Testable>(testable)), metadata, params);
  std::ostringstream msg;
  msg << "test of the tester: " << description << "\n  seed=" << params.seed << " cases=" << params.maxSuccess << "\n";
  printResultMessage(result, msg);
  if (result.template is<SuccessResult>()) {
    FAIL(msg.str() + "  the property accepted a deliberately wrong implementation in every case");
  } else {
    SUCCEED(msg.str());
  }
}

}  // namespace mha::test
