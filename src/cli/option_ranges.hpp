// The one range of every numeric option: an option has the same range in every
// subcommand of the CLI and as a keyword of the Python module (its name
// without the dashes, '-' as '_'), and a value that is not a number says so.
// Header-only: the CLI (cli/options.hpp) and python/module.cpp both read it.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

namespace mha::cli {

struct OptionRange {
  const char* flag;  // as the CLI spells it
  double lo, hi;
  bool integer;
  bool lo_open = false;  // the lower end excluded: (lo, hi]
};

inline constexpr double kTwoTo(int e) { return e == 0 ? 1.0 : 2.0 * kTwoTo(e - 1); }

// The options' ranges, alphabetically. A subcommand-specific limit on top of
// one (study-wsum's d ≤ 256, learn's m ≤ kLearnerMaxHeads) is checked by that
// subcommand with its own one-line message and named in its --help.
inline constexpr OptionRange kOptionRanges[] = {
    {"--accept-fraction", 1e-9, 1, false},
    {"--assume-label-noise", 0, 1, false},
    {"--batch", 1, kTwoTo(24), true},
    {"--coherence", 0, 0.999999, false},
    {"--constraints", 0, kTwoTo(24), true},
    {"--cross-check", 1, kTwoTo(20), true},
    {"--crude-sculpt-samples", 0, kTwoTo(36), true},
    {"--d", 1, 1024, true},
    {"--final-fit-samples", 0, kTwoTo(36), true},
    {"--final-rounds", 0, 4, true},
    {"--final-sculpt-samples", -1, kTwoTo(40), true},
    {"--heads", 1, 64, true},
    {"--init-theta-norm", 0, 1e6, false},
    {"--k", 1, 1024, true},
    {"--label-noise", 0, 1e6, false},
    {"--learning-rate", 1e-12, 10, false},
    {"--m", 1, 64, true},
    {"--margin-events", 0, kTwoTo(30), true},
    {"--margin-samples", 1, kTwoTo(36), true},
    {"--max-samples", 0, kTwoTo(40), true},
    {"--max-seconds", 0, 1e7, false},
    {"--mpfr-checks", 0, kTwoTo(24), true},
    {"--n", 1, kTwoTo(40), true},
    {"--net-tuples", 1, kTwoTo(32), true},
    {"--p", 0, 1023, true},
    {"--pilot-samples", 1, kTwoTo(30), true},
    {"--points", 2, 100, true},
    {"--polish-iterations", 1, 100000, true},
    {"--polish-samples", 0, kTwoTo(24), true},
    {"--precision", 53, kTwoTo(16), true},
    {"--q-out", 0, 1023, true},
    {"--radius", 1e-3, 1e6, false},
    {"--reference-max-unknowns", 1, kTwoTo(20), true},
    {"--reference-samples", 1, kTwoTo(24), true},
    {"--rounds", 1, 20, true},
    {"--samples", 1, kTwoTo(40), true},
    {"--scale", 1e-6, 1e6, false},
    {"--sculpt-samples", 1, kTwoTo(36), true},
    {"--sigma-min", 0, 1e6, false},
    {"--stage1-samples", 1, kTwoTo(40), true},
    {"--starts", 1, kTwoTo(20), true},
    {"--stop-at-error", 0, 1, false},
    {"--study-max-m", 1, 12, true},
    {"--target", 0, kTwoTo(30), true},
    {"--tau", 0, 1e3, false},
    {"--test-samples", 0, kTwoTo(28), true},
    {"--threads", 1, 256, true},
    {"--tolerance", 0, 1, false, true},
    {"--v-min", 0, 1, false},
    {"--validation-samples", 1, kTwoTo(28), true},
    {"--verify-samples", 1, kTwoTo(30), true},
    {"--w-error", 0, 1e6, false},
    {"--write-samples", 0, kTwoTo(24), true},
};

// learn: its report compares the learned heads with the truth under every
// permutation (m! of them), so the learner takes at most this many heads.
inline constexpr int kLearnerMaxHeads = 8;

// The range of `flag`, or nullptr when the table has none.
inline const OptionRange* find_option_range(std::string_view flag) {
  for (const OptionRange& r : kOptionRanges)
    if (flag == r.flag) return &r;
  return nullptr;
}

// The range of `flag`; std::logic_error for a flag not in the table (a bug).
inline const OptionRange& option_range(std::string_view flag) {
  for (const OptionRange& r : kOptionRanges)
    if (flag == r.flag) return r;
  throw std::logic_error("no range for option " + std::string(flag));
}

// "1024", "2^40", "1e-06": a range end as messages and --help print it.
inline std::string format_bound(double v, bool integer) {
  char text[32];
  if (integer && v >= kTwoTo(16) && std::exp2(std::round(std::log2(v))) == v)
    std::snprintf(text, sizeof text, "2^%d", int(std::round(std::log2(v))));
  else if (integer)
    std::snprintf(text, sizeof text, "%.0f", v);
  else
    std::snprintf(text, sizeof text, "%g", v);
  return text;
}

inline std::string format_range(const OptionRange& r) {
  // Appended piece by piece: GCC 12 warns (-Wstringop-overflow, a false
  // positive) on `const char* + std::string&&` once this is inlined.
  std::string out = r.lo_open ? "(" : "";
  out.append(format_bound(r.lo, r.integer)).append("..").append(format_bound(r.hi, r.integer));
  if (r.lo_open) out.append("]");
  return out;
}

// "" when `value` is in the range, else "must be in 1..256, got 0".
inline std::string range_problem(const OptionRange& r, double value) {
  const bool low = r.lo_open ? !(value > r.lo) : !(value >= r.lo);
  if (!low && value <= r.hi) return "";
  char got[40];
  std::snprintf(got, sizeof got, r.integer ? "%.0f" : "%g", value);
  return "must be in " + format_range(r) + ", got " + got;
}

// "" when `text` is a number (an integer for an integer option) in the range,
// else why not: "'abc' is not a number", "'1.5' is not an integer", "must be in 1..256, got 0".
inline std::string range_problem(const OptionRange& r, const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  if (r.integer) {
    const long long v = std::strtoll(begin, &end, 10);
    if (text.empty() || *end != '\0' || std::isspace(static_cast<unsigned char>(text[0])))
      return "'" + text + "' is not an integer";
    if (errno == ERANGE) return "must be in " + format_range(r) + ", got " + text;
    return range_problem(r, double(v));
  }
  const double v = std::strtod(begin, &end);
  if (text.empty() || *end != '\0' || std::isspace(static_cast<unsigned char>(text[0])) || std::isnan(v))
    return "'" + text + "' is not a number";
  return range_problem(r, v);
}

// Seeds are 64-bit unsigned: "" or why `text` is not one ("-1" is refused, not
// wrapped around to 2^64 − 1).
inline std::string seed_problem(const std::string& text) {
  bool digits = !text.empty() && text.size() <= 20;
  for (const char c : text) digits = digits && c >= '0' && c <= '9';
  errno = 0;
  if (digits) std::strtoull(text.c_str(), nullptr, 10);
  if (!digits || errno == ERANGE) return "'" + text + "' is not a seed (an integer in 0..2^64-1)";
  return "";
}

}  // namespace mha::cli
