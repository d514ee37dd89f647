// Polishing's lines of the learner's report (stages/stage_record.hpp): the
// Levenberg–Marquardt run, and the final fit on noisy labels (learn/noise.hpp).
#pragma once

#include "stages/polish/polish.hpp"
#include "stages/stage_record.hpp"

#include <string>

namespace mha {

// `matrix_free`: the run used the matrix-free solver (its keys are added; the
// dense solver's reports keep their earlier keys). `kept`: validation fell.
StageRecord polish_record(const PolishReport& report, bool matrix_free, bool kept);

// The final fit's line: `train_samples` chosen for `reason`.
StageRecord final_fit_record(const PolishReport& report, int64_t train_samples, const std::string& reason, bool kept);

}  // namespace mha
