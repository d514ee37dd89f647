#include "test_tolerances.hpp"
#include "instances.hpp"
#include "thread_ranks.hpp"
#include "model/reference.hpp"
#include "stages/stage6/net.hpp"
#include "stages/stage6/w_least_squares.hpp"

#include <catch2/catch.hpp>

#include <thread>

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

namespace {
// A (4, 2, 2) instance whose hull is axis-aligned, so that every grid point is
// exact in double: x0 = 3 e₂, u = e₁ (Θ's (1,0) and (0,0) entries), R = 5, so
// T = √(R² − ‖x0‖²) = 4 exactly, and the heads are Θ_i = x0 + t_i u.
struct AxisHull {
  Instance inst;
  Eigen::VectorXd x0, u;
};

AxisHull axis_hull(double t0, double t1) {
  AxisHull h{test::generated_instance(4, 2, 2, 2.0, 3), Eigen::VectorXd::Zero(16), Eigen::VectorXd::Zero(16)};
  h.x0(1) = 3;
  h.u(0) = 1;
  h.inst.layer.heads[0].theta = Eigen::Map<const MatD>(Eigen::VectorXd(h.x0 + t0 * h.u).data(), 4, 4);
  h.inst.layer.heads[1].theta = Eigen::Map<const MatD>(Eigen::VectorXd(h.x0 + t1 * h.u).data(), 4, 4);
  return h;
}

// The coordinate t of Θ along u (Θ = x0 + t u exactly), or NaN when Θ is off the hull.
double hull_coordinate(const MatD& theta, const AxisHull& h) {
  const Eigen::VectorXd f = Eigen::Map<const Eigen::VectorXd>(theta.data(), theta.size());
  const double t = f(0);
  return (f - h.x0 - t * h.u).cwiseAbs().maxCoeff() == 0 ? t : NAN;
}
}  // namespace

TEST_CASE("the net's grid, resolution, counts and refinement steps on a hand-computed hull", "[stage6][hardening]") {
  NetOptions o;
  o.radius = 5;
  // C(G, 2) ≤ 10 allows G = 5 points per axis (C(6, 2) = 15 does not): the grid
  // is −T + j · 2T/(G − 1) = −4, −2, 0, 2, 4, spacing 2.
  o.max_tuples = 10;
  // Heads on grid points −2 and 2: the exhaustive winner is exact, and no move
  // of ±h improves it, so the refinement only halves h from spacing/2 = 1 while
  // h ≥ final_step · T = 4e-7: h = 2⁰ … 2⁻²¹ (22 iterations), stopping at 2⁻²².
  {
    const AxisHull h = axis_hull(-2, 2);
    const NetResult r = search_net(SampleOracle(h.inst, 1), h.x0, h.u.transpose(), 2, o);
    CHECK(r.report.grid_per_axis == 5);
    CHECK(r.report.grid_points == 5);
    CHECK(r.report.coarse_resolution == 2.0);
    CHECK(r.report.tuples_exhaustive == 10);
    CHECK(hull_coordinate(r.coarse_layer.heads[0].theta, h) == -2.0);
    CHECK(hull_coordinate(r.coarse_layer.heads[1].theta, h) == 2.0);
    CHECK(r.report.refine_iterations == 22);
    CHECK(r.report.tuples_refine == 22 * 9);  // 3 moves per head, 2 heads
    CHECK(r.report.final_resolution == std::ldexp(1.0, -21));  // 2h at the last h = 2⁻²²
    CHECK_FALSE(r.report.refine_capped);
    CHECK(hull_coordinate(r.layer.heads[0].theta, h) == -2.0);
    CHECK(hull_coordinate(r.layer.heads[1].theta, h) == 2.0);
  }
  // A head at 1, between grid points 0 and 2: the first refinement iteration
  // (h = 1) moves it there exactly, without halving, then 22 halvings follow.
  {
    const AxisHull h = axis_hull(-2, 1);
    const NetResult r = search_net(SampleOracle(h.inst, 1), h.x0, h.u.transpose(), 2, o);
    CHECK(r.report.grid_per_axis == 5);
    CHECK(hull_coordinate(r.coarse_layer.heads[0].theta, h) == -2.0);
    const double coarse_second = hull_coordinate(r.coarse_layer.heads[1].theta, h);
    CHECK((coarse_second == 0.0 || coarse_second == 2.0));
    CHECK(r.report.refine_iterations == 23);
    CHECK(r.report.tuples_refine == 23 * 9);
    CHECK(r.report.final_resolution == std::ldexp(1.0, -21));
    CHECK(hull_coordinate(r.layer.heads[0].theta, h) == -2.0);
    CHECK(hull_coordinate(r.layer.heads[1].theta, h) == 1.0);
    CHECK(r.report.validation_error < r.report.coarse_validation_error);
  }
}

