// Stage 6 (MATH.md §3): ε-net over the affine hull H of the Θ_i, least squares
// for the W_i, selection by validation error.
//
// H is parametrised as Θ(t) = x0 + Σ_j t_j u_j, t ∈ R^{m−1} (x0 and the u_j from
// stage 5), inside the ball: |t_j| ≤ T = √(R² − ‖x0‖²). For a candidate m-tuple
// of net points the W_i are the least-squares solution of one shared design
// (stages/w_least_squares.hpp); the tuple with the smallest relative validation
// error Σ‖F̂ − Y‖² / Σ‖Y‖² wins. Heads are interchangeable, so unordered tuples
// of distinct points suffice.
//
// Two levels, reported separately:
//  1. the paper's net, exhaustive: a grid of G points per axis with G as large as
//     keeps C(G^{m−1}, m) ≤ max_tuples — the (R/ε)^{m(m−1)} cost made explicit;
//  2. refinement to a fine resolution ε without enumerating the fine net: a
//     pattern search from the exhaustive winner that tries every tuple whose
//     coordinates move by −h, 0 or +h, moves to the best, and halves h when none
//     improves. It assumes the validation error is unimodal near the winner; the
//     exhaustive level is what rules out a wrong basin.
#pragma once

#include "data/oracle.hpp"

#include <cstdint>
#include <vector>

namespace mha {

struct NetOptions {
  int64_t train_samples = 0;       // 0: max(64, 8·m·d/k), so N·k ≥ 8·md (md unknowns per output column)
  int64_t validation_samples = 0;  // 0: as many as train_samples
  int64_t max_tuples = 20000;      // exhaustive level budget
  double final_step = 1e-7;        // refinement stops when h < final_step · T
  int64_t max_refine_iterations = 1000;  // safety cap; typical runs take 30–100 (a flat valley can take forever)
  double radius = 20;              // R, as in stage 2
  int threads = 1;
  uint64_t first_sample = 0;
};

struct NetReport {
  int grid_per_axis = 0;
  int64_t grid_points = 0;
  double coarse_resolution = 0;        // grid spacing of the exhaustive level
  int64_t tuples_exhaustive = 0;
  double coarse_validation_error = 0;  // of the exhaustive winner
  int64_t refine_iterations = 0;
  int64_t tuples_refine = 0;
  bool refine_capped = false;          // stopped at max_refine_iterations
  double final_resolution = 0;         // last h of the refinement
  double validation_error = 0;         // of the returned layer
  int64_t samples = 0;                 // train + validation
  double seconds = 0;
};

struct NetResult {
  Layer layer;         // refined winner
  Layer coarse_layer;  // winner of the exhaustive level
  NetReport report;
};

// hull_directions: (m−1) × d² orthonormal rows (empty for m = 1).
// Throws std::runtime_error when the design is rank-deficient for every tuple
// or the source has too few samples.
NetResult search_net(const SampleSource& source, const Eigen::VectorXd& hull_point,
                     const Eigen::MatrixXd& hull_directions, int m, const NetOptions& options);

// The exhaustive level's candidates as search_net forms and ranks them (the same
// batches, grid and tuple_error), for the reference path (verify/verify.hpp, row 6).
struct NetCandidates {
  std::vector<MatD> thetas;                  // the net's points Θ(t) = x0 + Σ t_j u_j, formed in double
  std::vector<std::vector<int64_t>> tuples;  // unordered tuples of distinct points (indices into thetas)
  std::vector<double> errors;                // each tuple's relative validation error, fast path
  size_t winner = 0;                         // argmin of errors (the lowest index among equals)
  int64_t train_samples = 0, validation_samples = 0;
  uint64_t first_sample = 0;                 // training samples from here, validation right after
};
NetCandidates net_candidates(const SampleSource& source, const Eigen::VectorXd& hull_point,
                             const Eigen::MatrixXd& hull_directions, int m, const NetOptions& options);

// Σ‖F(X) − Y‖² / Σ‖Y‖² of `layer` on the labelled batch (fast path, double);
// NaN when the fast path cannot answer a sample (FastForwardStatus).
double relative_error(const Layer& layer, const LabelledBatch& batch, int threads);

}  // namespace mha
