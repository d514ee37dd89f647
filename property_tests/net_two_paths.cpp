// Stage 6's net on two paths (proofs/w_least_squares.md, "The net on two paths"):
// on random instances (d ∈ {6, 8}, m ∈ {2, 3}) and hulls near the true one (its
// point and directions moved by a random relative 10⁻³..10⁻¹, so that the tuples'
// errors are far from zero and differ), the fast exhaustive level of the net
// (net_candidates: every tuple's W by least squares, its validation error, the
// winner) and the reference (the same tuples in MPFR: designs, normal equations,
// residual) agree within the propagated bounds, and the fast winner is the
// reference winner or tied with it — compare_net, as `mhalearn verify 6` and the
// learner's reference step run it. The net is over the hull (point and m − 1
// directions, the extended variant's) or over the span (point 0 and m directions, the
// paper variant's), drawn per case. Tests of the tester: one tuple's error scaled by
// 1 + 10⁻⁶, and the winner's error raised above the runner-up's, are rejected.
#include "generators.hpp"
#include "numeric/rng.hpp"
#include "property.hpp"
#include "stages/stage6/check.hpp"
#include "stages/stage6/net_check.hpp"

#include <Eigen/QR>

#include <algorithm>

using namespace mha;

namespace {

Eigen::VectorXd net_flat(const MatD& theta) { return Eigen::Map<const Eigen::VectorXd>(theta.data(), theta.size()); }

auto net_agrees(const NetFast& fast) {
  return [fast] {
    const Instance instance = test::draw_generated_instance({6, 8}, {2, 3}, {2.0, 4.0});
    const Layer& layer = instance.layer;
    const double move = *rc::gen::element(1e-3, 1e-2, 1e-1).as("relative move of the hull");
    const uint64_t seed = *rc::gen::inRange<uint64_t>(1, 1000).as("move seed");
    // The true hull, moved: point Σ Θ_i/m + noise, directions Θ_i − Θ_1 + noise, orthonormalised.
    const int d = instance.d(), n = d * d, m = instance.m();
    Eigen::VectorXd x0 = Eigen::VectorXd::Zero(n);
    for (const auto& h : layer.heads) x0 += net_flat(h.theta) / m;
    x0 += move * x0.norm() * net_flat(gaussian_matrix(seed, Stream::verify, 0, 0, d)).normalized();
    Eigen::MatrixXd spread(n, m - 1);
    for (int i = 1; i < m; ++i)
      spread.col(i - 1) = net_flat(layer.heads[i].theta) - net_flat(layer.heads[0].theta) +
                          move * net_flat(gaussian_matrix(seed, Stream::verify, i, 0, d));
    const Eigen::MatrixXd hull_dirs =
        (Eigen::HouseholderQR<Eigen::MatrixXd>(spread).householderQ() * Eigen::MatrixXd::Identity(n, m - 1)).transpose();
    // The paper variant nets the span instead (steps.cpp, net_domain): the point 0 and an
    // orthonormal basis of span{x0, hull directions}, m axes.
    const bool over_span = *rc::gen::arbitrary<bool>().as("over the span (else the hull)");
    Eigen::MatrixXd dirs = hull_dirs;
    if (over_span) {
      Eigen::MatrixXd span(n, m);
      span.col(0) = x0;
      span.rightCols(m - 1) = hull_dirs.transpose();
      dirs = (Eigen::HouseholderQR<Eigen::MatrixXd>(span).householderQ() * Eigen::MatrixXd::Identity(n, m)).transpose();
      x0.setZero();
    }
    NetOptions no;
    no.train_samples = no.validation_samples = 32;
    no.max_tuples = 28;
    const SampleOracle oracle(instance, seed);
    const NetCandidates candidates = fast(oracle, x0, dirs, m, no);
    const ComparisonPart part = escalate_part([&](unsigned bits) { return compare_net(oracle, candidates, bits); });
    RC_LOG() << part.name << ": " << part.detail << "\n";
    RC_PRE(part.compared > 0);
    RC_ASSERT(!(part.compared > 0 && !part.agree));
  };
}

NetCandidates net_one_error_scaled(const SampleSource& s, const Eigen::VectorXd& x0, const Eigen::MatrixXd& dirs, int m,
                               const NetOptions& o) {
  NetCandidates c = net_candidates(s, x0, dirs, m, o);
  c.errors[c.errors.size() / 2] *= 1 + 1e-6;
  return c;
}

NetCandidates net_winner_demoted(const SampleSource& s, const Eigen::VectorXd& x0, const Eigen::MatrixXd& dirs, int m,
                             const NetOptions& o) {
  NetCandidates c = net_candidates(s, x0, dirs, m, o);
  std::vector<double> sorted = c.errors;
  std::sort(sorted.begin(), sorted.end());
  c.errors[c.winner] = 1.5 * sorted[1];  // ranked behind the runner-up, which now wins
  c.winner = static_cast<size_t>(std::min_element(c.errors.begin(), c.errors.end()) - c.errors.begin());
  return c;
}

}  // namespace

TEST_CASE("stage 6's net: every candidate's error and the winner agree with MPFR", "[property][stage6]") {
  mha::test::property("net fast vs MPFR", 8, net_agrees(net_candidates));
}

TEST_CASE("the net's cross-check rejects a scaled tuple error and a demoted winner", "[property][stage6]") {
  mha::test::property_rejects("one tuple's error scaled by 1 + 1e-6", 6, net_agrees(net_one_error_scaled));
  mha::test::property_rejects("winner's error raised above the runner-up's", 6, net_agrees(net_winner_demoted));
}
