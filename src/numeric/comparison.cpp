#include "numeric/comparison.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace mha {

std::string precision_name(unsigned bits) {
  if (bits == kExactRationals) return "exact rationals";
  if (bits == kCertifiedDouble) return "double, certified";
  return "MPFR " + std::to_string(bits);
}

namespace {
bool items_disagree(const ComparisonItems& c) { return c.compared > 0 && !c.agree; }
// Every compared item undecided: nothing was decided, so nothing agrees.
bool items_undecided(const ComparisonItems& c) { return c.compared > 0 && c.undecided >= c.compared; }
}  // namespace

const char* verdict(const ComparisonPart& p) {
  return p.compared == 0 ? "not compared" : items_disagree(p) ? "DISAGREE" : items_undecided(p) ? "undecided" : "agree";
}

bool disagrees(const Comparison& c) {
  if (items_disagree(c)) return true;
  for (const ComparisonPart& p : c.parts)
    if (items_disagree(p)) return true;
  return false;
}

std::string disagreement(const Comparison& c) {
  if (items_disagree(c)) return c.quantity + ": " + c.detail;
  for (const ComparisonPart& p : c.parts)
    if (items_disagree(p)) return p.name + ": " + p.detail;
  return "";
}

const char* verdict(const Comparison& c) {
  int compared = c.compared;
  for (const ComparisonPart& p : c.parts) compared += p.compared;
  // c.undecided already counts the parts' undecided items (add_part).
  if (compared == 0) return "not compared";
  if (disagrees(c)) return "DISAGREE";
  return c.undecided >= compared ? "undecided" : "agree";
}

void ComparisonItems::record_decision(bool same) {
  ++compared;
  if (!same) agree = false;
}

void ComparisonItems::record_undecided() {
  ++compared;
  ++undecided;
}

void ComparisonItems::record(double difference, double item_bound) {
  ++compared;
  // A finite difference against no finite bound (NaN or ±∞: not separated at this
  // accuracy): undecided. A difference that is not finite (a path gave NaN or ±∞)
  // is decided below: it is never within a bound.
  if (std::isfinite(difference) && !std::isfinite(item_bound)) {
    ++undecided;
    return;
  }
  // An exact zero is within any bound, 0 included: its ratio is 0, not the NaN of 0/0,
  // which would be kept as the largest ratio in place of a later item beyond its bound.
  const double ratio = !std::isfinite(difference) ? std::abs(difference) : difference == 0 ? 0.0 : difference / item_bound;
  const bool first = max_difference == 0 && bound == 0 && slack == 0;  // no item kept yet
  if (first || ratio > slack || !(ratio == ratio)) {
    slack = ratio;
    max_difference = difference;
    bound = item_bound;
  }
  if (!(difference <= item_bound) || !std::isfinite(difference)) agree = false;
}

void add_part(Comparison& row, ComparisonPart part) {
  row.undecided += part.undecided;
  row.parts.push_back(std::move(part));
}

ComparisonPart as_part(const Comparison& row, const std::string& name) {
  ComparisonPart part;
  static_cast<ComparisonItems&>(part) = row;
  part.name = name;
  return part;
}

BandSide side_of(double value, double threshold, double band) {
  // NaN or ±∞ anywhere decides nothing (an infinite reference value is a failed
  // computation, not a side).
  if (!std::isfinite(value) || !std::isfinite(threshold) || !(band >= 0)) return BandSide::undecided;
  if (!(std::abs(value - threshold) > band)) return BandSide::undecided;
  return value > threshold ? BandSide::above : BandSide::below;
}

namespace {
nlohmann::json row_json(const Comparison& c);
}  // namespace

nlohmann::json to_json(const Comparison& c) {
  nlohmann::json row = row_json(c);
  if (disagrees(c)) row["disagreement"] = disagreement(c);  // only then: agreeing rows keep their keys
  return row;
}

