#include "verify/comparison.hpp"

#include <chrono>

namespace mha {

std::string precision_name(unsigned bits) {
  if (bits == kExactRationals) return "exact rationals";
  if (bits == kCertifiedDouble) return "double, certified";
  return "MPFR " + std::to_string(bits);
}

const char* verdict(const Comparison& c) { return c.compared == 0 ? "not compared" : c.agree ? "agree" : "DISAGREE"; }

nlohmann::json to_json(const Comparison& c) {
  return {{"stage", c.stage},
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

}  // namespace mha
