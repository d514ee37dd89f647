#include "stages/polish/record.hpp"

#include "util/format.hpp"

namespace mha {

StageRecord polish_record(const PolishReport& report, bool matrix_free, bool kept) {
  StageRecord r{"polish", -1, report.samples, report.seconds, "", {}};
  r.details = {{"iterations", report.iterations}, {"train_error", report.train_error},
               {"validation_error_before", report.validation_error_before},
               {"validation_error_after", report.validation_error_after}, {"stop_reason", report.stop_reason}};
  if (!report.linear_solver.empty() && matrix_free) {
    r.details["linear_solver"] = report.linear_solver;
    r.details["linear_solver_reason"] = report.linear_solver_reason;
    r.details["cg_iterations"] = report.cg_iterations;
  }
  r.summary = format("Levenberg–Marquardt (variable projection): %d iterations, validation error %.2e -> %.2e (%s)",
                     report.iterations, report.validation_error_before, report.validation_error_after,
                     report.stop_reason.c_str());
  if (!kept) {
    r.details["kept"] = false;
    r.summary += "; not kept: validation error rose";
  }
  return r;
}

StageRecord final_fit_record(const PolishReport& report, int64_t train_samples, const std::string& reason, bool kept) {
  StageRecord r{"fit", -1, report.samples, report.seconds, "", {}};
  r.details = {{"train_samples", train_samples}, {"iterations", report.iterations},
               {"train_error", report.train_error}, {"validation_error_before", report.validation_error_before},
               {"validation_error_after", report.validation_error_after}, {"stop_reason", report.stop_reason},
               {"cg_iterations", report.cg_iterations}, {"why_this_many", reason}};
  r.summary = format("final fit on %lld samples (%s): %d iterations, validation error %.2e -> %.2e (%s)",
                     (long long)train_samples, reason.c_str(), report.iterations, report.validation_error_before,
                     report.validation_error_after, report.stop_reason.c_str());
  if (!kept) {
    r.details["kept"] = false;
    r.summary += "; not kept: validation error rose";
  }
  return r;
}

}  // namespace mha
