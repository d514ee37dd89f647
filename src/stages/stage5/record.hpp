// Stage 5's line of the learner's report (stages/stage_record.hpp).
#pragma once

#include "stages/stage5/span.hpp"
#include "stages/stage_record.hpp"

namespace mha {

StageRecord span_record(const SpanResult& span, int round);

}  // namespace mha
