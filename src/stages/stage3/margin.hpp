// Stage 3 (MATH.md §3.3): refine W_Σ with large-margin events of a proxy.
//
// For a proxy P (the minimum-norm point of K) and a row a, ℓ = x_a P Xᵀ and the
// margin μ = ℓ_(1) − ℓ_(2). When μ is large, every true head is (with high
// probability) nearly one-hot on j* = argmax ℓ as well, so y_a ≈ x_{j*} W_Σ
// (margin stability, proofs/margin_stability.md). Many such pairs (x_{j*}, y_a)
// give W_Σ by least squares. The threshold is adaptive — the top
// `accept_fraction` of margins in a pilot sample — because a fixed absolute
// threshold often accepts nothing. The fit is robust: events whose residual
// exceeds `trim` times the median are dropped and the fit repeated.
#pragma once

#include "util/processes.hpp"
#include "data/oracle.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace mha {

struct MarginOptions {
  double accept_fraction = 1e-4;  // adaptive threshold: this top fraction of pilot margins
  double fixed_threshold = 0;     // > 0: this margin threshold instead, no pilot (the paper's fixed M)
  int64_t pilot_samples = 100000;
  int64_t target_events = 0;      // 0: 16·d
  int64_t max_samples = 20000000;
  double max_seconds = 0;
  double trim = 5.0;              // drop events with residual > trim · median, then refit
  int threads = 1;
  uint64_t first_sample = 0;
  // Processes sharing the loop after the pilot (util/processes.hpp): each draws its
  // block of every batch and finds its events, merged in sample order, so the
  // events are the same for any count.
  Processes processes = {};
};

struct MarginTruth {
  double w_sum_rel_error = 0;            // ‖Ŵ − W_Σ‖_F / ‖W_Σ‖_F
  double true_not_large_margin = 0;      // fraction of accepted events where some true head has argmax ≠ j* or margin < threshold
  double true_not_argmax = 0;            // fraction where some true head's argmax ≠ j*
};

struct MarginReport {
  double threshold = 0;      // the margin threshold used
  int64_t pilot_samples = 0;
  int64_t samples = 0;       // after the pilot
  std::vector<int64_t> samples_by_process;  // of `samples`, what each process drew
  double loop_seconds = 0;   // of `seconds`, the loop the processes share (after the pilot, before the fit)
  int64_t events = 0, events_kept = 0;
  int event_rank = 0;        // rank of the matrix of accepted tokens x_{j*} (d needed)
  // The fit's own error estimate, ‖Ŵ − W_Σ‖_F ≈ √(tr((TᵀT)⁻¹) · ‖residual‖_F² / (n − d))
  // over the kept events (tokens T): the least-squares standard error, blind to the
  // bias of events where a true head was not large-margin.
  double standard_error = 0;
  double relative_standard_error = 0;  // standard_error / ‖Ŵ‖_F
  double seconds = 0;
  bool budget_exhausted = false;
  std::optional<MarginTruth> truth;
};

// One accepted large-margin event: row `row` of sample `sample` (the index in the
// source's stream), its argmax j* and its margin as the fast path computed them.
struct SelectedEvent {
  int64_t sample = 0;
  int row = 0;
  int argmax = 0;
  double margin = 0;
};

struct MarginResult {
  MatD w_sum;
  // Every accepted event, in sample order; the events examined after the pilot are
  // the rows of samples [first_sample + pilot_samples, … + samples) (verify/verify.hpp
  // stage 3 re-decides them on the reference path).
  std::vector<SelectedEvent> selected;
  // The final fit's events, one per row: w_sum solves min ‖fit_tokens·W − fit_labels‖_F
  // (kept for the reference path: verify/verify.hpp stage 3).
  MatD fit_tokens, fit_labels;
  MarginReport report;
};

// Margin of one logit row and its argmax.
double logit_margin(const RowVec<double>& logits, int& argmax);

MarginResult refine_wsum(const SampleSource& source, const MatD& proxy, const MarginOptions& options,
                         const Layer* truth = nullptr);

// Several proxies (the extended variant: the net's heads Θ̂_i): a row is an event
// when every proxy's argmax is the same token j*, and its margin is the smallest
// of theirs — every estimated head large-margin on j*, not just one point of the hull.
MarginResult refine_wsum(const SampleSource& source, const std::vector<MatD>& proxies, const MarginOptions& options,
                         const Layer* truth = nullptr);

// Each proxy's logits X P Xᵀ, and the joint margin of `row` over them (−∞ when
// their argmaxes differ) with the common argmax.
std::vector<MatD> proxy_logits(const MatD& x, const std::vector<MatD>& proxies);
double joint_margin(const std::vector<MatD>& logits, int row, int& argmax);

}  // namespace mha
