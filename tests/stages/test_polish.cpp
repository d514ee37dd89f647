#include "test_tolerances.hpp"
#include "instances.hpp"
#include "model/forward_fast.hpp"
#include "model/reference.hpp"
#include "numeric/multiprecision.hpp"
#include "numeric/precision.hpp"
#include "stages/polish/attention_jacobian.hpp"
#include "stages/polish/polish.hpp"
#include "stages/polish/operator.hpp"
#include "stages/polish/reference.hpp"
#include "thread_ranks.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
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
  // Noiseless labels: the floor is rounding, and the report names it so (the training
  // residual against the measured rounding, printed with -s: tolerance::rounding_floor_factor).
  UNSCOPED_INFO("noiseless floor: training residual " << r.report.noise_train << " = "
                << r.report.noise_train / r.report.rounding_measured << " × the measured rounding");
  CHECK_FALSE(r.report.noise_floor);
  CHECK_THAT(r.report.stop_reason, Catch::Contains("rounding floor"));
}

namespace {
// The matrix-free solver on a (12,2,2) instance from its 1e−3-perturbed start, one thread.
struct MatrixFreeCase {
  Instance inst = test::generated_instance(12, 2, 2, 6.0, 4);
  Layer start = perturbed_start(inst.layer, 12);
  SampleOracle oracle{inst, 7};
  PolishOptions options() const {
    PolishOptions o;
    o.linear_solver = PolishSolver::matrix_free;
    o.threads = 1;
    return o;
  }
};
}  // namespace

TEST_CASE("matrix-free polishing converges to machine precision, the same bytes on 1 and 2 threads", "[polish]") {
  const MatrixFreeCase c;
  const Instance& inst = c.inst;
  const Layer& start = c.start;
  const SampleOracle& oracle = c.oracle;
  PolishOptions o = c.options();
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
  UNSCOPED_INFO("noiseless floor: training residual " << two.report.noise_train << " = "
                << two.report.noise_train / two.report.rounding_measured << " × the measured rounding");
  CHECK_FALSE(two.report.noise_floor);
}

TEST_CASE("matrix-free polishing shared by 2 and 3 processes gives the bytes of one process", "[polish][determinism]") {
  const MatrixFreeCase c;
  const Layer& start = c.start;
  const SampleOracle& oracle = c.oracle;
  const PolishOptions o = c.options();
  const PolishResult one = polish_layer(oracle, start, o);
  REQUIRE(one.report.iterations > 1);
  const auto same = [&](const PolishResult& r) {
    return same_bytes(r.layer, one.layer) && r.report.train_error == one.report.train_error &&
           r.report.cg_iterations == one.report.cg_iterations &&
           r.report.validation_error_after == one.report.validation_error_after;
  };
  // 256 training samples: 4 chunks of the operator's sums, so 3 processes split them
  // unevenly, and the third computes no head block (2 heads).
  for (int size : {2, 3}) {
    std::vector<PolishResult> shared(static_cast<size_t>(size));
    test::run_as_ranks(size, [&](const Processes& p) {
      PolishOptions mine = o;
      mine.processes = p;
      shared[static_cast<size_t>(p.rank)] = polish_layer(oracle, start, mine);
    });
    for (int r = 0; r < size; ++r) {
      INFO(size << " processes, rank " << r);
      CHECK(same(shared[static_cast<size_t>(r)]));
    }
  }
  // The tester: an all-gather that puts the blocks in the wrong order gives another fit.
  std::vector<PolishResult> reversed(2);
  test::ThreadGather gather(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      PolishOptions mine = o;
      mine.processes.rank = r;
      mine.processes.size = 2;
      mine.processes.all_gather = [&gather, r](const std::vector<double>& part) {
        std::vector<double> all = gather.gather(r, part);
        const size_t half = all.size() / 2;  // the two blocks' sizes differ by at most one item
        std::rotate(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(half), all.end());
        return all;
      };
      try {  // both ranks see the same wrong data, so both take the same path
        reversed[static_cast<size_t>(r)] = polish_layer(oracle, start, mine);
      } catch (const std::exception&) {
        reversed[static_cast<size_t>(r)].report.iterations = -1;  // rejected by throwing: not the same either
      }
      test::end_rank_thread();
    });
  for (auto& t : ranks) t.join();
  CHECK_FALSE(same(reversed[0]));
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

