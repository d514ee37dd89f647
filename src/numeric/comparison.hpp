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

// What a row and its parts share: the items compared, the one with the largest
// difference/bound ratio, the undecided ones and the verdict.
struct ComparisonItems {
  std::string quantity;         // what is compared, e.g. "‖Ŵ_fast − Ŵ_ref‖/‖Ŵ_ref‖ per column"
  double max_difference = 0;    // the difference of the item with the largest difference/bound
  double bound = 0;             // that item's derived bound
  double slack = 0;             // max over compared items of difference / bound (≤ 1: agree)
  unsigned precision = 128;     // the reference's precision when the verdict was reached
  int undecided = 0;            // items within a derived band of a threshold (counted in `compared`)
  int compared = 0;             // items compared (rows, columns, entries, decisions)
  bool agree = true;            // no decided item is beyond its bound
  std::string detail;           // counts and notes, one line

  // One item: keeps it when its difference/bound ratio is the largest so far, and
  // clears `agree` when difference > bound. NaN and ±∞ never agree: a difference that
  // is not finite disagrees whatever the bound; a finite difference against a bound
  // that is not finite (NaN, ±∞: no bound at this accuracy) is undecided.
  void record(double difference, double item_bound);
  // One decision compared as a whole (a verdict, a dimension): disagrees when `same` is false.
  void record_decision(bool same);
  // One item within a derived band of a threshold: counted, neither agreement nor disagreement.
  void record_undecided();
};

// A further comparison attached to a row (the body of stages 2 and 4, stage 3's
// selection, stage 6's net): its own items, bound and reference precision. The
// row agrees only when every part agrees; its undecided count includes the parts'.
struct ComparisonPart : ComparisonItems {
  std::string name;             // e.g. "body widths"
};

struct Comparison : ComparisonItems {
  std::string stage;            // "forward", "1", …, "6", "polish"
  double seconds = 0;
  std::vector<ComparisonPart> parts;
};

// Appends a part to a row: the row's verdict and undecided count take it in.
void add_part(Comparison& row, ComparisonPart part);
// A row (without parts of its own) as a part of another row, under `name`.
ComparisonPart as_part(const Comparison& row, const std::string& name);

// A value against a threshold with a derived band: within the band (|value −
// threshold| ≤ band, the edge included) the side is undecided; so is any NaN or ±∞
// value or threshold, and a band that is NaN or negative.
enum class BandSide { below, above, undecided };
BandSide side_of(double value, double threshold, double band);

// "agree", "DISAGREE", "undecided" (every compared item undecided: nothing was decided),
// or "not compared" (compared == 0: the stage could not run; `detail` says why).
const char* verdict(const ComparisonPart& part);
const char* verdict(const Comparison& row);  // the row and its parts
// What disagrees in a row, in one line: the row's quantity and detail when its own
// items do, else the first disagreeing part's name and detail ("" when none does).
std::string disagreement(const Comparison& row);
// Disagreement in the one sense the project gives the word: some item was compared
// and lies beyond its derived bound, after escalation (a row whose part disagrees
// disagrees). Exit 4, Python's ReferenceDisagreement and "DISAGREE" mean this.
// Undecided items and rows that compared nothing never disagree.
bool disagrees(const Comparison& c);
// The row as `mhalearn verify --json` prints it, and back (for a resumed run's report).
nlohmann::json to_json(const Comparison& c);
Comparison comparison_from_json(const nlohmann::json& j);
// The rows as a table, each row's parts indented under it: what `verify`, `learn`
// and `demo` print.
std::string format_table(const std::vector<Comparison>& rows);

// The ladder of the least-squares rows (stage 3's fit, stage 6's W at given Θ): their
// inputs are doubles, so the last rung solves them exactly in rationals.
inline const std::vector<unsigned> kLeastSquaresLadder = {128, 256, kExactRationals};

// Runs `compare` at each precision of `ladder` until it agrees; returns the last
// result (with `precision` set). The default ladder is MPFR 128, 256.
Comparison escalate(const std::function<Comparison(unsigned bits)>& compare,
                    const std::vector<unsigned>& ladder = {128, 256});
// The same for a part.
ComparisonPart escalate_part(const std::function<ComparisonPart(unsigned bits)>& compare,
                             const std::vector<unsigned>& ladder = {128, 256});

}  // namespace mha