TEST_CASE("relative_error is Σ‖F − Y‖² / Σ‖Y‖² of the fast pass", "[stage6][hardening]") {
  const Instance inst = test::generated_instance(6, 2, 2, 3.0, 4);
  LabelledBatch batch = SampleOracle(inst, 2).draw(0, 20, 1);
  CHECK(relative_error(inst.layer, batch, 1) == 0.0);  // noiseless labels of the same layer
  // Labels doubled (exact in double): Σ‖F − 2F‖² / Σ‖2F‖² = 1/4 exactly.
  for (double& v : batch.y) v *= 2;
  CHECK(relative_error(inst.layer, batch, 2) == 0.25);
}

TEST_CASE("relative_error shared by 2 and 3 processes gives the bytes of one process", "[stage6][determinism]") {
  const Instance inst = test::generated_instance(6, 2, 2, 3.0, 4);
  const LabelledBatch batch = SampleOracle(inst, 2).draw(0, 1001, 1);
  Layer other = inst.layer;
  other.heads[0].w *= 1.01;  // a layer with a nonzero error
  const double one = relative_error(other, batch, 1);
  REQUIRE(one > 0);
  for (int size : {2, 3}) {
    std::vector<double> shared(static_cast<size_t>(size));
    test::run_as_ranks(size, [&](const Processes& p) {
      shared[static_cast<size_t>(p.rank)] = relative_error(other, batch, 1, p);
    });
    for (double e : shared) CHECK(e == one);
  }
  // The tester: a process that sums only its own block's terms gets another value.
  Processes alone;
  alone.size = 2;
  alone.all_gather = [](const std::vector<double>& mine) { return mine; };
  CHECK(relative_error(other, batch, 1, alone) != one);
}

TEST_CASE("layer_from_stack splits W_stack into the heads' W_i in order", "[stage6][hardening]") {
  const MatD t0 = MatD::Constant(2, 2, 1.0), t1 = MatD::Constant(2, 2, 2.0);
  MatD stack(4, 2);
  stack << 1, 2, 3, 4, 5, 6, 7, 8;
  const Layer l = layer_from_stack({t0, t1}, stack);
  REQUIRE(l.m() == 2);
  CHECK((l.heads[0].theta == t0));
  CHECK((l.heads[1].theta == t1));
  CHECK((l.heads[0].w == stack.topRows(2)));
  CHECK((l.heads[1].w == stack.bottomRows(2)));
}

TEST_CASE("head by head, the refinement reaches the hand-computed hull's heads with 2·2 moves per sweep",
          "[stage6][hardening]") {
  NetOptions o;
  o.radius = 5;
  o.max_tuples = 10;     // the grid −4, −2, 0, 2, 4 as above
  o.max_joint_moves = 1;  // 9 joint tuples > 1: head by head even at m = 2
  {
    // Exact winner: every sweep tries ±h for each head, none improves, h halves
    // from 1 while h ≥ 4e-7: 22 sweeps of 2 heads × 2 moves.
    const AxisHull h = axis_hull(-2, 2);
    const NetResult r = search_net(SampleOracle(h.inst, 1), h.x0, h.u.transpose(), 2, o);
    CHECK(r.report.refine_head_wise);
    CHECK_FALSE(r.report.grid_centred);  // one axis: the interval's vertices, as the joint search uses
    CHECK(r.report.refine_iterations == 22);
    CHECK(r.report.tuples_refine == 22 * 4);
    CHECK(hull_coordinate(r.layer.heads[0].theta, h) == -2.0);
    CHECK(hull_coordinate(r.layer.heads[1].theta, h) == 2.0);
  }
  {
    // The head at 1 is one step h = 1 from the coarse winner's 0 or 2: the first
    // sweep moves it there, the pattern move repeats the step (to 2 or 0: worse,
    // one tuple), then 22 halvings.
    const AxisHull h = axis_hull(-2, 1);
    const NetResult r = search_net(SampleOracle(h.inst, 1), h.x0, h.u.transpose(), 2, o);
    CHECK(r.report.refine_iterations == 23);
    CHECK(r.report.tuples_refine == 23 * 4 + 1);
    CHECK(r.report.refine_extrapolations == 0);
    CHECK(hull_coordinate(r.layer.heads[0].theta, h) == -2.0);
    CHECK(hull_coordinate(r.layer.heads[1].theta, h) == 1.0);
    CHECK(r.report.validation_error < r.report.coarse_validation_error);
  }
}

