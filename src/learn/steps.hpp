// The learner's steps (internal to src/learn/): each stage run on the pipeline's
// stream — or replaced by the truth under an oracle — with its report record and,
// when the options ask for them, its reference check (learn/reference_checks.hpp).
// learner.cpp's driver calls them between safe points.
#pragma once

#include "learn/pipeline.hpp"

#include <vector>

namespace mha {

// Stage 1: Ŵ (the crude W_Σ), or the exact W_Σ under the stage-1 oracle.
MatD run_stage1(Pipeline& p);

// Stage 2 (round 0) or 4: sculpt with the current W_Σ and an adaptive τ; the body is
// empty when no row was certified (the report's message says why). `final_index`:
// which final round this is (0, 1, …; −1: not a final round); the j-th has 2^j times
// the budget.
SculptResult run_sculpt(Pipeline& p, int round, const MatD& w_sum, double w_error, int final_index);

// Stage 5 on a sculpted body, or the true affine hull (hull oracle).
SpanResult run_span(Pipeline& p, int round, const SculptResult& sculpt);
SpanResult true_hull(const Pipeline& p);

// The radius of the ball stage 6 searches in round `round` with the hull point x0:
// R, or for the extended variant from round 1 on max(R, 2‖x0‖) (steps.cpp says why).
double net_radius(const LearnOptions& o, int round, const Eigen::VectorXd& hull_point);

// What stage 6 nets: the hull (x0 and its m − 1 directions), or — the paper variant,
// as its sources write it — the span of the Θ_i (0 and an orthonormal basis of
// span{x0, hull directions}: m directions, m − 1 when x0 = 0).
struct NetDomain {
  Eigen::VectorXd point;
  Eigen::MatrixXd directions;
};
NetDomain net_domain(const LearnOptions& o, const SpanResult& span);

// Stage 6 over `cur.span`'s hull (or span), or the true layer (stage-6 oracle); false (with the
// report's message set) when the net cannot run.
bool run_net(Pipeline& p, int round, LearnRound& cur, const LabelledBatch& validation);

// Stage 3's proxies and the stage itself (or the exact W_Σ under the stage-3 oracle).
struct MarginProxies {
  std::vector<MatD> thetas;
  bool heads = false;  // the net's heads (else a point of the body)
  // The paper variant: the minimum-norm point of K by the fast path (p.o.fast.min_norm);
  // `what` names the proxy for the report, `fallback` says why it is not that point
  // ("" when it is).
  std::string what;
  std::string fallback;
  double centre_distance = NAN;  // ‖P − x0‖/‖P‖, x0 the body's least-squares centre
  const ConvexBody* body = nullptr;  // the body whose minimum-norm point the proxy is (the reference row checks it)
  double least_widening = NAN;       // K empty: the least common factor of its widths that makes its slabs meet
};
MarginProxies margin_proxies(const Pipeline& p, const LearnRound& round);
MarginResult run_margin(Pipeline& p, int round, const MarginProxies& proxies);

// Polishing from `start` on the samples from `first_sample`; the result replaces the
// layer only when validation agrees. Then the final fit when polishing reached a
// noise floor, and the noise report from the last fit (learn/noise.hpp).
// A fit its held-out samples contradict (under-determined by its training samples) is
// polished again from `start` on 4× the samples, at most twice, on an oracle.
PolishReport run_polish(Pipeline& p, const SampleSource& full_source, uint64_t first_sample, const Layer& start,
                        LearnResult& result, bool finite);
void run_final_fit(Pipeline& p, const SampleSource& full_source, bool finite, uint64_t first, const PolishReport& polish,
                   LearnResult& result);

// The extended variant's final stage-4 round budget (0 in the options: by m).
int64_t final_sculpt_budget(const LearnOptions& o);

}  // namespace mha
