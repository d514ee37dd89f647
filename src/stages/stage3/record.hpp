// Stage 3's line of the learner's report (stages/stage_record.hpp).
#pragma once

#include "stages/stage3/margin.hpp"
#include "stages/stage_record.hpp"

namespace mha {

StageRecord margin_record(const MarginResult& result, int round);

}  // namespace mha
