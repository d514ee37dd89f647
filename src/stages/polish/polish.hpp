// Polishing (beyond the paper's stages; MATH.md §3.7): local
// Levenberg–Marquardt on all parameters from the stage-6 winner, reported
// separately from the paper's stages.
//
// Variable projection: the W_i enter linearly, so for given Θ they are the
// least-squares solution W(Θ) of the shared design (stages/stage6/w_least_squares.hpp)
// and only Θ = (Θ_1..Θ_m) is iterated, minimising ‖r(Θ)‖² with
// r(Θ) = D(Θ) W(Θ) − Y. With Kaufman's approximation the Jacobian is P⊥ J_Θ,
// where P⊥ projects each output column's residual onto the orthogonal
// complement of range(D) and J_Θ is the Jacobian of F with W held fixed
// (stages/polish/attention_jacobian.hpp). Because the problem is realizable and
// noiseless, the minimum is 0 and Gauss–Newton converges quadratically near it.
//
// Two linear solvers for the damped Gauss–Newton systems (chosen like Ceres's
// linear_solver_type): the dense one forms J (N·k·d × m·d²) and JᵀJ and solves
// by LDLT — exact, and kept up to dense_max_parameters so that those results
// stay what they were; the matrix-free one applies J and Jᵀ without forming
// them (stages/polish/operator.hpp) and solves by block-preconditioned
// conjugate gradients — memory O(N·k·m·d + N·k²·d² + m·d⁴), which is what makes
// d = 64 possible (the dense Jacobian would take 34 GB there). Both are
// deterministic: the same bytes for every thread count.
//
// Noisy labels (proofs/label_noise.md): the minimum is then the noise, not 0;
// Gauss–Newton reaches it in a few steps and what remains is the fit's
// statistical error, which falls as σ/√N with the training samples. The run
// stops when a Gauss–Newton step gains less than a fraction of that error
// (`statistical_stop`), estimates the noise from the training residual
// (corrected for the p fitted parameters) and from the held-out residual
// (noise ⊕ the fit's own error), and compares them with the residual's
// rounding level (tolerance::residual_rounding_level) to name the floor it
// reached: rounding or noise. The learner's final fit (learn/noise.hpp) calls it
// again on as many samples as the noise calls for.
#pragma once

#include "data/oracle.hpp"
#include "util/processes.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace mha {

enum class PolishSolver {
  automatic,    // dense while m·d² ≤ dense_max_parameters, else matrix-free
  dense,        // dense Jacobian, LDLT of JᵀJ
  matrix_free,  // J·v and Jᵀ·r on the fly, preconditioned conjugate gradients
};

struct PolishOptions {
  int64_t samples = 0;             // 0: max(256, 16·m·d/k, 2d²/(k(k−1))) — see polish.cpp
  int64_t validation_samples = 0;  // 0: 256
  int max_iterations = 40;
  double target = 1e-32;           // stop when the relative training error Σr²/ΣY² falls below this
  double floor = 1e-24;            // below this error, a step that does not halve it ends the run (rounding floor)
  int threads = 1;
  // Processes (MPI ranks) that share the matrix-free solver's per-sample work, the
  // design's rows and the validation error (the same bytes for any number); the
  // dense solver's Jacobian and normal equations are every process's own.
  Processes processes;
  uint64_t first_sample = 0;
  // The dense solver's Jacobian is (N·k·d) × (m·d²) doubles: 1.1 GB at (32,2,2),
  // 34 GB at (64,2,2) with the default N. Above this the dense solver skips
  // polishing with a message; the matrix-free solver never forms J.
  double max_jacobian_bytes = 6e9;
  PolishSolver linear_solver = PolishSolver::automatic;
  // Largest m·d² solved densely by `automatic`: every d ≤ 16 with m ≤ 4 stays
  // dense, so those results (the committed (16,2,2) runs, tests/golden) are
  // unchanged; (32,2,2) (2048) goes matrix-free, ~10× faster. The matrix-free
  // solver measured faster at (16,2,2) too (docs/benchmarks.md, "Polishing"):
  // the threshold keeps bytes, not speed.
  int64_t dense_max_parameters = 1024;
  // No new iteration after this many seconds since the call (0: none). Used by
  // the random-start baseline's time budget (baseline/random_polish.hpp); the
  // learner leaves it at 0, so its results do not depend on the clock.
  double max_seconds = 0;

