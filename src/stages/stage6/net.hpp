// Stage 6 (MATH.md §3.6): ε-net over the affine hull H of the Θ_i, least squares
// for the W_i, selection by validation error.
//
// H is parametrised as Θ(t) = x0 + Σ_j t_j u_j, t ∈ R^{m−1} (x0 and the u_j from
// stage 5), inside the ball: |t_j| ≤ T = √(R² − ‖x0‖²). For a candidate m-tuple
// of net points the W_i are the least-squares solution of one shared design
// (stages/stage6/w_least_squares.hpp); the tuple with the smallest relative validation
// error Σ‖F̂ − Y‖² / Σ‖Y‖² wins. Heads are interchangeable, so unordered tuples
// of distinct points suffice.
//
// Two levels, reported separately:
//  1. the paper's net, exhaustive: a grid of G points per axis with G as large as
//     keeps C(G^{m−1}, m) ≤ max_tuples — the (R/ε)^{m(m−1)} cost made explicit;
//  2. refinement to a fine resolution ε without enumerating the fine net: a
//     pattern search from the exhaustive winner with steps −h, 0, +h per
//     coordinate, halving h when no move improves (coarse to fine). While the
//     joint pattern — every head moving at once, (3^{m−1})^m tuples — has at most
//     max_joint_moves tuples (m ≤ 2 by default) it is tried whole; beyond, one
//     head moves at a time (3^{m−1} − 1 tuples per head, m heads per sweep, the
//     best move of each head taken before the next head's are tried; after a
//     sweep that moved, its displacement is tried again, doubled while the
//     error falls — Hooke and Jeeves' pattern move). It assumes
//     the validation error is unimodal near the winner; the exhaustive level is
//     what rules out a wrong basin.
//
// For m ≥ 3 (two or more hull axes) the exhaustive level's grid is the centres of
// the G^{m−1} cells of [−T, T]^{m−1} whose cell meets the ball ‖t‖ ≤ T: still an
// ε-net of H ∩ ball(R) with ε = half the cell's diagonal (proofs/net_pruning.md),
// with fewer points, so the same tuple budget buys a finer G. m = 2 keeps the
// grid of the interval's vertices its committed runs were made with.
//
// Every loop over tuples can be shared by processes (util/processes.hpp: the CLI's
// MPI ranks): each evaluates a contiguous block, the blocks are gathered in rank
// order, and the argmin takes the lowest index among equals, so the result is the
// same bytes for every process and thread count.
#pragma once

#include "data/oracle.hpp"
#include "util/processes.hpp"

#include <cstdint>
#include <functional>
#include <string>
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
  int64_t max_joint_moves = 9;     // refinement: the joint pattern while (3^{m−1})^m ≤ this, else head by head
  Processes processes = {};        // who shares the tuple loops (default: this process alone)
};

struct NetReport {
  int grid_per_axis = 0;
  int64_t grid_points = 0;
  int64_t grid_cells = 0;              // G^{m−1}: the grid before pruning to the ball
  bool grid_centred = false;           // cell centres meeting the ball (m ≥ 3) or the interval's vertices (m ≤ 2)
  bool refine_head_wise = false;       // one head moves at a time (else the joint pattern)
  int64_t refine_extrapolations = 0;   // head by head: accepted pattern moves along a sweep's displacement
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

// The exhaustive level's grid for two or more axes: the centres
// −T + (j + ½)·2T/G of the G^axes cells of [−T, T]^axes whose closed cell meets
// the ball ‖t‖ ≤ T, in the order of the cells' mixed-radix index (axis 0 fastest).
// proofs/net_pruning.md: every t with ‖t‖ ≤ T is within 2T/G · ½ of a kept
// centre in every coordinate.
std::vector<Eigen::VectorXd> ball_cell_centres(int axes, int g, double t_max);

// Σ‖F(X) − Y‖² / Σ‖Y‖² of `layer` on the labelled batch (fast path, double);
// NaN when the fast path cannot answer a sample (FastForwardStatus). Shared by
// `processes`: each evaluates its block of the samples, and the sums run over
// every entry in sample order, so any number of processes gives the same bytes.
double relative_error(const Layer& layer, const LabelledBatch& batch, int threads, const Processes& processes = {});
// The same over every process's block of samples when this process holds only its
// own: samples first .. end−1 of `x`, labels `y` ((end − first)·k·d values from
// sample `first`'s); the blocks are in rank order, contiguous in sample order.
double relative_error_of_block(const Layer& layer, const InputBatch& x, int64_t first, int64_t end, const double* y,
                               int threads, const Processes& processes);

}  // namespace mha
