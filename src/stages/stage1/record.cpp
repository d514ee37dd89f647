#include "stages/stage1/record.hpp"

#include "util/format.hpp"

#include <algorithm>
#include <cmath>

namespace mha {

double w_sum_rel_error(const MatD& w, const Layer* truth) {
  if (!truth) return NAN;
  const MatD ws = truth->w_sum();
  return (w - ws).norm() / ws.norm();
}

StageRecord stage1_record(const Stage1Result& s1, const Layer* truth) {
  StageRecord r{"1", -1, s1.samples, s1.seconds, "", {}};
  r.details = {{"standard_error_rel", s1.standard_error.norm() / std::max(s1.w_hat.norm(), 1e-300)}};
  if (truth) r.details["w_sum_rel_error"] = w_sum_rel_error(s1.w_hat, truth);
  r.summary = format("W_sum crude estimate, relative SE %.2e", r.details["standard_error_rel"].get<double>());
  if (truth) r.summary += format("; true error %.3e", w_sum_rel_error(s1.w_hat, truth));
  return r;
}

}  // namespace mha
