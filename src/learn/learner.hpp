// The end-to-end learner (MATH.md §3, §3.9): stage 1, then rounds of sculpting
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
#include "learn/report.hpp"
#include "stages/fast_paths.hpp"
#include "stages/polish/polish.hpp"
#include "stages/stage3/margin.hpp"
#include "stages/stage4/resculpt.hpp"
#include "stages/stage5/span.hpp"
#include "stages/stage6/net.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
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

struct LearnState;  // below: the driver's state at a safe point


// The automatic final rounds (LearnOptions::final_rounds = 0): a second final round,
// with twice the samples, when the first's layer validates worse than
// kAutoFinalRoundValidation above the labels' declared noise ν (ν² is the noise's
// share of the validation error V = Σ‖F − Y‖²/Σ‖Y‖²). The bar is a threshold measured
// on runs, not a bound. V against the parameter error e = max(Θ, W) relative error,
// over the 69 extended runs with independent heads of docs/diagnosis/ and
// docs/targets/: every run with V ≤ 0.36·10⁻⁶ had e ≤ 8.0·10⁻⁴ (the closest:
// V = 2.98·10⁻⁷, e = 8.0·10⁻⁴), every run with e > 10⁻³ had V ≥ 1.78·10⁻⁶. V/e²
// itself ranged over 0.10–2.0 where e < 0.1 (0.29 at the smallest where e ≤ 3·10⁻³),
// so V = 0.36·10⁻⁶ alone would allow e up to 1.9·10⁻³ at the smallest ratio seen.
// With nearly parallel heads V/e² fell to 0.007 (docs/results/runs/phase_*_coh0.99*):
// there validation cannot see e, and the rule promises nothing.
constexpr int kAutoFinalRoundsMax = 2;
constexpr double kAutoFinalRoundValidation = 0.36e-6;
// The bar a final round's validation error is held to: kAutoFinalRoundValidation + ν².
inline double automatic_final_round_bar(double label_noise) { return kAutoFinalRoundValidation + label_noise * label_noise; }
// Whether it asks for another final round (NaN, no layer to judge: no).
inline bool automatic_final_round_wanted(double validation_error, double label_noise) {
  return validation_error > automatic_final_round_bar(label_noise);
}

struct LearnOptions {
  int m = 0;                         // heads
  LearnVariant variant = LearnVariant::extended;
  int threads = 1;
  // The processes (MPI ranks, util/processes.hpp) that share the sample loops of
  // stages 1–4 (stage 3's after its pilot) and stage 6's tuple loops; every other
  // part runs on each. Any count gives the bytes of one process; each rank's sample
  // counts are in the report.
  Processes processes = {};
  double max_seconds = 0;            // overall time budget (0: none): no new round starts after it
  int64_t stage1_samples = 200000;
  int max_rounds = 5;                // sculpt/refine rounds (round 0 sculpts with the stage-1 Ŵ)
  ResculptOptions sculpt;            // per-round budget and target (sculpt.sculpt.max_samples, target_constraints, radius)
  double crude_sigma_min = 1e3;      // round 0: optimistic σ_min, see learner.cpp
  int64_t crude_sculpt_samples = 400000;  // round 0's sample budget: its body only has to yield a proxy for stage 3
  double w_error_factor = 3;         // rounds ≥ 1: assumed ‖W_Σ − Ŵ‖_op ≤ factor · stage 3's standard error
  // Stage 3 accepts the top 1e−3 of proxy margins (not stage 3's own default 1e−4):
  // measured at (16,2,2), scale 6, it reaches the same W_Σ accuracy after the first
  // round with a tenth of the samples (earlier runs kept in docs/bench/learner/, NOTES.md).
  MarginOptions margin = [] { MarginOptions m; m.accept_fraction = 1e-3; return m; }();
  NetOptions net;
  int64_t validation_samples = 1000; // one validation set shared by every round's selection
  bool polish = true;
  PolishOptions polish_options;
  // A polished fit its held-out samples contradict (under-determined by its training
  // samples) is polished again on 4× the samples, at most this many times (an oracle
  // only; 0: polish once).
  int polish_resamplings = 2;
  // Every stage's fast path checked against its reference path on the run's own
  // inputs (learn/reference_checks.hpp): rows in the report; a disagreement is
  // LearnReport::disagreements(), statistical shortfalls are its diagnostics.
  bool reference = true;
  int reference_max_unknowns = 400;  // stages 3 (the QP) and 5 (the MPFR SVD) only when d² ≤ this: both
                                     // grow as (d²)³ — at d = 32 (1024 unknowns) they run for many minutes
  int64_t test_samples = 20000;      // for the report's test error (truth only)
  uint64_t test_seed = 1;
  OracleStages oracle;               // stages replaced by the truth (needs it; learn_layer throws without)
  // extended: the final stage-4 round's budget; 0: 2.56·10⁸ for m = 3, 3.2·10⁷ otherwise
  // (the body's error falls ∝ 1/S at m = 2 and ∝ 1/√S at m = 3, so there 8× the
  // samples buy ~2.8×: docs/variants.md); negative: no final round.
  int64_t final_sculpt_samples = 0;
  // extended: how many final stage-4 rounds; 0: as many as the validation error asks
  // for, at most two (kAutoFinalRoundsMax, another_final_round in learner.cpp). Between
  // two, stage 3 refines W_Σ with the last final round's heads as proxies (its layer
  // fits), and each final round has twice the samples of the one before: at (16,2,3),
  // scale 6, the exact W_Σ with 2× the samples reached 7.8e−4 where 1× reached 1.1e−3
  // (docs/targets.md).
  int final_rounds = 0;
  // extended: stage 3's accept fraction when the net's heads are its proxies (rounds ≥ 1
  // with a fitting layer): a higher margin M, a smaller bias 2(k−1)e^{−M} (docs/variants.md).
  double heads_accept_fraction = 1e-4;
  int64_t extended_constraints_per_unknown = 8;  // extended: rounds ≥ 1 keep this many slabs per entry of Θ
  double paper_tau = 1e-3;           // paper: stage 4's τ, at least this (learner.cpp, paper_tau)
  double paper_margin_target = 1e-2; // paper: stage 3's margin M = ln(2(k−1)/target)
  MembershipSpanOptions membership;  // paper: stage 5 by membership queries (directions, oracle's cuts per query)
  // The fast paths the run uses and its reference step checks (stage 1's estimate,
  // stage 3's fits, stage 5's span are taken from here). Tests and the
  // fault-injection build of the CLI swap in a wrong copy to see the check reject it.
  FastPaths fast;
  // Labels as users have them (learn/noise.hpp). The declared relative label
  // noise widens certification's δ (CertifyOptions::label_noise); float32 labels
  // are detected from the validation set (every label a float32 value) and add
  // their rounding bound. After polishing, a noise floor starts the final fit.
  double label_noise = 0;            // declared relative Gaussian label noise (--assume-label-noise)
  bool float32_labels = false;       // set by learn_layer from the validation labels
  int64_t final_fit_samples = 131072;  // the final fit's budget on an oracle (a dataset: all remaining samples); 0: none
  double final_fit_max_bytes = 4e9;  // the final fit's memory cap (final_fit_bytes_per_sample)
  // Called at every safe point (after stage 1, after each step of a round, before
  // the reference paths, before polishing, before the final evaluation) with the
  // state a run can be resumed from
  // (learn/checkpoint.hpp writes it); returning false stops the run there: the
  // result's report then says "interrupted" (LearnReport::interrupted). Unset: no stops.
  std::function<bool(const LearnState&)> at_safe_point;
};

