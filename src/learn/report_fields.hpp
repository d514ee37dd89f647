// Every field of the learner's report (learn/report.hpp), listed once: its key
// in the report (--report, Python's dict), its key in a checkpoint
// (learn/checkpoint.cpp), and when the report shows it. The report's writer
// (to_json), the checkpoint's writer and the checkpoint's reader all visit this
// list, so a field added here reaches the three of them, and a resumed run's
// report is the report of the run that was checkpointed
// (property_tests/report_round_trip.cpp checks it on generated reports).
// Header-only: the checkpoint reader, which the fuzz harnesses link without
// the learner, visits it too.
#pragma once

#include "learn/report.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace mha {

// When the report writes a field: always, or only when it is set (non-empty,
// non-zero, present, true), so that a run without it keeps the keys it always had.
enum class Shown { always, when_set };

struct ReportField {
  const char* report;      // the key in the report
  const char* checkpoint;  // the key in a checkpoint's report; nullptr: never checkpointed
  Shown shown = Shown::always;
  bool optional_in_checkpoint = false;  // absent from checkpoints written before it was kept there: read as unset
};

// A list of rows (reference checks, diagnostics) as JSON, each by its own to_json: the
// report and the checkpoint write them alike.
template <class Row>
nlohmann::json rows_to_json(const std::vector<Row>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const Row& r : rows) out.push_back(to_json(r));
  return out;
}

// The processes that shared the run (MPI ranks): the report shows them as one
// record, and only for a run shared by more than one.
template <class Count, class Counts>
struct ProcessFields {
  Counts& shared_samples_by_process;
  Count& gathers;
  Count& gathered_doubles_sent;
  Count& gathered_doubles_received;
};

// Calls visit(field, member) for every field of `r` (a LearnReport, const or not).
template <class Report, class Visitor>
void visit_report_fields(Report& r, Visitor&& visit) {
  using Count = std::conditional_t<std::is_const_v<Report>, const int64_t, int64_t>;
  using Counts = std::conditional_t<std::is_const_v<Report>, const std::vector<int64_t>, std::vector<int64_t>>;
  visit(ReportField{"variant", "variant"}, r.variant);
  visit(ReportField{"stages", "stages"}, r.stages);
  visit(ReportField{"round_validation_error", "round_validation_error"}, r.round_validation_error);
  visit(ReportField{"best_round", "best_round"}, r.best_round);
  visit(ReportField{"samples_paper_stages", "samples_paper"}, r.samples_paper);
  visit(ReportField{"samples_polish", "samples_polish"}, r.samples_polish);
  visit(ReportField{"samples_total", "samples_total"}, r.samples_total);
  visit(ReportField{"validation_samples", "validation_samples"}, r.validation_samples);
  visit(ReportField{"seconds", "seconds"}, r.seconds);
  visit(ReportField{"ok", "ok"}, r.ok);
  visit(ReportField{"message", "message"}, r.message);
  visit(ReportField{"noise", "noise", Shown::when_set}, r.noise);
  visit(ReportField{"samples_final_fit", "samples_final_fit", Shown::when_set}, r.samples_final_fit);
  visit(ReportField{"errors_before_final_fit", "errors_before_final_fit", Shown::when_set}, r.errors_before_final_fit);
  visit(ReportField{"errors_coarse_net", "errors_coarse_net", Shown::when_set}, r.errors_coarse_net);
  visit(ReportField{"errors_before_polish", "errors_before_polish", Shown::when_set}, r.errors_before_polish);
  visit(ReportField{"errors", "errors", Shown::when_set}, r.errors);
  // Only an interrupted run's report says so; a checkpoint is a state, never interrupted.
  visit(ReportField{"interrupted", nullptr, Shown::when_set}, r.interrupted);
  visit(ReportField{"safe_point", nullptr, Shown::when_set}, r.safe_point);
  visit(ReportField{"resumed_at", "resumed_at", Shown::when_set}, r.resumed_at);
  visit(ReportField{"processes", "processes", Shown::when_set, true},
        ProcessFields<Count, Counts>{r.shared_samples_by_process, r.gathers, r.gathered_doubles_sent,
                                     r.gathered_doubles_received});
  visit(ReportField{"reference", "reference", Shown::when_set, true}, r.reference);
  visit(ReportField{"diagnostics", "diagnostics", Shown::when_set, true}, r.diagnostics);
}

}  // namespace mha
