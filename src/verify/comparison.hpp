// One fast-vs-reference comparison, as `mhalearn verify` reports it: the largest
// difference between the fast path and the reference path on the same inputs,
// the derived bound it must stay under (src/numeric/tolerance.hpp), the
// reference's precision, and the verdict. Disagreement is declared only after
// escalation: a comparison whose difference exceeds its bound is repeated with
// a more precise reference (MPFR 128 → 256 bits → exact rationals where the
// inputs allow), so a reference that was not precise enough is never blamed on
// the fast path.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace mha {

// Reference precision: MPFR bits, kExactRationals, or kCertifiedDouble (a
// reference computed in double with a posteriori certificates: stage 5's LP widths).
constexpr unsigned kExactRationals = 0;
constexpr unsigned kCertifiedDouble = 53;
std::string precision_name(unsigned bits);

struct Comparison {
  std::string stage;            // "forward", "1", …, "6", "polish"
  std::string quantity;         // what is compared, e.g. "‖Ŵ_fast − Ŵ_ref‖/‖Ŵ_ref‖ per column"
  double max_difference = 0;    // the largest difference, in the bound's units
  double bound = 0;             // derived bound on it
  double slack = 0;             // max over compared items of difference / bound (≤ 1: agree)
  unsigned precision = 128;     // the reference's precision when the verdict was reached
  int undecided = 0;            // items within a derived distance of a threshold (verdict comparisons)
  int compared = 0;             // items compared (rows, columns, entries)
  bool agree = false;
  std::string detail;           // counts and notes, one line
  double seconds = 0;
};

// "agree", "DISAGREE", or "not compared" (compared == 0: the stage could not run; `detail` says why).
const char* verdict(const Comparison& c);
// The row as `mhalearn verify --json` prints it.
nlohmann::json to_json(const Comparison& c);

// Runs `compare` at each precision of `ladder` until it agrees; returns the last
// result (with `precision` set). The default ladder is MPFR 128, 256.
Comparison escalate(const std::function<Comparison(unsigned bits)>& compare,
                    const std::vector<unsigned>& ladder = {128, 256});

}  // namespace mha
