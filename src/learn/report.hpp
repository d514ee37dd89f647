// The learner's report: a line per stage and round (stages/stage_record.hpp),
// the reference rows (each stage's fast path against its reference path on the
// run's own inputs: numeric/comparison.hpp), the diagnostics (statistical
// outcomes, never a disagreement), the errors against the truth when it is
// known, and how the run ended. Written as JSON by to_json (the CLI's --report,
// Python's learn) and as a table by format_table.
#pragma once

#include "learn/evaluate.hpp"
#include "learn/noise.hpp"
#include "learn/report_rows.hpp"
#include "numeric/comparison.hpp"
#include "stages/stage_record.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mha {

// Two named variants of the paper's stages (docs/variants.md, lists each
// choice with the measurement behind it):
//   paper     the stages as the paper writes them, with the parameters its lemmas give
//             where they are computable: certification of row 1 only; no v_min floor
//             beyond the lemma's v̂_j > δ; stage 4's τ from the lemma's W-error term
//             (twice the residual it leaves, at least paper_tau); stage 3 with the fixed margin of the
//             margin-stability lemma for the target paper_margin_target,
//             M = ln(2(k−1)/target); one pass 1 → 2 → 3 → 4 → 5 → 6 (the layer of the
//             stage-4 body is returned, no selection by validation); the exhaustive
//             net alone, at the resolution --net-tuples affords.
//   extended  the project's choices: every row certified; v_min = 0.05 per pair of
//             entries (pairwise rule); τ adaptive — the rows of smallest residual
//             over the whole budget, just enough for 8·d² distinct slabs (rounds ≥ 1);
//             identical slabs dropped; stage 3's adaptive margin; rounds of 3 ⇄ 4
//             while the estimates improve, the best by validation; a final stage-4
//             round with final_sculpt_samples; the net refined by pattern search.
enum class LearnVariant { paper, extended };
// Inline: the checkpoint reader, which the fuzz harnesses link without the learner, prints it too.
inline const char* to_string(LearnVariant variant) { return variant == LearnVariant::paper ? "paper" : "extended"; }
// The variant's choices as (name, value) lines for the report.
std::vector<std::pair<std::string, std::string>> variant_choices(LearnVariant variant);

// Each field is listed once more, in learn/report_fields.hpp, with its keys:
// the report's writer, a checkpoint's writer and its reader visit that list.
struct LearnReport {
  // Each stage's fast path against its reference path on the run's own inputs
  // (learn/reference_checks.hpp), and the run's statistical diagnostics.
  std::vector<ReferenceCheck> reference;
  std::vector<Diagnostic> diagnostics;
  LearnVariant variant = LearnVariant::extended;
  std::vector<StageRecord> stages;
  std::vector<double> round_validation_error;
  int best_round = -1;
  int64_t samples_paper = 0, samples_polish = 0, samples_total = 0, validation_samples = 0;
  // The samples drawn in the loops the processes share (LearnOptions::processes:
  // stages 1–4, after stage 3's and 4's pilots), by the process that drew them; every
  // process draws the other samples itself. A round that reads its samples again
  // (steps.cpp, run_sculpt) counts them twice here, once in samples_total.
  std::vector<int64_t> shared_samples_by_process;
  // What this process exchanged with the others (all-gathers, doubles sent and received).
  int64_t gathers = 0, gathered_doubles_sent = 0, gathered_doubles_received = 0;
  double seconds = 0;
  bool ok = false;
  std::string message;
  std::optional<LayerErrors> errors_coarse_net, errors_before_polish, errors;
  // Labels as users have them: the noise estimate and the final fit (learn/noise.hpp).
  std::optional<NoiseReport> noise;
  int64_t samples_final_fit = 0;
  std::optional<LayerErrors> errors_before_final_fit;  // when the final fit ran (truth only)
  // Stopped at a safe point by LearnOptions::at_safe_point (ok is then false):
  // `safe_point` names it (safe_point_name). Never part of a checkpoint.
  bool interrupted = false;
  std::string safe_point;
  // The safe points this run was resumed from, oldest first (empty: never interrupted).
  std::vector<std::string> resumed_at;

  // One line per reference row that disagrees (numeric/comparison.hpp, disagrees):
  // learn and demo then exit with kExitDisagreement after writing their files,
  // Python raises ReferenceDisagreement. Empty when every row agrees or compared nothing.
  std::vector<std::string> disagreements() const;
};


nlohmann::json to_json(const LearnReport& report);
std::string format_table(const LearnReport& report);
// The table in three parts, so that a stage's line can be printed when the
// stage ends: the head (the variant, the columns), a stage's line, and the rest
// (samples, errors, the reference rows, the diagnostics).
std::string format_table_head(LearnVariant variant);
std::string format_stage_line(const StageRecord& stage);
std::string format_table_tail(const LearnReport& report);
// "stage 5, round 2, past its threshold: body thin across the hull: ...": a diagnostic on one line.
std::string format_diagnostic(const Diagnostic& diagnostic);
// What a user should act on (the labels noisier than certification assumed:
// rerun with --assume-label-noise), one line each. The diagnostics, statistical
// outcomes of the budget, are the report's (and --verbose prints them), not warnings.
std::vector<std::string> learner_warnings(const LearnReport& report);

}  // namespace mha
