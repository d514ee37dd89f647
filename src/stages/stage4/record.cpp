#include "stages/stage4/record.hpp"

#include "util/format.hpp"

#include <algorithm>

namespace mha {

using nlohmann::json;

StageRecord sculpt_record(const ResculptResult& rs, const ResculptOptions& ro, int round, bool heuristic_widths) {
  const SculptReport& sr = rs.sculpt.report;
  StageRecord r{round == 0 ? "2" : "4", round, rs.pilot_samples + sr.samples, sr.seconds, "", {}};
  r.details = {{"tau", rs.tau}, {"pilot_samples", rs.pilot_samples}, {"pilot_eligible_rows", rs.pilot_eligible_rows},
               {"rows_certified", sr.rows_certified}, {"constraints", sr.constraints}, {"budget_exhausted", sr.budget_exhausted},
               {"sigma_min_assumed", ro.sculpt.certify.sigma_min}, {"w_error_assumed", ro.sculpt.certify.w_error},
               {"widths", heuristic_widths ? "heuristic (crude W_sum: optimistic sigma_min)" : "certification lemma under the stated assumptions"},
               {"numerical_rank", sr.numerical_rank}, {"gap", sr.gap}, {"tau_effective", sr.tau_effective},
               {"duplicate_constraints", sr.duplicate_constraints},
               {"shared_loop_seconds", sr.loop_seconds}, {"centre_seconds", sr.centre_seconds},
               {"hull_error_bound", sr.hull_distance_bound / sr.hull_point_norm},
               {"hull_error_typical", sr.hull_distance_typical / sr.hull_point_norm}};
  r.summary = format("tau %.2e: %lld constraints, gap %.2e, %s widths", rs.tau, (long long)sr.constraints, sr.gap,
                     heuristic_widths ? "heuristic" : "lemma");
  // Without a constraint there is no hull point to measure the lemma's distance against (0/0).
  if (sr.constraints > 0)
    r.summary += format("; lemma's hull error ≤ %.1e (typical %.1e)", sr.hull_distance_bound / sr.hull_point_norm,
                        sr.hull_distance_typical / sr.hull_point_norm);
  if (ro.sculpt.certify.label_noise > 0 || ro.sculpt.certify.float32_labels) {
    r.details["label_noise_assumed"] = ro.sculpt.certify.label_noise;
    r.details["float32_labels"] = ro.sculpt.certify.float32_labels;
    r.details["noise_failure_probability"] = ro.sculpt.certify.noise_failure_probability;
  }
  json verdicts;
  for (int v = 0; v < 6; ++v) verdicts[to_string(static_cast<RowVerdict>(v))] = sr.verdicts[v];
  r.details["verdicts"] = verdicts;
  if (sr.rows_examined == 0) {
    r.summary += "; no samples left";
  } else if (sr.constraints == 0) {
    int top = 0;
    for (int v = 1; v < 6; ++v)
      if (sr.verdicts[v] > sr.verdicts[top]) top = v;
    r.summary += format("; rows examined %lld, most frequent verdict %s (%lld)", (long long)sr.rows_examined,
                        to_string(static_cast<RowVerdict>(top)), (long long)sr.verdicts[top]);
  }
  if (sr.truth && sr.constraints > 0) {
    double violation = 0;
    for (double v : sr.truth->theta_violation) violation = std::max(violation, v);
    r.details["hull_error"] = sr.truth->hull_error;
    r.details["hull_angle"] = sr.truth->hull_angle;
    r.details["theta_max_violation"] = violation;
    r.details["sigma_assumption_violated"] = sr.truth->sigma_assumption_violated;
    r.summary += format("; hull error %.2e", sr.truth->hull_error);
  }
  return r;
}

}  // namespace mha