namespace {
// Head i's block of Σ_n J_nᵀ J_n from attention_jacobian<Mpfr> (256 bits) against
// `block`, entrywise within 2 γ_n (1 + 4Λ) times the majorant
// Σ_{n,a} |x_a[p] x_a[p']| Σ_c ĝ_c[q] ĝ_c[q'], ĝ_c[q] = Σ_l A_l(|V|_lc + Σ_j A_j|V|_jc)|x_l[q]|
// (proofs/attention_jacobian.md, "Matrix-free products", the preconditioner's blocks).
bool gram_block_agrees(const Layer& layer, const std::vector<MatD>& xs, int head, const Eigen::MatrixXd& block) {
  const int k = xs.front().rows(), d = layer.d();
  const int64_t dd = int64_t{d} * d, n = static_cast<int64_t>(xs.size());
  ScopedPrecision precision(256);
  const LayerT<Mpfr> lm = convert_layer<Mpfr>(layer);
  Mat<Mpfr> reference = Mat<Mpfr>::Zero(dd, dd);
  MatD majorant = MatD::Zero(dd, dd);
  double lambda = 0;
  for (const auto& x : xs) {
    const Mat<Mpfr> jac = attention_jacobian<Mpfr>(lm, cast_matrix<Mpfr>(x)).middleCols(head * dd, dd);
    reference += jac.transpose() * jac;
    const MatD a = attention<double>(layer.heads[head].theta, x);
    const MatD v_abs = x.cwiseAbs() * layer.heads[head].w.cwiseAbs();
    lambda = std::max(lambda, (x.cwiseAbs() * layer.heads[head].theta.cwiseAbs() * x.cwiseAbs().transpose()).maxCoeff());
    for (int row = 0; row < k; ++row) {
      const Eigen::RowVectorXd y_abs = a.row(row) * v_abs;
      MatD g_abs = MatD::Zero(d, d);  // row c: ĝ_c
      for (int l = 0; l < k; ++l)
        g_abs += a(row, l) * (v_abs.row(l) + y_abs).transpose() * x.row(l).cwiseAbs();
      const MatD xx = x.row(row).cwiseAbs().transpose() * x.row(row).cwiseAbs();
      const MatD gg = g_abs.transpose() * g_abs;  // Σ_c ĝ_c[q] ĝ_c[q']
      for (int p = 0; p < d; ++p)
        for (int pp = 0; pp < d; ++pp) majorant.block(p * d, pp * d, d, d) += xx(p, pp) * gg;
    }
  }
  const double factor = 2 * tolerance::polish_operator_relative(3 * d + 3 * k + 12 + n * k * k, lambda) +
                        tolerance::reference_relative_error(256, 4 * n * k * d);
  for (int64_t r = 0; r < dd; ++r)
    for (int64_t c = 0; c < dd; ++c) {
      const double bound = factor * majorant(r, c) * tolerance::bound_evaluation_factor(8 * n * k * k) + 1e-300;
      if (!(std::abs(block(r, c) - reference(r, c).convert_to<double>()) <= bound)) return false;
    }
  return true;
}

// The block with each index pair (p, q) read as (q, p): z = x_l ⊗ x_a instead of x_a ⊗ x_l.
Eigen::MatrixXd swapped_pairs(const Eigen::MatrixXd& block, int d) {
  Eigen::MatrixXd out(block.rows(), block.cols());
  for (int p = 0; p < d; ++p)
    for (int q = 0; q < d; ++q)
      for (int pp = 0; pp < d; ++pp)
        for (int qq = 0; qq < d; ++qq) out(q * d + p, qq * d + pp) = block(p * d + q, pp * d + qq);
  return out;
}
}  // namespace

TEST_CASE("the preconditioner's head blocks equal the MPFR Jacobian's JᵀJ blocks; swapped pairs are rejected",
          "[polish]") {
  const int d = 5;
  const Instance inst = test::generated_instance(d, 2, 2, 6.0, 4);
  const SampleOracle oracle(inst, 7);
  const LabelledBatch batch = oracle.draw(0, 12, 1);
  std::vector<MatD> xs;
  for (int64_t s = 0; s < batch.x.count; ++s) xs.push_back(batch.x.sample(s));
  for (int threads : {1, 2}) {
    const AttentionLinearization lin(inst.layer, xs, threads);
    for (int i = 0; i < 2; ++i) {
      const Eigen::MatrixXd block = lin.head_gram_block(i);
      CHECK(gram_block_agrees(inst.layer, xs, i, block));
      CHECK(!gram_block_agrees(inst.layer, xs, i, swapped_pairs(block, d)));
    }
  }
}