  // The matrix-free solver's preconditioner blocks (O(N k² d⁴) to form) come from
  // at most this many training samples, scaled by N/n: a preconditioner changes
  // CG's iteration count, never the system solved, and the blocks of a large
  // noisy fit are averages that a few thousand samples already pin down. Up to
  // this N nothing changes (the committed runs keep their bytes). But never from
  // fewer than preconditioner_rows_per_column·d²/k² samples (see
  // polish_preconditioner_samples).
  int64_t preconditioner_samples = 4096;
  // A head block is Zᵀ(KZ) with k² rows of Z per sample and d² columns. At
  // (128,2,2) 4096 samples leave Z square (16384 × 16384), and CG needed 1082
  // iterations in one Levenberg–Marquardt step; with the blocks from all 16384
  // training samples (4 rows per column, as 4096 samples give at d = 64, where CG
  // needs 9–13 per system), 7 (docs/bench/polish.md, "d = 128"). 0: no floor.
  int64_t preconditioner_rows_per_column = 4;
  // Stop when an accepted Gauss–Newton step (damping ≤ its initial value) lowers
  // the training error by less than this fraction of the fit's statistical error
  // cost·p/(n − p) (p parameters, n residual entries), while the residual is above
  // its rounding level: at a noisy optimum further steps cannot improve the
  // answer beyond its statistical error. 0: off; off too on a noiseless source
  // (SampleSource::noiseless), which has no statistical error.
  double statistical_stop = 0.01;
  // Most conjugate-gradient iterations of one damped system (matrix-free solver);
  // a step is accepted only if it lowers the error either way.
  int64_t cg_max_iterations = 2000;
};

struct PolishReport {
  int iterations = 0;
  std::vector<double> train_error;  // relative training error after each accepted step (first: the start)
  double validation_error_before = 0, validation_error_after = 0;
  std::string stop_reason;
  std::string linear_solver, linear_solver_reason;  // which solver ran, and why
  std::vector<int64_t> cg_iterations;  // per Levenberg–Marquardt iteration, all damping attempts (0: dense)
  int64_t samples = 0;
  double seconds = 0;
  // The floor the fit reached (proofs/label_noise.md). Relative quantities, as
  // --label-noise: rms of the residual over rms of the labels.
  int64_t parameters = 0;         // p = 2·m·d² (Θ and W)
  int64_t residual_entries = 0;   // n = N·k·d training residual entries
  double rounding_bound = 0;      // a priori: what rounding alone can leave at most (validation samples, start layer)
  double rounding_measured = 0;   // the start layer's double evaluation against MPFR (relative rms)
  double rounding_level = 0;      // tolerance::rounding_floor_factor() · rounding_measured: below it, rounding
  double noise_train = 0;         // √(cost·n/(n − p)) at the end: the noise, when the fit reached its optimum
  double noise_heldout = 0;       // √(validation error) at the end: the noise ⊕ the fit's own error
  bool noise_floor = false;       // noise_train above rounding_level: noise, not rounding, is the floor
  bool reached_floor = false;     // stopped at a floor or the target (not by the iteration limit or too few samples)
};

struct PolishResult {
  Layer layer;
  PolishReport report;
};

PolishResult polish_layer(const SampleSource& source, const Layer& start, const PolishOptions& options);

// One Levenberg–Marquardt iteration of polish_layer, computed by polish_layer's
// own code (the same `evaluate`, linear models and damping loop), for the
// cross-check against the reference path (stages/polish/check.hpp
// check_polish_iteration). The damping starts at its initial value, as in
// polish_layer's first iteration.
struct PolishIteration {
  std::vector<MatD> xs, ys;        // its training samples (k × d each)
  Layer start;                     // (Θ, W(Θ)): W solved by least squares, as polish does
  double objective = 0;            // ‖D Ŵ − Y‖²/‖Y‖² as `evaluate` computes it (+inf: rank-deficient design)
  Eigen::VectorXd gradient;        // the linear model's gradient J_Kᵀ r (Kaufman: Jᵀ P⊥ r), column order i·d² + p·d + q
  bool accepted = false;           // whether a damped step lowered the objective within the 12 attempts
  Layer next;                      // the accepted trial's layer (when accepted)
  double next_objective = 0;       // and its objective
  bool dense = true;               // which linear model (polish_uses_dense_solver)
};

// The iteration on `train` from `start`'s Θ (its W are replaced by W(Θ)).
PolishIteration polish_iteration(const LabelledBatch& train, const Layer& start, const PolishOptions& options);

// Whether polish_layer solves densely at this size with these options.
bool polish_uses_dense_solver(int d, int m, const PolishOptions& options);

// The training samples (of n) the matrix-free preconditioner's head blocks are
// formed from: all of them when preconditioner_samples ≤ 0; otherwise at most
// preconditioner_samples, raised to ⌈preconditioner_rows_per_column·d²/k²⌉ so
// that Z has that many rows per column, and never more than n.
int64_t polish_preconditioner_samples(int64_t n, int d, int k, const PolishOptions& options);

// Training + validation samples polish_layer draws with these options.
int64_t polish_samples_needed(int d, int k, int m, const PolishOptions& options);

}  // namespace mha
