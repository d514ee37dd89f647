#include "numeric/tolerance.hpp"
#include "instances.hpp"
#include "model/forward_fast.hpp"
#include "stages/polish.hpp"
#include "stages/polish_reference.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <random>

using namespace mha;

namespace {
double max_error(const Layer& a, const Layer& truth) {
  double e = 0;
  for (int i = 0; i < truth.m(); ++i) {
    e = std::max(e, (a.heads[i].theta - truth.heads[i].theta).norm() / truth.heads[i].theta.norm());
    e = std::max(e, (a.heads[i].w - truth.heads[i].w).norm() / truth.heads[i].w.norm());
  }
  return e;
}
// The truth with Θ moved by a relative 1e-3 and W scaled by 1.001.
Layer perturbed_start(const Layer& truth, int d) {
  Layer start = truth;
  std::mt19937_64 rng(9);
  std::normal_distribution<double> normal;
  for (auto& h : start.heads) {
    MatD noise = MatD::NullaryExpr(d, d, [&] { return normal(rng); });
    h.theta += 1e-3 * h.theta.norm() / noise.norm() * noise;
    h.w *= 1.001;
  }
  return start;
}

bool same_bytes(const MatD& a, const MatD& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

bool same_bytes(const Layer& a, const Layer& b) {
  if (a.m() != b.m()) return false;
  for (int i = 0; i < a.m(); ++i)
    if (!same_bytes(a.heads[i].theta, b.heads[i].theta) || !same_bytes(a.heads[i].w, b.heads[i].w)) return false;
  return true;
}
}  // namespace

TEST_CASE("polishing converges quadratically from a 1e-3 perturbation to machine precision", "[polish]") {
  const Instance inst = test::generated_instance(12, 2, 2, 6.0, 4);
  Layer start = inst.layer;
  std::mt19937_64 rng(9);
  std::normal_distribution<double> normal;
  for (auto& h : start.heads) {
    MatD noise = MatD::NullaryExpr(12, 12, [&] { return normal(rng); });
    h.theta += 1e-3 * h.theta.norm() / noise.norm() * noise;
    h.w *= 1.001;
  }
  const SampleOracle oracle(inst, 7);
  PolishOptions o;
  o.threads = 2;
  const PolishResult r = polish_layer(oracle, start, o);
  std::string history;
  for (double e : r.report.train_error) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2e ", e);
    history += buf;
  }
  INFO("iterations " << r.report.iterations << ", stop: " << r.report.stop_reason << ", history " << history);
  CHECK(max_error(start, inst.layer) > 5e-4);
  CHECK(max_error(r.layer, inst.layer) < tolerance::polish_recovery_target());
  CHECK(r.report.validation_error_after < tolerance::polish_validation_target());
  CHECK(r.report.validation_error_after < r.report.validation_error_before);
  // Gauss–Newton on a zero-residual problem converges quadratically: measured
  // 8.6e-7 → 2.5e-11 → 2.7e-14 → 1.1e-17 → 2.7e-22 → 3.1e-28 → 2.2e-31 (rounding floor).
  CHECK(r.report.iterations <= 10);
  CHECK(r.report.train_error.back() < tolerance::polish_train_floor_target());
  // Training error decreases monotonically (only decreasing steps are accepted).
  for (size_t i = 1; i < r.report.train_error.size(); ++i) CHECK(r.report.train_error[i] < r.report.train_error[i - 1]);
}

TEST_CASE("matrix-free polishing converges to machine precision, the same bytes on 1 and 2 threads", "[polish]") {
  const int d = 12;
  const Instance inst = test::generated_instance(d, 2, 2, 6.0, 4);
  const Layer start = perturbed_start(inst.layer, d);
  const SampleOracle oracle(inst, 7);
  PolishOptions o;
  o.linear_solver = PolishSolver::matrix_free;
  o.threads = 1;
  const PolishResult one = polish_layer(oracle, start, o);
  o.threads = 2;
  const PolishResult two = polish_layer(oracle, start, o);
  INFO("iterations " << two.report.iterations << ", stop: " << two.report.stop_reason);
  CHECK(two.report.linear_solver.find("matrix-free") != std::string::npos);
  CHECK(max_error(start, inst.layer) > 5e-4);
  CHECK(max_error(two.layer, inst.layer) < tolerance::polish_recovery_target());
  CHECK(two.report.validation_error_after < tolerance::polish_validation_target());
  CHECK(two.report.train_error.back() < tolerance::polish_train_floor_target());
  for (size_t i = 1; i < two.report.train_error.size(); ++i) CHECK(two.report.train_error[i] < two.report.train_error[i - 1]);
  // Determinism: sums over samples in fixed chunks (256 training samples = 4 chunks).
  CHECK(same_bytes(one.layer, two.layer));
  CHECK(one.report.train_error == two.report.train_error);
  CHECK(one.report.cg_iterations == two.report.cg_iterations);
}

TEST_CASE("the automatic solver is dense at (16,2,2) and matrix-free at (32,2,2) and (64,2,2)", "[polish]") {
  const PolishOptions o;
  CHECK(polish_uses_dense_solver(16, 2, o));
  CHECK(!polish_uses_dense_solver(32, 2, o));
  CHECK(!polish_uses_dense_solver(64, 2, o));
}

TEST_CASE("the matrix-free result passes the MPFR objective re-check on its training samples", "[polish]") {
  const int d = 12, k = 2;
  const Instance inst = test::generated_instance(d, k, 2, 6.0, 4);
  const SampleOracle oracle(inst, 7);
  PolishOptions o;
  o.linear_solver = PolishSolver::matrix_free;
  o.threads = 2;
  o.samples = 256;
  const PolishResult r = polish_layer(oracle, perturbed_start(inst.layer, d), o);
  // polish_layer's training samples are the first o.samples drawn (validation follows).
  const LabelledBatch batch = oracle.draw(0, o.samples, 1);
  std::vector<MatD> xs, ys;
  std::vector<double> scratch;
  const FastForward forward(r.layer);
  double fast_sum = 0, y_sum = 0;
  for (int64_t s = 0; s < batch.x.count; ++s) {
    xs.push_back(batch.x.sample(s));
    ys.push_back(Eigen::Map<const MatD>(batch.y.data() + s * k * d, k, d));
    MatD f(k, d);
    REQUIRE(forward.forward_dense(xs.back().data(), k, f.data(), scratch));
    fast_sum += (f - ys.back()).squaredNorm();
    y_sum += ys.back().squaredNorm();
  }
  const Comparison c = compare_objective(r.layer, xs, ys, fast_sum / y_sum, 128);
  INFO(c.detail << ": difference " << c.max_difference << " vs bound " << c.bound);
  CHECK(c.agree);
  // The objective itself, certified by the reference: below the validation target.
  CHECK(fast_sum / y_sum + c.bound < tolerance::polish_validation_target());
  // A wrong layer's objective (W scaled by 1 + 1e-6) is told apart by the same check.
  Layer wrong = r.layer;
  for (auto& h : wrong.heads) h.w *= 1 + 1e-6;
  CHECK(!compare_objective(wrong, xs, ys, fast_sum / y_sum, 128).agree);
}
