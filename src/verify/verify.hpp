// `mhalearn verify`: each stage's fast path against its reference path on the
// same inputs, within a derived bound, escalating the reference's precision
// before declaring a disagreement (verify/comparison.hpp).
//
// Every stage runs in isolation on an instance, with the inputs the earlier
// stages would supply taken from the truth (oracle inputs), so a disagreement
// points at one stage:
//
//   forward  fast forward pass vs MPFR on the same X (forward_error_bound)
//   1        stage 1's statistic vs the same statistic with MPFR labels
//            (stage1_same_sample_check's derived bound)
//   2        row certification with Ŵ = W_Σ (the truth): verdicts and v̂ vs MPFR
//            (compare_certification_row); τ adapted as the learner does, as the
//            median relative residual of the rows that pass the other tests.
//            Parts (verify/parts.hpp): the body sculpted from the fast
//            certifications vs the body from the reference's — slab data,
//            membership of test points, LP widths
//   3        the margin stage's final least-squares fit, on its own events, vs the
//            normal equations in MPFR / exact rationals (compare_least_squares);
//            the proxy is the mean of the true Θ_i (a point of the true hull).
//            Part "selection": the keep/drop decisions re-made with MPFR margins
//   4        row certification as in 2, with stage 3's Ŵ and its error estimate
//   5        the span from the fast body centre (SVD) vs LP widths of K sculpted with
//            Ŵ = W_Σ; the bound is SpanOptions::max_angle (a stated threshold,
//            proofs/span_by_widths.md), not derived from rounding
//   6        least squares for W at the true Θ (compare_least_squares). Part
//            "net": the exhaustive level of the net search on the true hull
//            (point: mean of the Θ_i; directions: the Θ_i − Θ_1, orthonormalised),
//            coarse and on few samples, every candidate's objective in MPFR and
//            the winner
//   polish   the relative training error Σ‖F(X) − Y‖²/Σ‖Y‖² at a layer (the truth
//            moved by `polish_perturbation`, or a given layer) vs MPFR, within a
//            bound derived from forward_error_bound; the reference gradient
//            norm (first-order optimality) is reported
//
// The fast implementations are passed in (FastPaths) so that tests can swap one
// for a deliberately wrong copy and see verify reject it.
#pragma once

#include "data/oracle.hpp"
#include "stages/certify.hpp"
#include "stages/stage1_wsum.hpp"
#include "stages/stage3_margin.hpp"
#include "stages/stage5_span.hpp"
#include "stages/stage6_net.hpp"
#include "verify/comparison.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mha {

struct VerifyOptions {
  uint64_t seed = 1;                   // sample stream
  int64_t forward_samples = 256;
  int64_t stage1_samples = 2000;
  int64_t certify_samples = 400;       // rows certified: samples × k (stages 2 and 4)
  int64_t w_samples = 256;             // design rows: samples × k (stage 6)
  int64_t selection_samples = 1000;    // stage 3: every row of this many examined samples re-decided
  int64_t net_samples = 32;            // stage 6's net: training samples, and as many for validation
  int64_t net_max_tuples = 28;         // stage 6's net: the coarse exhaustive level (28 tuples: 8 points for m = 2)
  int64_t polish_samples = 256;
  int64_t gradient_samples = 8;        // the MPFR Jacobian is costly: fewer samples
  double polish_perturbation = 1e-6;   // relative move of every parameter from the truth
  const Layer* polish_layer = nullptr; // evaluate polishing's objective here instead
  int threads = 1;
};

struct FastPaths {
  std::function<MatD(const Layer&, const MatD& x)> forward;
  std::function<Stage1Result(const SampleSource&, const Stage1Options&)> stage1;
  std::function<RowCertificate(const MatD& x, const MatD& y, const MatD& b, int row, const CertifyOptions&)> certify;
  std::function<MarginResult(const SampleSource&, const MatD& proxy, const MarginOptions&)> stage3;
  std::function<SpanResult(const ConvexBody&, const ConvexBody::Centre&, int m, const SpanOptions&)> span;
  std::function<std::optional<MatD>(const MatD& design, const MatD& labels)> w_least_squares;
  std::function<double(const Layer&, const MatD& x, const MatD& y)> squared_error;  // Σ‖F(X) − Y‖² of one sample
  // The slabs of a certified row (stages 2 and 4 build the body from them).
  std::function<std::vector<SlabConstraint>(const MatD& x, int row, const RowCertificate&)> slabs;
  // Stage 6's exhaustive level: its candidates and their validation errors.
  std::function<NetCandidates(const SampleSource&, const Eigen::VectorXd& hull_point,
                              const Eigen::MatrixXd& hull_directions, int m, const NetOptions&)>
      net;
};
FastPaths default_fast_paths();

// "forward", "1", …, "6", "polish", in the order `all` runs them.
const std::vector<std::string>& verify_stage_names();

// One Comparison per requested stage, in verify_stage_names() order. Throws
// std::invalid_argument for an unknown stage name.
std::vector<Comparison> verify_instance(const Instance& instance, const std::vector<std::string>& stages,
                                        const VerifyOptions& options, const FastPaths& fast = default_fast_paths());

// The run's outcome, which `mhalearn verify` turns into its exit status:
// disagree (4) when any row disagrees after escalation, else incomplete (1) when
// a row could not be compared, else agree (0).
enum class VerifyOutcome { agree, incomplete, disagree };
VerifyOutcome verify_outcome(const std::vector<Comparison>& rows);

}  // namespace mha