TEST_CASE("the ball's cell centres: hand-computed grids", "[stage6][hardening]") {
  // G = 2, two axes, T = 1: centres ±½, every cell touches the origin.
  const auto g2 = ball_cell_centres(2, 2, 1.0);
  REQUIRE(g2.size() == 4);
  CHECK(g2[0] == Eigen::Vector2d(-0.5, -0.5));
  CHECK(g2[1] == Eigen::Vector2d(0.5, -0.5));
  CHECK(g2[3] == Eigen::Vector2d(0.5, 0.5));
  // G = 4, T = 4: side 2, centres ±1, ±3. A corner cell [2, 4]² is nearest the
  // origin at (2, 2), ‖·‖ = 2.83 ≤ 4: all 16 kept.
  CHECK(ball_cell_centres(2, 4, 4.0).size() == 16);
  // G = 7 (the learner's m = 3 default), T = 7: side 2, centres 0, ±2, ±4, ±6. The
  // corner cells [5, 7]² are nearest at (5, 5), ‖·‖ = 7.07 > 7: dropped; (6, 4)'s
  // cell at (5, 3), ‖·‖ = 5.83: kept. 49 − 4 = 45.
  const auto g7 = ball_cell_centres(2, 7, 7.0);
  CHECK(g7.size() == 45);
  for (const auto& c : g7) CHECK(c.cwiseAbs().minCoeff() < 6.0);
  // Three axes, G = 4, T = 4: the 8 corner cells [2, 4]³ are nearest at (2, 2, 2),
  // ‖·‖ = 3.46 ≤ 4, kept; G = 6, T = 6 (side 2): corners at (4, 4, 4), 6.93 > 6 dropped,
  // and (5, 5, 3)'s cells at (4, 4, 2), exactly 6: kept (the closed cell meets the ball).
  CHECK(ball_cell_centres(3, 4, 4.0).size() == 64);
  const auto g6 = ball_cell_centres(3, 6, 6.0);
  CHECK(std::count_if(g6.begin(), g6.end(), [](const Eigen::VectorXd& c) { return c.cwiseAbs().minCoeff() == 5.0; }) == 0);
  CHECK(std::count_if(g6.begin(), g6.end(), [](const Eigen::VectorXd& c) {
          return c.cwiseAbs().maxCoeff() == 5.0 && c.cwiseAbs().sum() == 13.0;
        }) == 24);  // the 24 cells with |c| a permutation of (5, 5, 3)
  CHECK_THROWS_AS(ball_cell_centres(0, 3, 1.0), std::invalid_argument);
}

namespace {
// The exact hull of an instance: its heads' mean as x0's base, orthonormal directions by QR.
struct ExactHull {
  Eigen::VectorXd x0;
  Eigen::MatrixXd dirs;
};
ExactHull exact_hull(const Instance& inst) {
  const int m = inst.layer.m();
  const Eigen::Index n = inst.layer.heads[0].theta.size();
  Eigen::MatrixXd spread(n, m - 1);
  for (int i = 1; i < m; ++i) spread.col(i - 1) = flat(inst.layer.heads[i].theta) - flat(inst.layer.heads[0].theta);
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(spread);
  ExactHull h;
  h.dirs = (qr.householderQ() * Eigen::MatrixXd::Identity(n, m - 1)).transpose();
  const Eigen::VectorXd t0 = flat(inst.layer.heads[0].theta);
  h.x0 = t0 - h.dirs.transpose() * (h.dirs * t0);
  return h;
}

bool same_bytes(const Layer& a, const Layer& b) {
  if (a.m() != b.m()) return false;
  for (int i = 0; i < a.m(); ++i)
    if (a.heads[i].theta != b.heads[i].theta || a.heads[i].w != b.heads[i].w) return false;
  return true;
}
}  // namespace

