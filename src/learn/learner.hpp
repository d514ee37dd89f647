// The end-to-end learner (MATH.md §3): stage 1, then rounds of sculpting
// (stage 2 in round 0, stage 4 after) and margin refinement (stage 3), each
// round's hull read off by stage 5 and turned into a layer by stage 6; the
// round with the smallest validation error is kept (rounds need not improve
// monotonically); then the optional polishing, reported separately.
//
// The stages are typed steps of a pipeline (learner.cpp): each takes the
// previous stage's product (Ŵ, the body, the hull, the layer) and returns its
// own with its report record, so any of them can be replaced by an *oracle*
// that supplies the product from the truth (OracleStages, `learn --oracle`):
// the stages left running then report their own error, not the error they
// inherit.
//
// Every sample a stage uses comes from one stream, in disjoint consecutive
// ranges, so the whole run is a function of (source, options): same seed ⇒ same
// bytes, whatever the thread count. The truth, when given, is used only for the
// report.
#pragma once

#include "data/oracle.hpp"
#include "learn/evaluate.hpp"
#include "learn/noise.hpp"
#include "stages/polish.hpp"
#include "stages/stage3_margin.hpp"
#include "stages/stage4_resculpt.hpp"
#include "stages/stage5_span.hpp"
#include "stages/stage6_net.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mha {

// Stages replaced by products taken from the truth (stage isolation). Each
// needs the true instance.
struct OracleStages {
  bool stage1 = false;  // W_Σ = Σ W_i exactly instead of stage 1's estimate; round 0 then sculpts with the
                        // lemma's widths (‖W_Σ − Ŵ‖ = 0, σ_min(C) ≥ default_sigma_min), not the heuristic ones
  bool hull = false;    // stages 2, 4 and 5: the true affine hull aff{Θ_i} (its minimum-norm point and
                        // orthonormal directions) instead of the sculpted body's; one round (stage 3 only
                        // feeds stage 4's body, which the oracle replaces)
  bool stage3 = false;  // W_Σ exactly instead of stage 3's refinement (stage 4 sculpts with ‖W_Σ − Ŵ‖ = 0)
  bool stage6 = false;  // the true layer instead of the net's winner (isolates polishing); one round
  bool any() const { return stage1 || hull || stage3 || stage6; }
};

// "stage1,hull,stage3,stage6" (any subset, comma-separated; "stage2", "stage4"
// and "stage5" name the hull oracle). Returns "" or one line naming the
// unknown stage.
std::string parse_oracle_stages(const std::string& list, OracleStages& out);
std::vector<std::string> oracle_stage_names(const OracleStages& oracle);

