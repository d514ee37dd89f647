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
    if (mr.truth->premise_measured) {  // Lemma 3.3.1's premise per event (the fixed threshold's M)
      r.details["premise_margin"] = mr.truth->premise_margin;
      r.details["premise_fails"] = mr.truth->premise_fails;
      r.details["median_true_margin"] = mr.truth->median_true_margin;
      r.details["mean_event_bias_bound"] = mr.truth->mean_event_bias_bound;
    }
    if (mr.truth->lemma_rule_rows > 0) {
      r.details["lemma_rule_rows"] = mr.truth->lemma_rule_rows;
      r.details["lemma_rule_premise_fails"] = mr.truth->lemma_rule_premise_fails;
      r.details["lemma_rule_w_sum_rel_error"] = mr.truth->lemma_rule_w_sum_rel_error;
      r.summary += format("; premise fails on %.1f%% of the events (%.1f%% of the %lld rows above M)",
                          100 * mr.truth->premise_fails, 100 * mr.truth->lemma_rule_premise_fails,
                          (long long)mr.truth->lemma_rule_rows);
    }
    r.summary += format("; true error %.2e, not-large-margin %.1f%%", mr.truth->w_sum_rel_error,
                        100 * mr.truth->true_not_large_margin);
  }
  return r;
}

}  // namespace mha
