// `mhalearn verify`: each stage's fast path against its reference path on the
// same inputs, with the stage's own check function (stages/*/check.hpp,
// model/forward_check.hpp; verdicts as numeric/comparison.hpp defines them).
//
// What lives here is only the choice of inputs: every stage runs in isolation on
// an instance, with the inputs the earlier stages would supply taken from the
// truth (oracle inputs), so a disagreement points at one stage:
//
//   forward  the oracle's first samples (check_forward)
//   1        the oracle's first samples with their labels (check_stage1)
//   2        every row of the first samples, certified with Ŵ = W_Σ (the truth), τ the
//            median relative residual of the rows that pass the other tests, so that
//            both sides of the residual threshold occur (check_certification)
//   3        stage 3 run with the mean of the true Θ_i as its proxy (a point of the true
//            hull): its fit and selection (check_margin); part "proxy": the minimum-norm
//            point of the body sculpted with Ŵ = W_Σ (check_min_norm_point)
//   4        as 2, with stage 3's Ŵ and its error estimate
//   5        the span of the body sculpted with Ŵ = W_Σ (check_span); whether that body
//            is thin across the hull (LP widths) is a diagnostic in the row's detail
//   6        least squares for W at the true Θ, and the net's exhaustive level on the true
//            hull (point: mean of the Θ_i; directions: the Θ_i − Θ_1, orthonormalised),
//            coarse and on few samples (check_stage6)
//   polish   one iteration of polishing (polish_iteration: its objective, gradient and
//            accepted step) from the truth moved by `polish_perturbation`, or from a
//            given layer (check_polish)
#pragma once

#include "data/oracle.hpp"
#include "learn/reference_samples.hpp"
#include "numeric/comparison.hpp"
#include "stages/fast_paths.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mha {

// The sample sizes default to the learner's reference step's (learn/reference_samples.hpp).
struct VerifyOptions {
  uint64_t seed = 1;                   // sample stream
  int64_t forward_samples = kReferenceSamples.forward;
  int64_t stage1_samples = kReferenceSamples.stage1;
  int64_t certify_samples = kReferenceSamples.certification;  // rows certified: samples × k (stages 2 and 4)
  int64_t w_samples = kReferenceSamples.least_squares;        // design rows: samples × k (stage 6)
  int64_t selection_samples = kReferenceSamples.selection;    // stage 3: every row of these samples re-decided
  int64_t net_samples = kReferenceSamples.net;                // stage 6's net: training (and validation) samples
  int64_t net_max_tuples = kReferenceSamples.net_tuples;      // stage 6's net: the coarse exhaustive level
  int64_t polish_samples = kReferenceSamples.polish;          // 0: polish_check_samples
  double polish_perturbation = 1e-6;   // relative move of every parameter from the truth
  const Layer* polish_layer = nullptr; // start polishing's iteration here instead
  int threads = 1;
};

// "forward", "1", …, "6", "polish", in the order `all` runs them.
const std::vector<std::string>& verify_stage_names();

// One Comparison per requested stage, in verify_stage_names() order. Throws
// std::invalid_argument for an unknown stage name.
std::vector<Comparison> verify_instance(const Instance& instance, const std::vector<std::string>& stages,
                                        const VerifyOptions& options, const FastPaths& fast = {});

// The run's outcome, which `mhalearn verify` turns into its exit status:
// disagree (4) when any row disagrees after escalation (numeric/comparison.hpp
// disagrees), else incomplete (1) when a row could not be compared or decided nothing
// (every item undecided), else agree (0).
enum class VerifyOutcome { agree, incomplete, disagree };
VerifyOutcome verify_outcome(const std::vector<Comparison>& rows);

}  // namespace mha
