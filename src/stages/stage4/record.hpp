// The line of a sculpting round (stage 2 in round 0, stage 4 after) in the
// learner's report (stages/stage_record.hpp).
#pragma once

#include "stages/stage4/resculpt.hpp"
#include "stages/stage_record.hpp"

namespace mha {

// `heuristic_widths`: the round kept its slabs with the optimistic σ_min (round 0,
// or a round whose lemma widths left too few slabs).
StageRecord sculpt_record(const ResculptResult& result, const ResculptOptions& options, int round, bool heuristic_widths);

}  // namespace mha
