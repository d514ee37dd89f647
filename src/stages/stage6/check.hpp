// Stage 6 on two paths.
//
//   least squares   W for given Θ_1..Θ_m on a batch of samples: the fast column-pivoting
//                   QR (solve_w_stack) against the normal equations in MPFR and exact
//                   rationals of the same double design (compare_least_squares,
//                   proofs/w_least_squares.md, "Fast against reference"), escalated
//                   128 → 256 bits → exact rationals; with the part
//   net             the exhaustive level of the net search on a given hull, coarse
//                   and on few samples, every candidate's objective in MPFR and the
//                   winner (net_check.hpp).
#pragma once

#include "data/oracle.hpp"
#include "numeric/comparison.hpp"
#include "stages/stage6/net.hpp"
#include "stages/stage6/w_least_squares.hpp"

#include <functional>
#include <optional>
#include <vector>

namespace mha {

using WLeastSquaresFast = std::function<std::optional<MatD>(const MatD& design, const MatD& labels)>;
using NetFast = std::function<NetCandidates(const SampleSource&, const Eigen::VectorXd& hull_point,
                                            const Eigen::MatrixXd& hull_directions, int m, const NetOptions&)>;

// The design of `thetas` on samples first .. first + samples − 1 and its labels.
struct WDesign {
  MatD design, labels;
};
WDesign w_design(const SampleSource& source, const std::vector<MatD>& thetas, uint64_t first, int64_t samples);

// Least squares for W at `thetas` on those samples, and the net's exhaustive
// level on the hull (hull_point, hull_directions) with `net` (its budget and
// samples; coarse: MPFR re-evaluates every tuple).
Comparison check_stage6(const SampleSource& source, const std::vector<MatD>& thetas, uint64_t first, int64_t samples,
                        const Eigen::VectorXd& hull_point, const Eigen::MatrixXd& hull_directions, const NetOptions& net,
                        const WLeastSquaresFast& least_squares = solve_w_stack, const NetFast& net_fast = net_candidates);

}  // namespace mha
