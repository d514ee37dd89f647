// The work of `mhalearn hard` (the SQ-hard family of MATH.md §4), which
// hard_command.cpp declares: the family built exactly and verified, its SQ
// numbers, the report (one JSON, one text form), or the conditioning study of
// docs/hardness.md.
#pragma once

#include "commands/schema.hpp"
#include "commands/status.hpp"
#include "model/layer.hpp"
#include "numeric/precision.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace mha::commands {

// What `hard` was asked, but its files and printing.
struct HardArgs {
  int d = 0, m = 0, p = 0, q_out = 1;
  std::string subset, q;
  uint64_t seed = 1;
  int64_t samples = 10000, mpfr_checks = -1;  // mpfr_checks −1: 256, fewer for d > 128
  unsigned precision = kDefaultPrecisionBits;
  double tolerance = 1e-3;
  int threads = default_threads();
  int study_max_m = 8;
  bool d_given = false, m_given = false;
  bool samples_given = false;  // --verify-samples given: sample even when d ≤ 10
};

struct HardRun {
  int status = kExitOk;
  std::string error;                // one line, when status ≠ kExitOk
  nlohmann::json report;            // what --json prints
  std::string text;                 // what the CLI prints without --json
  std::optional<Instance> instance; // the family's layer, when it was built and verified
  std::string study_data;           // the study's table as a gnuplot data file (--study-data)
  HardRun failed(int code, std::string message) && {
    status = code;
    error = std::move(message);
    return std::move(*this);
  }
};

// F_S built exactly, verified (exact closed form; double and MPFR within
// derived bounds), with its SQ lower bound and, when 2d is small, the exact Gram
// check. `instance` is set only when every check holds.
HardRun run_hard_family(const HardArgs& a, const Context& ctx);

// The conditioning study: every q choice for m = 1..a.study_max_m at d (16 if
// a.d = 0), with a.samples sampled inputs (256 if not given).
HardRun run_hard_study(const HardArgs& a);

}  // namespace mha::commands
