#include "verify/comparison.hpp"

#include <chrono>
#include <cmath>

namespace mha {

std::string precision_name(unsigned bits) {
  if (bits == kExactRationals) return "exact rationals";
  if (bits == kCertifiedDouble) return "double, certified";
  return "MPFR " + std::to_string(bits);
}

const char* verdict(const Comparison& c) { return c.compared == 0 ? "not compared" : c.agree ? "agree" : "DISAGREE"; }

void ComparisonPart::record(double difference, double item_bound) {
  const double ratio = difference / item_bound;
  if (compared == 0 || ratio > slack || !(ratio == ratio)) {
    slack = ratio;
    max_difference = difference;
    bound = item_bound;
  }
  ++compared;
  if (!(difference <= item_bound)) agree = false;
}

void add_part(Comparison& row, ComparisonPart part) {
  row.agree = row.agree && part.agree;
  row.undecided += part.undecided;
  row.parts.push_back(std::move(part));
}

BandSide side_of(double value, double threshold, double band) {
  if (!(std::abs(value - threshold) > band)) return BandSide::undecided;
  return value > threshold ? BandSide::above : BandSide::below;
}

nlohmann::json to_json(const Comparison& c) {
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
                     {"verdict", p.agree ? "agree" : "DISAGREE"},
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

Comparison escalate(const std::function<Comparison(unsigned bits)>& compare, const std::vector<unsigned>& ladder) {
  const auto start = std::chrono::steady_clock::now();
  Comparison result;
  for (unsigned bits : ladder) {
    result = compare(bits);
    result.precision = bits;
    if (result.agree) break;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

ComparisonPart escalate_part(const std::function<ComparisonPart(unsigned bits)>& compare,
                             const std::vector<unsigned>& ladder) {
  ComparisonPart result;
  for (unsigned bits : ladder) {
    result = compare(bits);
    result.precision = bits;
    if (result.agree) break;
  }
  return result;
}

}  // namespace mha
