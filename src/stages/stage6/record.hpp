// Stage 6's line of the learner's report (stages/stage_record.hpp).
#pragma once

#include "stages/stage6/net.hpp"
#include "stages/stage_record.hpp"

namespace mha {

// The layer's parameter errors against the truth, when known (the report only).
struct ParameterErrors {
  double theta_max_rel = 0, w_max_rel = 0;
};

StageRecord net_record(const NetResult& net, double validation_error, int round, const ParameterErrors* errors);

}  // namespace mha