struct LearnResult {
  Layer layer;        // polished when options.polish, else the paper's stages' layer
  Layer paper_layer;  // the stage-6 layer of the best round
  LearnReport report;
};

// One round's products, as the driver keeps them: the sculpted body and its
// centre (absent under the hull oracle), the hull stage 6 searched, the net's
// layers and the round's validation error. The stage reports live in the
// report's records.
struct LearnRound {
  std::optional<SculptResult> sculpt;
  SpanResult span;
  NetResult net;
  double validation_error = INFINITY;
};

// What the driver runs next. A safe point lies between two steps.
enum class LearnStep { stage1, sculpt, span, net, margin, reference, polish, finish, done };

// The driver's state at a safe point: everything the rest of the run depends
// on besides (source, options), so that continuing from it gives the bytes an
// uninterrupted run gives. learn/checkpoint.hpp writes and reads it exactly and
// names its safe points (safe_point_name).
struct LearnState {
  int d = 0, k = 0, m = 0;
  LearnStep next = LearnStep::stage1;
  int round = 0;                       // the round of `next` (sculpt, span, net, margin)
  uint64_t offset = 0;                 // next unused sample of the stream
  uint64_t validation_digest = 0;      // CRC-64 of the validation set (checks a resumed run's samples)
  double seconds = 0;                  // wall-clock time of the run so far, every part of it
  MatD w_sum;                          // the current W_Σ (stage 1's, then stage 3's)
  double w_error_assumed = 0;          // assumed ‖W_Σ − Ŵ‖_op for the next sculpt
  bool last_w_improved = true;         // the last stage-3 standard error fell by a third or more
  double last_w_standard_error = INFINITY;
  // The extended variant's final round: whether the current round is it, and the
  // stage-3 W_Σ of smallest relative standard error it sculpts with.
  bool final_round = false;
  MatD final_w_sum;
  double final_w_error = 0;
  double final_w_standard_error = INFINITY;
  int final_rounds_done = 0;           // final rounds whose stage 6 has run
  std::optional<LearnRound> best;      // the round selected so far (report.best_round)
  std::optional<LearnRound> current;   // the round in progress (next: span, net or margin)
  Layer layer;                         // the result so far (next: polish, finish)
  LearnReport report;                  // the report so far
};

// "" when a run on (d, k, m) with `options` can continue from `state`, else one
// line saying what differs (learn_layer throws std::invalid_argument with it).
std::string check_resume(const LearnState& state, int d, int k, int m, const LearnOptions& options);

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
// With `resume`, continues from that safe point (a state given to at_safe_point
// by a run on the same source and options, or read from a checkpoint): throws
// std::invalid_argument when check_resume refuses it or the source's validation
// set differs from the one the state was made with.
LearnResult learn_layer(const SampleSource& source, const LearnOptions& options, const Instance* truth = nullptr,
                        const LearnState* resume = nullptr);

}  // namespace mha
