// Deliberately wrong copies of every stage's fast path, for tests only: the
// unit tests of `verify` (tests/verify/test_verify.cpp) and the fault-injection
// build of the CLI (`mhalearn_faulty`, MHALEARN_INJECT_FAULT=<stage>) swap them
// in and require the stage's reference to reject them after escalating.
//
// Compiled into the test targets only (CMakeLists.txt, mhalearn_faults): the
// library and the release `mhalearn` do not contain them.
#pragma once

#include "verify/verify.hpp"

#include <functional>
#include <string>
#include <vector>

namespace mha::faults {

struct Fault {
  std::string stage;      // a verify_stage_names() entry
  unsigned escalated_to;  // the reference precision the disagreement must be confirmed at
  std::function<void(FastPaths&)> inject;
  std::string what;       // the wrong copy, in one line
};

// One fault per verify_stage_names() entry, in that order.
const std::vector<Fault>& stage_faults();

// The fault of `stage`, or nullptr for a name that is not a stage.
const Fault* find_fault(const std::string& stage);

// `fast` with the fault of `stage` injected.
FastPaths with_fault(const std::string& stage, FastPaths fast = {});

}  // namespace mha::faults
