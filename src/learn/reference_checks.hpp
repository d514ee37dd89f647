// The learner's reference step (LearnOptions::reference; internal to src/learn/):
// each stage's fast path against its reference path on the run's own inputs, with
// the stage's check function — the functions `mhalearn verify` calls on oracle
// inputs — and the run's diagnostics. Each appends rows to the report as the
// inputs become available, and does nothing when the options turn it off.
//
//   1        the first samples of stage 1's range, with their labels (check_stage1)
//   2, 4     every row of the first samples a sculpting round examined, with that
//            round's Ŵ and options, and the bodies both paths build from them
//            (check_certification)
//   3        the fit and the selection of every stage-3 run (check_margin); on the
//            selected round, the minimum-norm point of its body (check_min_norm_point)
//   5        the span of the selected round's body (check_span)
//   6        least squares for W at the selected layer's Θ on the validation samples,
//            and the net's exhaustive level on its hull, coarse (check_stage6)
//   forward  the selected layer on the first validation samples (check_forward)
//   polish   polishing's objective at the layer it started from (check_polish): at the
//            polished layer the objective is rounding itself, where no comparison of
//            two roundings can tell a relative fault from noise
//
// The diagnostics — statistical outcomes, never disagreements: the selected body not
// thin across the hull (LP widths), the hull dimension read off the gap not m − 1,
// the proxy's distance from the minimum-norm point of K, K proved empty.
#pragma once

#include "learn/pipeline.hpp"

#include <optional>
#include <vector>

namespace mha {

// The gate of the large references (stage 3's certified QP, stage 5's MPFR SVD, whose
// costs grow as (d²)³): the unknowns of K are d², at most `max_unknowns`
// (--reference-max-unknowns).
bool large_references_fit(int d, int64_t max_unknowns);

// The selected round's diagnostics, as rules on their measured inputs:
// the least-squares centre x0 against K's minimum-norm point P_min, ‖x0 − P_min‖/‖P_min‖
// (+∞ when P_min = 0 ≠ x0), a warning beyond 0.1 unless the paper variant, whose proxy is
// P_min itself;
Diagnostic proxy_distance_diagnostic(int round, const Eigen::VectorXd& x0, const Eigen::VectorXd& p_min, bool paper);
// and the hull dimension stage 5 read off the singular-value gap, a warning when it is not m − 1.
std::optional<Diagnostic> hull_dimension_diagnostic(int round, int dimension_fast, double gap, int m);

void check_stage1_run(Pipeline& p, uint64_t first, int64_t samples);
void check_sculpt_run(Pipeline& p, int round, const MatD& w_sum, const ResculptOptions& options,
                      const ResculptResult& result);
void check_margin_run(Pipeline& p, int round, const std::vector<MatD>& proxies, const MarginResult& result,
                      uint64_t first);
void check_selected_round(Pipeline& p, const LearnRound& best);
// The paper variant's stage-3 proxy, the minimum-norm point of round `round`'s body
// (check_min_norm_point), for d² ≤ reference_max_unknowns.
void check_proxy_run(Pipeline& p, int round, const ConvexBody& body);
// Whether check_selected_round reads the selected round's body (its slabs): the
// stage-3 and stage-5 rows, run only with the reference on, without the stage-6
// oracle and for d² ≤ reference_max_unknowns. When not, the learner drops each
// round's slabs after stage 5 (learner.cpp, step_span).
bool selected_body_checked(const Pipeline& p);
void check_polish_start(Pipeline& p, const Layer& start);

}  // namespace mha
