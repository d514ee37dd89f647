#include "stages/stage1/check.hpp"

#include <cmath>
#include <string>

namespace mha {

Comparison check_stage1(const SampleSource& source, const Layer* layer, uint64_t first, int64_t samples,
                        const Stage1Fast& fast) {
  return escalate([&](unsigned bits) {
    const Stage1SameSampleCheck s = stage1_same_sample_check(source, layer, first, samples, bits, fast);
    Comparison c;
    // A std::string, not the literal: GCC 12 reports assigning a one-character literal here as a
    // memcpy of 2^63 bytes (a false positive of -Wstringop-overflow).
    c.stage = std::string("1");
    c.quantity = "|Ŵ_fast − Ŵ_ref| per entry";
    for (Eigen::Index e = 0; e < s.fast.size(); ++e) {
      const double difference = std::abs(s.fast.data()[e] - s.reference.data()[e]);
      if (difference == 0 && s.bound.data()[e] == 0) c.record_decision(true);  // an exact zero on both paths
      else c.record(difference, s.bound.data()[e]);
    }
    c.detail = std::to_string(s.samples) + " samples, labels " + (layer ? "recomputed in MPFR" : "as the source has them");
    return c;
  });
}

}  // namespace mha
