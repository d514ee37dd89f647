#include "stages/stage6/record.hpp"

#include "util/format.hpp"

namespace mha {

StageRecord net_record(const NetResult& net, double validation_error, int round, const ParameterErrors* errors) {
  const NetReport& nr = net.report;
  StageRecord r{"6", round, nr.samples, nr.seconds, "", {}};
  r.details = {{"grid_per_axis", nr.grid_per_axis}, {"coarse_resolution", nr.coarse_resolution},
               {"tuples_exhaustive", nr.tuples_exhaustive}, {"coarse_validation_error", nr.coarse_validation_error},
               {"refine_iterations", nr.refine_iterations}, {"tuples_refine", nr.tuples_refine},
               {"refine_capped", nr.refine_capped},
               {"final_resolution", nr.final_resolution}, {"validation_error", validation_error}};
  r.summary = format("net %d/axis (%lld tuples) then refined to step %.1e%s: validation error %.2e",
                     nr.grid_per_axis, (long long)nr.tuples_exhaustive, nr.final_resolution,
                     nr.refine_capped ? " (iteration cap)" : "", validation_error);
  // m ≥ 3: the grid pruned to the ball, refined head by head (m = 2 keeps its committed keys and line).
  if (nr.grid_centred || nr.refine_head_wise) {
    r.details["grid_cells"] = nr.grid_cells;
    r.details["grid_points"] = nr.grid_points;
    r.details["grid"] = nr.grid_centred ? "cell centres meeting the ball (proofs/net_pruning.md)" : "interval vertices";
    r.details["refinement"] = nr.refine_head_wise ? "head by head" : "joint";
    r.details["refine_extrapolations"] = nr.refine_extrapolations;
    r.summary = format("net %d/axis, %lld of %lld cells in the ball (%lld tuples), then %s to step %.1e%s: "
                       "validation error %.2e",
                       nr.grid_per_axis, (long long)nr.grid_points, (long long)nr.grid_cells,
                       (long long)nr.tuples_exhaustive, nr.refine_head_wise ? "head by head" : "jointly",
                       nr.final_resolution, nr.refine_capped ? " (iteration cap)" : "", validation_error);
  }
  if (errors) {
    r.details["theta_max_rel"] = errors->theta_max_rel;
    r.details["w_max_rel"] = errors->w_max_rel;
    r.summary += format("; Θ error %.2e, W error %.2e", errors->theta_max_rel, errors->w_max_rel);
  }
  return r;
}

}  // namespace mha
