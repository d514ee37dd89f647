// Stage 2 (MATH.md §3.2): stream samples, certify every row of every example,
// and collect the slab constraints into the convex body
//   K = {Θ : |⟨a_r, Θ⟩ − b_r| ≤ η_r for all r, ‖Θ‖_F ≤ R}.
// With enough diverse constraints K is a thin neighbourhood of the affine hull
// of Θ_1..Θ_m; its least-squares centre and m−1 free directions estimate it.
#pragma once

#include "data/oracle.hpp"
#include "geometry/convex_body.hpp"
#include "stages/stage2/certify.hpp"
#include "util/processes.hpp"

#include <array>
#include <cstdint>
#include <optional>

namespace mha {

struct SculptOptions {
  CertifyOptions certify;
  int64_t max_samples = 2000000;
  double max_seconds = 0;          // 0: no time budget
  int64_t target_constraints = 0;  // stop once this many slabs are kept; 0: 3·d²
  // How rows are chosen. threshold: every row with relative residual ≤ certify.tau,
  // in sample order, until target_constraints (the paper's rule with a given τ).
  // best_rows: examine the whole budget and keep the rows with the smallest
  // relative residuals that pass every other check, just enough for
  // target_constraints — the same body as `threshold` with τ set to the largest
  // kept residual over the whole budget (τ_effective in the report), chosen from
  // the data instead of a pilot's quantile.
  enum class Selection { threshold, best_rows } selection = Selection::threshold;
  // Drop a slab identical (same normal and centre) to one already kept: repeated
  // rows (a Boolean domain with few tokens, d ≤ 10) carry no new information and
  // would otherwise count towards the target and weigh the least squares.
  bool distinct_constraints = false;
  bool all_rows = true;            // certify every row (false: row 0 only, as the paper)
  double radius = 20;              // R of the ball ‖Θ‖_F ≤ R
  int threads = 1;
  uint64_t first_sample = 0;       // offset into the source's stream
  // Processes sharing the loop (util/processes.hpp): each draws and certifies its
  // block of every batch, and the blocks' outcomes are merged in sample order, so
  // the body is the same bytes for any count.
  Processes processes = {};
};

// The slabs a sculpt aims for: target_constraints, or 3·d² when it is 0 (the
// default, resolved here only: stage 2, stage 4's pilot and the learner's
// round 0 all read it from here).
inline int64_t constraints_target(const SculptOptions& o, int d) {
  return o.target_constraints > 0 ? o.target_constraints : 3 * int64_t{d} * d;
}

// Measurements that need the true instance.
struct SculptTruth {
  std::vector<double> theta_violation;  // max slab violation of each true Θ_i (0: inside K)
  std::vector<bool> theta_in_ball;
  double hull_error = 0;                // max_i ‖Θ_i − proj_hull(Θ_i)‖_F / ‖Θ_i‖_F
  double hull_angle = 0;                // largest principal angle (radians) between hull directions
  int64_t sigma_assumption_violated = 0;  // certified rows with σ_min(C) < assumed σ_min
};

struct SculptReport {
  int64_t samples = 0;
  std::vector<int64_t> samples_by_process;  // of `samples`, what each process drew and certified
  int64_t rows_examined = 0;
  std::array<int64_t, 6> verdicts{};    // counts per RowVerdict
  int64_t rows_certified = 0;
  int64_t rows_certified_first_row = 0; // of which row 0 (what the paper's single-row version gets)
  int64_t constraints = 0;
  int64_t duplicate_constraints = 0;    // slabs dropped as identical to a kept one (distinct_constraints)
  double tau_effective = 0;             // best_rows: the largest kept relative residual; threshold: certify.tau
  double seconds = 0;                   // sculpt_slabs: the loop's; sculpt_body: the loop and the centre
  double loop_seconds = 0;              // the sample loop (the part the processes share)
  double centre_seconds = 0;            // the least-squares centre (sculpt_body)
  bool budget_exhausted = false;        // stopped by samples or time before reaching the target
  int numerical_rank = 0;
  double gap = 0;                       // s_{m-1} / s_{m-2}: constrained vs free singular values
  // What the certification lemma promises for this body (proofs/certification.md,
  // "The hull from the body"): every Θ_i lies in every slab, so each head's distance
  // from the estimated hull is at most hull_distance_bound = √N/s_con (N slabs, s_con
  // the smallest constrained singular value of the weighted constraint matrix) — a
  // worst case — and about
  // hull_distance_typical = (Σ_constrained 1/s_j²)^{1/2} when the slabs' errors are
  // uncorrelated. Divided by ‖x0‖ (≤ every ‖Θ_i‖) they compare with hull_error.
  // The iterative centre knows only the smallest 2m + 1 values: its typical figure
  // sums those alone, a lower bound of the formula's.
  double hull_distance_bound = 0, hull_distance_typical = 0, hull_point_norm = 0;
  std::vector<double> smallest_singular_values;  // up to 2m of them, ascending
  double rows_per_second = 0;
  std::optional<SculptTruth> truth;
};

struct SculptResult {
  ConvexBody body;
  ConvexBody::Centre centre;            // least-squares centre and m−1 free directions
  SculptReport report;
};

// `m` is the number of heads (the hull has dimension m−1). `truth`, when
// given, is used only for the report, never by the algorithm. It is
// sculpt_slabs followed by the body's least-squares centre.
SculptResult sculpt_body(const SampleSource& source, const MatD& w_hat, int m, const SculptOptions& options,
                         const Layer* truth = nullptr);

// The sample loop alone: the body's slabs and the report's counts, no centre
// (centre, rank, gap and the hull figures stay empty; seconds is the loop's).
SculptResult sculpt_slabs(const SampleSource& source, const MatD& w_hat, const SculptOptions& options,
                          const Layer* truth = nullptr);

// Default assumed lower bound on σ_min(C) for random W_i with N(0,1/d) entries:
// the rows x_j W_i are roughly standard Gaussian in R^d, so σ_min(C) ≈ √d − √(km);
// the default takes half of that (at least 0.05). A stated assumption, checked
// against the truth in the report.
double default_sigma_min(int d, int k, int m);

}  // namespace mha
