// Stages 2 and 4 as the learner runs them (MATH.md §3.2, §3.4): sculpt K with the
// current W_Σ estimate and a residual tolerance τ chosen from the data.
//
// Stage 4 is stage 2 again with the refined W_Σ of stage 3 and a much smaller
// τ. A fixed τ either starves (below the residual floor that the W_Σ error
// imposes) or admits rows where the heads disagree, and the floor is not known
// in advance. So τ is adaptive, like stage 3's margin threshold: a pilot sample
// measures the relative residuals of the rows that pass every other check, and
// τ is the quantile that would yield the target number of constraints from
// 1/headroom of the sample budget — the best-agreeing rows the budget affords.
#pragma once

#include "stages/stage2/sculpt.hpp"

namespace mha {

struct ResculptOptions {
  SculptOptions sculpt;         // sculpt.certify.tau is replaced by the adaptive τ
  int64_t pilot_samples = 20000;
  double headroom = 2;          // aim to reach the target with budget/headroom samples
  bool fixed_tau = false;       // use sculpt.certify.tau as given: no pilot (the paper variant)
};

struct ResculptResult {
  double tau = 0;
  int64_t pilot_samples = 0;
  int64_t pilot_eligible_rows = 0;  // pilot rows passing every check but the residual (best_rows
                                    // selection: no pilot; the rows kept)
  SculptResult sculpt;
};

// The pilot uses samples first_sample .. first_sample+pilot−1; sculpting starts after it.
ResculptResult resculpt(const SampleSource& source, const MatD& w_sum, int m, const ResculptOptions& options,
                        const Layer* truth = nullptr);

}  // namespace mha