TEST_CASE("three heads on the exact hull: the pruned net refined head by head recovers Θ and W", "[stage6]") {
  const Instance inst = test::generated_instance(10, 2, 3, 3.0, 4);
  const ExactHull hull = exact_hull(inst);
  const SampleOracle oracle(inst, 3);
  NetOptions o;
  o.threads = 2;  // the default budget: G = 7, 45 of 49 cells (C(45, 3) = 14190 tuples)
  const NetResult r = search_net(oracle, hull.x0, hull.dirs, 3, o);
  INFO("coarse validation " << r.report.coarse_validation_error << ", final " << r.report.validation_error);
  CHECK(r.report.grid_centred);
  CHECK(r.report.refine_head_wise);
  CHECK(r.report.grid_per_axis == 7);
  CHECK(r.report.grid_points == 45);  // the 4 corner cells miss the ball
  CHECK(r.report.tuples_exhaustive == 14190);
  // 3 heads × 8 moves per sweep, plus the pattern moves' tuples (each accepted one is a tuple).
  CHECK(r.report.tuples_refine >= r.report.refine_iterations * 3 * 8 + r.report.refine_extrapolations);
  CHECK_FALSE(r.report.refine_capped);
  CHECK(max_theta_error(r.layer, inst.layer) < tolerance::net_recovery_target());
  CHECK(r.report.validation_error < tolerance::net_validation_target());
}

TEST_CASE("stage 6 shared by 3 ranks gives the bytes of one process, and the clock decision is rank 0's", "[stage6]") {
  const Instance inst = test::generated_instance(8, 2, 3, 3.0, 6);
  const ExactHull hull = exact_hull(inst);
  const SampleOracle oracle(inst, 2);
  NetOptions o;
  o.max_tuples = 300;
  const NetResult single = search_net(oracle, hull.x0, hull.dirs, 3, o);
  const NetCandidates candidates = net_candidates(oracle, hull.x0, hull.dirs, 3, o);

  constexpr int kRanks = 3;
  test::ThreadGather gather(kRanks);
  std::vector<NetResult> shared(kRanks);
  std::vector<NetCandidates> shared_candidates(kRanks);
  std::vector<int> clock(kRanks);
  std::vector<std::thread> ranks;
  for (int r = 0; r < kRanks; ++r)
    ranks.emplace_back([&, r] {
      NetOptions ro = o;
      ro.processes.rank = r;
      ro.processes.size = kRanks;
      ro.processes.all_gather = [&, r](const std::vector<double>& mine) { return gather.gather(r, mine); };
      shared[r] = search_net(oracle, hull.x0, hull.dirs, 3, ro);
      shared_candidates[r] = net_candidates(oracle, hull.x0, hull.dirs, 3, ro);
      clock[r] = first_process_value(ro.processes, r != 0);  // every rank but 0 says "out of time"
    });
  for (auto& t : ranks) t.join();
  for (int r = 0; r < kRanks; ++r) {
    INFO("rank " << r);
    CHECK(same_bytes(shared[r].layer, single.layer));
    CHECK(same_bytes(shared[r].coarse_layer, single.coarse_layer));
    CHECK(shared[r].report.tuples_refine == single.report.tuples_refine);
    CHECK(shared[r].report.refine_iterations == single.report.refine_iterations);
    CHECK(shared[r].report.validation_error == single.report.validation_error);
    CHECK(shared_candidates[r].errors == candidates.errors);
    CHECK(shared_candidates[r].winner == candidates.winner);
    CHECK(clock[r] == 0);
  }
  // A process count without an all-gather is refused.
  NetOptions bad = o;
  bad.processes.size = 2;
  CHECK_THROWS_AS(search_net(oracle, hull.x0, hull.dirs, 3, bad), std::invalid_argument);
}
