// Stage 1's line of the learner's report (stages/stage_record.hpp).
#pragma once

#include "model/layer.hpp"
#include "stages/stage1/wsum.hpp"
#include "stages/stage_record.hpp"

namespace mha {

// ‖Ŵ − W_Σ‖_F / ‖W_Σ‖_F against the truth (NaN without it).
double w_sum_rel_error(const MatD& w_hat, const Layer* truth);

// `truth`, when given, adds Ŵ's true error (the report only).
StageRecord stage1_record(const Stage1Result& result, const Layer* truth);

}  // namespace mha