struct LearnOptions {
  int m = 0;                         // heads
  int threads = 1;
  double max_seconds = 0;            // overall time budget (0: none): no new round starts after it
  int64_t stage1_samples = 200000;
  int max_rounds = 5;                // sculpt/refine rounds (round 0 sculpts with the stage-1 Ŵ)
  ResculptOptions sculpt;            // per-round budget and target (sculpt.sculpt.max_samples, target_constraints, radius)
  double crude_sigma_min = 1e3;      // round 0: optimistic σ_min, see learner.cpp
  int64_t crude_sculpt_samples = 400000;  // round 0's sample budget: its body only has to yield a proxy for stage 3
  double w_error_factor = 3;         // rounds ≥ 1: assumed ‖W_Σ − Ŵ‖_op ≤ factor · stage 3's standard error
  // Stage 3 accepts the top 1e−3 of proxy margins (not stage 3's own default 1e−4):
  // measured at (16,2,2), scale 6, it reaches the same W_Σ accuracy after the first
  // round with a tenth of the samples (docs/learner.md).
  MarginOptions margin = [] { MarginOptions m; m.accept_fraction = 1e-3; return m; }();
  NetOptions net;
  int64_t validation_samples = 1000; // one validation set shared by every round's selection
  bool polish = true;
  PolishOptions polish_options;
  bool reference = true;             // reference paths on the selected round: min-norm QP proxy, LP widths
  int reference_max_unknowns = 400;  // ... only when d² ≤ this: CLP's QP at d = 32 (1024 unknowns) runs for minutes
  int64_t test_samples = 20000;      // for the report's test error (truth only)
  uint64_t test_seed = 1;
  OracleStages oracle;               // stages replaced by the truth (needs it; learn_layer throws without)
  // Stage 5, fast path and (on the selected round) its LP-width reference. Tests
  // and the fault-injection build of the CLI swap in a wrong copy to see the
  // reference check reject it (reference_disagreement).
  std::function<SpanResult(const ConvexBody&, const ConvexBody::Centre&, int, const SpanOptions&)> span = find_span;
  // Labels as users have them (learn/noise.hpp). The declared relative label
  // noise widens certification's δ (CertifyOptions::label_noise); float32 labels
  // are detected from the validation set (every label a float32 value) and add
  // their rounding bound. After polishing, a noise floor starts the final fit.
  double label_noise = 0;            // declared relative Gaussian label noise (--assume-label-noise)
  bool float32_labels = false;       // set by learn_layer from the validation labels
  int64_t final_fit_samples = 131072;  // the final fit's budget on an oracle (a dataset: all remaining samples); 0: none
  double final_fit_max_bytes = 4e9;  // the final fit's memory cap (final_fit_bytes_per_sample)
};

struct StageRecord {
  std::string stage;   // "1", "2", "3", "4", "5", "6", "polish"
  int round = -1;      // -1: not part of a round
  int64_t samples = 0;
  double seconds = 0;
  std::string summary; // one line for the table
  nlohmann::json details;
};

struct LearnReport {
  std::vector<StageRecord> stages;
  std::vector<double> round_validation_error;
  int best_round = -1;
  int64_t samples_paper = 0, samples_polish = 0, samples_total = 0, validation_samples = 0;
  double seconds = 0;
  bool ok = false;
  std::string message;
  std::optional<LayerErrors> errors_coarse_net, errors_before_polish, errors;
  // Labels as users have them: the noise estimate and the final fit (learn/noise.hpp).
  std::optional<NoiseReport> noise;
  int64_t samples_final_fit = 0;
  std::optional<LayerErrors> errors_before_final_fit;  // when the final fit ran (truth only)
};

struct LearnResult {
  Layer layer;        // polished when options.polish, else the paper's stages' layer
  Layer paper_layer;  // the stage-6 layer of the best round
  LearnReport report;
};

// The sculpt options of round `round` as the learner runs it (stage 2 in round
// 0, stage 4 after; the adaptive τ is resculpt's): round 0 starts from the crude
// stage-1 Ŵ, so its widths are heuristic (optimistic σ_min = crude_sigma_min, no
// W error) and its budget is crude_sculpt_samples; later rounds assume
// σ_min(C) ≥ default_sigma_min and ‖W_Σ − Ŵ‖_op ≤ w_error. The caller sets
// sculpt.first_sample. `mhalearn sculpt` takes its defaults from here.
ResculptOptions sculpt_round_options(const LearnOptions& options, int round, int d, int k, double w_error);

// What the learner cannot run on, as one line ("" when k and m are fine).
std::string check_learn_input(int k, int d, int m);

// Throws std::invalid_argument when options.oracle names a stage and truth is null.
LearnResult learn_layer(const SampleSource& source, const LearnOptions& options, const Instance* truth = nullptr);

nlohmann::json to_json(const LearnReport& report);
std::string format_table(const LearnReport& report);

// "" when every reference path the learner ran agreed with its fast path, else
// one line naming the stage that disagreed (learn and demo then exit with
// kExitDisagreement, after writing the report and the learned layer).
std::string reference_disagreement(const LearnReport& report);

}  // namespace mha
