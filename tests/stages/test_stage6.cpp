#include "numeric/tolerance.hpp"
#include "instances.hpp"
#include "model/reference.hpp"
#include "stages/stage6_net.hpp"
#include "stages/w_least_squares.hpp"

#include <catch2/catch.hpp>

using namespace mha;

namespace {
Eigen::VectorXd flat(const MatD& a) { return Eigen::Map<const Eigen::VectorXd>(a.data(), a.size()); }

double max_theta_error(const Layer& learned, const Layer& truth) {
  // Heads come back in net order; match each true head to its nearest learned one.
  double worst = 0;
  for (const auto& t : truth.heads) {
    double best = INFINITY;
    for (const auto& h : learned.heads) best = std::min(best, (h.theta - t.theta).norm() / t.theta.norm());
    worst = std::max(worst, best);
  }
  return worst;
}
}  // namespace

TEST_CASE("the net over the exact hull recovers the true heads and W", "[stage6]") {
  const Instance inst = test::generated_instance(12, 2, 2, 4.0, 5);
  const Eigen::VectorXd t0 = flat(inst.layer.heads[0].theta), t1 = flat(inst.layer.heads[1].theta);
  // The exact hull: x0 = its minimum-norm point, u = the unit direction.
  const Eigen::VectorXd u = (t1 - t0).normalized();
  const Eigen::VectorXd x0 = t0 - u * u.dot(t0);
  const SampleOracle oracle(inst, 3);
  NetOptions o;
  o.threads = 2;
  const NetResult r = search_net(oracle, x0, u.transpose(), 2, o);
  INFO("coarse validation " << r.report.coarse_validation_error << ", final " << r.report.validation_error);
  CHECK(r.report.grid_per_axis == 200);
  CHECK(r.report.tuples_exhaustive == 200 * 199 / 2);
  // The coarse net is within half a grid step (≈0.1) of each head along the hull.
  CHECK(max_theta_error(r.coarse_layer, inst.layer) < r.report.coarse_resolution / 4.0);
  // Refined to a step of ~1e-6 on the exact hull: the heads and W are recovered
  // to about that step (the problem is noiseless).
  CHECK(max_theta_error(r.layer, inst.layer) < tolerance::net_recovery_target());
  CHECK(r.report.validation_error < tolerance::net_validation_target());
  CHECK(r.report.validation_error <= r.report.coarse_validation_error);
  CHECK_FALSE(r.report.refine_capped);
  // The pattern search's iteration cap stops it early, says so, and keeps the best tuple so far.
  o.max_refine_iterations = 5;
  const NetResult capped = search_net(oracle, x0, u.transpose(), 2, o);
  CHECK(capped.report.refine_capped);
  CHECK(capped.report.refine_iterations == 5);
  CHECK(capped.report.validation_error <= capped.report.coarse_validation_error);
  CHECK(capped.report.validation_error > r.report.validation_error);
}

TEST_CASE("with one head the hull is a point and stage 6 is least squares for W alone", "[stage6]") {
  const Instance inst = test::generated_instance(10, 2, 1, 3.0, 2);
  const SampleOracle oracle(inst, 1);
  NetOptions o;
  const NetResult r = search_net(oracle, flat(inst.layer.heads[0].theta), Eigen::MatrixXd(0, 100), 1, o);
  CHECK(r.report.tuples_exhaustive == 1);
  CHECK((r.layer.heads[0].w - inst.layer.heads[0].w).norm() / inst.layer.heads[0].w.norm() < tolerance::single_head_w_target());
}

TEST_CASE("least squares for W refuses a rank-deficient design", "[stage6]") {
  // Two identical candidate heads: the two column blocks of D coincide.
  const Instance inst = test::generated_instance(8, 2, 2, 3.0, 1);
  const SampleOracle oracle(inst, 1);
  const LabelledBatch b = oracle.draw(0, 64, 1);
  MatD design(64 * 2, 16), labels = Eigen::Map<const MatD>(b.y.data(), 128, 8);
  for (int n = 0; n < 64; ++n) {
    const MatD x = b.x.sample(n);
    const MatD a = attention<double>(inst.layer.heads[0].theta, x);
    design.middleRows(2 * n, 2) = w_design_rows<double>({a, a}, x);
  }
  CHECK_FALSE(solve_w_stack(design, labels).has_value());
  CHECK_THROWS_AS(search_net(oracle, Eigen::VectorXd::Zero(64), Eigen::MatrixXd::Zero(2, 64), 2, NetOptions{}),
                  std::invalid_argument);
}
