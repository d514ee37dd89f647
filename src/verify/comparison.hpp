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

// A further comparison attached to a row (the body of stages 2 and 4, stage 3's
// selection, stage 6's net): its own items, bound and reference precision. The
// row agrees only when every part agrees; its undecided count includes the parts'.
struct ComparisonPart {
  std::string name;             // e.g. "body widths"
  std::string quantity;
  double max_difference = 0;    // of the item with the largest difference/bound
  double bound = 0;
  double slack = 0;
  unsigned precision = 128;
  int undecided = 0;
  int compared = 0;
  bool agree = true;
  std::string detail;
  // Keeps the item with the largest difference/bound ratio (and counts it).
  void record(double difference, double item_bound);
};

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
  std::vector<ComparisonPart> parts;
};

// Appends a part to a row: the row's verdict and undecided count take it in.
void add_part(Comparison& row, ComparisonPart part);

// A value against a threshold with a derived band: within the band (|value −
// threshold| ≤ band, the edge included) the side is undecided.
enum class BandSide { below, above, undecided };
BandSide side_of(double value, double threshold, double band);

// "agree", "DISAGREE", or "not compared" (compared == 0: the stage could not run; `detail` says why).
const char* verdict(const Comparison& c);
// The row as `mhalearn verify --json` prints it.
nlohmann::json to_json(const Comparison& c);

// Runs `compare` at each precision of `ladder` until it agrees; returns the last
// result (with `precision` set). The default ladder is MPFR 128, 256.
Comparison escalate(const std::function<Comparison(unsigned bits)>& compare,
                    const std::vector<unsigned>& ladder = {128, 256});
// The same for a part.
ComparisonPart escalate_part(const std::function<ComparisonPart(unsigned bits)>& compare,
                             const std::vector<unsigned>& ladder = {128, 256});

}  // namespace mha