// Conjugate gradients call J·v and Jᵀ·R every iteration; the operator and
// project_out keep their large buffers from call to call (operator.hpp, partial_).
// Whatever a call leaves in them must not reach the next call's answer.
TEST_CASE("the matrix-free operator's reused buffers give every call the bytes of a fresh operator",
          "[polish][determinism]") {
  const int d = 5, k = 2;
  const Instance inst = test::generated_instance(d, k, 2, 6.0, 4);
  const SampleOracle oracle(inst, 7);
  const LabelledBatch batch = oracle.draw(0, 200, 1);  // 4 chunks of kSampleChunk: 3 full, 1 partial
  std::vector<MatD> xs;
  for (int64_t s = 0; s < batch.x.count; ++s) xs.push_back(batch.x.sample(s));
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  const auto random_matrix = [&](int64_t rows, int64_t cols) { return MatD(MatD::NullaryExpr(rows, cols, [&] { return normal(rng); })); };
  const MatD r1 = random_matrix(200 * k, d), r2 = random_matrix(200 * k, d);
  const Eigen::VectorXd v1 = random_matrix(2 * d * d, 1), v2 = random_matrix(2 * d * d, 1);
  const auto vector_bytes = [](const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
  };
  for (int threads : {1, 2}) {
    INFO(threads << " threads");
    const AttentionLinearization used(inst.layer, xs, threads);
    const Eigen::VectorXd first = used.apply_transpose(r1);
    const Eigen::VectorXd again = used.apply_transpose(r2);
    CHECK(vector_bytes(again, AttentionLinearization(inst.layer, xs, threads).apply_transpose(r2)));
    MatD out = used.apply(v1);
    used.apply(v2, out);  // into the storage of J·v1
    CHECK(same_bytes(out, AttentionLinearization(inst.layer, xs, threads).apply(v2)));
    // The tester: an operator that kept the previous call's sums would answer
    // Jᵀ·r1 + Jᵀ·r2, resp. J·v1 + J·v2, and the comparison rejects both.
    CHECK_FALSE(vector_bytes(first + again, again));
    CHECK_FALSE(same_bytes(MatD(used.apply(v1) + out), out));
  }
  // Two processes: each fills only its block before the all-gather (checked after the ranks' threads end).
  std::vector<Eigen::VectorXd> transposed(2);
  std::vector<MatD> applied(2);
  test::run_as_ranks(2, [&](const Processes& p) {
    const AttentionLinearization used(inst.layer, xs, 1, p);
    used.apply_transpose(r1);
    transposed[static_cast<size_t>(p.rank)] = used.apply_transpose(r2);
    applied[static_cast<size_t>(p.rank)] = used.apply(v1);
    used.apply(v2, applied[static_cast<size_t>(p.rank)]);
  });
  const AttentionLinearization fresh(inst.layer, xs, 1);
  for (int r = 0; r < 2; ++r) {
    INFO("2 processes, rank " << r);
    CHECK(vector_bytes(transposed[static_cast<size_t>(r)], fresh.apply_transpose(r2)));
    CHECK(same_bytes(applied[static_cast<size_t>(r)], fresh.apply(v2)));
  }
}

// The preconditioner's head blocks Zᵀ(KZ) have d² columns and k² rows of Z per
// sample; polish_preconditioner_samples keeps at least 4 rows per column where the
// training samples allow, and leaves every case up to d = 64 (k = 2) as it was.
TEST_CASE("the preconditioner's blocks come from at least 4 rows of Z per column, and d ≤ 64 keeps its 4096 samples",
          "[polish]") {
  const PolishOptions o;
  const auto rows_per_column = [](int64_t samples, int d, int k) {
    return static_cast<double>(samples) * k * k / (static_cast<double>(d) * d);
  };
  CHECK(polish_preconditioner_samples(4352, 64, 2, o) == 4096);    // (64,2,2): its committed runs' bytes
  CHECK(polish_preconditioner_samples(1024, 32, 2, o) == 1024);    // all, below the cap
  CHECK(polish_preconditioner_samples(16384, 128, 2, o) == 16384);  // (128,2,2): all, not 4096
  CHECK(polish_preconditioner_samples(1000000, 128, 2, o) == 16384);
  CHECK(polish_preconditioner_samples(1000000, 16, 2, o) == 4096);  // a large noisy final fit keeps the cap
  PolishOptions all = o;
  all.preconditioner_samples = 0;
  CHECK(polish_preconditioner_samples(16384, 128, 2, all) == 16384);
  for (int d : {32, 64, 96, 128, 256})
    for (int k : {2, 3, 4})
      for (int64_t n : {int64_t{256}, int64_t{4096}, int64_t{20000}, int64_t{200000}}) {
        INFO("d " << d << ", k " << k << ", n " << n);
        const int64_t used = polish_preconditioner_samples(n, d, k, o);
        CHECK(used <= n);
        CHECK((used == n || rows_per_column(used, d, k) >= 4));
      }
  // The tester: the earlier rule, min(n, 4096), leaves Z square at (128,2,2).
  CHECK_FALSE(rows_per_column(std::min<int64_t>(16384, 4096), 128, 2) >= 4);
}
