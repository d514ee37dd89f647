#include "commands/stage_lines.hpp"

#include "commands/status.hpp"

namespace mha::commands {

StageLines::StageLines(const Context& ctx, LearnVariant variant) : ctx_(ctx) { ctx_.print(format_table_head(variant)); }

void StageLines::update(const LearnReport& report) {
  std::string lines;
  for (; printed_ < report.stages.size(); ++printed_) lines += format_stage_line(report.stages[printed_]);
  if (!lines.empty()) ctx_.print(lines);
}

void StageLines::finish(const LearnReport& report, const std::string& table_end) {
  update(report);
  ctx_.print(format_table_tail(report) + table_end);
  for (const std::string& w : learner_warnings(report)) ctx_.warn(w);
  if (ctx_.verbose)
    for (const Diagnostic& d : report.diagnostics) ctx_.note(format_diagnostic(d));
}

void learner_verdict(const LearnReport& report, Result& r) {
  const std::vector<std::string> disagreements = report.disagreements();
  if (disagreements.empty()) return;
  r.failed(kExitDisagreement, "a fast path disagrees with its reference beyond the derived bound (after escalation), " +
                                  std::to_string(disagreements.size()) + " row(s); first: " + disagreements.front());
}

}  // namespace mha::commands
