#include "stages/stage3/record.hpp"

#include "util/format.hpp"

namespace mha {

StageRecord margin_record(const MarginResult& s3, int round) {
  const MarginReport& mr = s3.report;
  StageRecord r{"3", round, mr.pilot_samples + mr.samples, mr.seconds, "", {}};
  r.details = {{"threshold", mr.threshold}, {"events", mr.events}, {"events_kept", mr.events_kept},
               {"event_rank", mr.event_rank}, {"relative_standard_error", mr.relative_standard_error},
               {"budget_exhausted", mr.budget_exhausted}, {"shared_loop_seconds", mr.loop_seconds}};
  r.summary = format("margin > %.2f: %lld events (%lld kept), relative SE %.2e", mr.threshold, (long long)mr.events,
                     (long long)mr.events_kept, mr.relative_standard_error);
  if (mr.truth) {
    r.details["w_sum_rel_error"] = mr.truth->w_sum_rel_error;
    r.details["true_not_large_margin"] = mr.truth->true_not_large_margin;
    r.details["true_not_argmax"] = mr.truth->true_not_argmax;
    r.summary += format("; true error %.2e, not-large-margin %.1f%%", mr.truth->w_sum_rel_error,
                        100 * mr.truth->true_not_large_margin);
  }
  return r;
}

}  // namespace mha