namespace {
nlohmann::json row_json(const Comparison& c) {
  nlohmann::json parts = nlohmann::json::array();
  for (const auto& p : c.parts)
    parts.push_back({{"name", p.name},
                     {"quantity", p.quantity},
                     {"compared", p.compared},
                     {"max_difference", p.max_difference},
                     {"bound", p.bound},
                     {"slack", p.slack},
                     {"precision", precision_name(p.precision)},
                     {"undecided", p.undecided},
                     {"verdict", verdict(p)},
                     {"detail", p.detail}});
  return {{"parts", parts},
          {"stage", c.stage},
          {"quantity", c.quantity},
          {"compared", c.compared},
          {"max_difference", c.max_difference},
          {"bound", c.bound},
          {"slack", c.slack},
          {"precision", precision_name(c.precision)},
          {"undecided", c.undecided},
          {"verdict", verdict(c)},
          {"detail", c.detail},
          {"seconds", c.seconds}};
}
}  // namespace

namespace {

unsigned precision_from_name(const std::string& name) {
  if (name == "exact rationals") return kExactRationals;
  if (name == "double, certified") return kCertifiedDouble;
  if (name.rfind("MPFR ", 0) != 0) throw std::invalid_argument("unknown precision '" + name + "'");
  return static_cast<unsigned>(std::stoul(name.substr(5)));
}

// A double as to_json writes it: null stands for a non-finite value.
double real(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = j.at(key);
  return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>();
}

void items_from_json(const nlohmann::json& j, ComparisonItems& c) {
  c.quantity = j.at("quantity").get<std::string>();
  c.compared = j.at("compared").get<int>();
  c.max_difference = real(j, "max_difference");
  c.bound = real(j, "bound");
  c.slack = real(j, "slack");
  c.precision = precision_from_name(j.at("precision").get<std::string>());
  c.undecided = j.at("undecided").get<int>();
  c.agree = j.at("verdict").get<std::string>() != "DISAGREE";
  c.detail = j.at("detail").get<std::string>();
}

std::string table_line(const char* format, const std::string& name, const ComparisonItems& c, const char* verdict_text) {
  char line[2048];
  std::snprintf(line, sizeof line, format, name.c_str(), c.compared, c.max_difference, c.bound, c.slack,
                precision_name(c.precision).c_str(), verdict_text, c.detail.c_str());
  return line;
}

}  // namespace

Comparison comparison_from_json(const nlohmann::json& j) {
  Comparison c;
  items_from_json(j, c);
  c.stage = j.at("stage").get<std::string>();
  c.seconds = real(j, "seconds");
  for (const auto& p : j.at("parts")) {
    ComparisonPart part;
    items_from_json(p, part);
    part.name = p.at("name").get<std::string>();
    c.parts.push_back(part);
  }
  return c;
}

std::string format_table(const std::vector<Comparison>& rows) {
  char header[256];
  std::snprintf(header, sizeof header, "%-7s %9s %12s %12s %9s %-18s %-12s %s\n", "stage", "compared", "max diff",
                "bound", "slack", "reference", "verdict", "detail");
  std::string out = header;
  for (const auto& c : rows) {
    out += table_line("%-7s %9d %12.3e %12.3e %9.2e %-18s %-12s %s\n", c.stage, c, verdict(c));
    // A row's parts, indented under it (their undecided items are in the row's count).
    for (const auto& p : c.parts)
      out += table_line("  %-16s %9d %12.3e %12.3e %9.2e %-18s %-12s %s\n", p.name, p, verdict(p));
  }
  return out;
}

namespace {
// The ladder's loop, for a row or a part: stop at the first rung that does not disagree.
template <class Result>
Result climb(const std::function<Result(unsigned bits)>& compare, const std::vector<unsigned>& ladder,
             bool (*disagreeing)(const Result&)) {
  Result result;
  for (unsigned bits : ladder) {
    result = compare(bits);
    result.precision = bits;
    if (!disagreeing(result)) break;
  }
  return result;
}
}  // namespace

Comparison escalate(const std::function<Comparison(unsigned bits)>& compare, const std::vector<unsigned>& ladder) {
  const auto start = std::chrono::steady_clock::now();
  Comparison result = climb<Comparison>(compare, ladder, [](const Comparison& c) { return disagrees(c); });
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

ComparisonPart escalate_part(const std::function<ComparisonPart(unsigned bits)>& compare,
                             const std::vector<unsigned>& ladder) {
  return climb<ComparisonPart>(compare, ladder, [](const ComparisonPart& p) { return items_disagree(p); });
}

}  // namespace mha
