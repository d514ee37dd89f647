// Stage 6's grid pruned to the ball (proofs/net_pruning.md): the centres of the
// cells of [−T, T]^a that meet the ball ‖t‖ ≤ T cover the ball with half a cell
// side in every coordinate, and every kept cell meets the ball. On dyadic grids
// (T and G powers of two) every quantity is exact, so the claim is checked as
// stated, without a tolerance.
#include "property.hpp"
#include "stages/stage6/net.hpp"

#include <cmath>

using namespace mha;

namespace {
struct Grid {
  int axes, g;
  double t_max;
};

rc::Gen<Grid> dyadic_grid(int min_axes) {
  return rc::gen::exec([min_axes] {
    const int axes = *rc::gen::inRange(min_axes, 5).as("axes");
    const int g = 1 << *rc::gen::inRange(min_axes > 1 ? 1 : 0, 5).as("log2 G");
    const double t_max = std::ldexp(1.0, *rc::gen::inRange(-3, 6).as("log2 T"));
    return Grid{axes, g, t_max};
  });
}

// A point of the ball: a Gaussian direction scaled to radius T·u^{1/a} (uniform
// in the ball), or to T itself (on the sphere), clipped into the ball if its
// norm rounded above T.
Eigen::VectorXd point_in_ball(const Grid& grid) {
  Eigen::VectorXd t(grid.axes);
  for (int j = 0; j < grid.axes; ++j) t(j) = *rc::gen::inRange(-1000000, 1000001) / 1e6;
  RC_PRE(t.norm() > 1e-3);
  const bool on_sphere = *rc::gen::arbitrary<bool>();
  const double u = *rc::gen::inRange(0, 1000001) / 1e6;
  t *= (on_sphere ? grid.t_max : grid.t_max * std::pow(u, 1.0 / grid.axes)) / t.norm();
  while (t.squaredNorm() > grid.t_max * grid.t_max) t *= 1 - 1e-15;
  return t;
}

// The largest coordinate distance from t to its nearest centre (∞-norm).
double cover_distance(const std::vector<Eigen::VectorXd>& centres, const Eigen::VectorXd& t) {
  double best = INFINITY;
  for (const auto& c : centres) best = std::min(best, (t - c).cwiseAbs().maxCoeff());
  return best;
}

void check_cover(const Grid& grid, const std::vector<Eigen::VectorXd>& centres) {
  const double side = 2 * grid.t_max / grid.g;
  for (int i = 0; i < 8; ++i) {
    const Eigen::VectorXd t = point_in_ball(grid);
    RC_ASSERT(cover_distance(centres, t) <= side / 2);
  }
}

// The plausible wrong rule: keep the centres that lie inside the ball.
std::vector<Eigen::VectorXd> centres_inside_ball(const Grid& grid) {
  std::vector<Eigen::VectorXd> kept;
  const double side = 2 * grid.t_max / grid.g;
  int64_t cells = 1;
  for (int j = 0; j < grid.axes; ++j) cells *= grid.g;
  for (int64_t p = 0; p < cells; ++p) {
    Eigen::VectorXd c(grid.axes);
    int64_t rest = p;
    for (int j = 0; j < grid.axes; ++j, rest /= grid.g) c(j) = -grid.t_max + side * (double(rest % grid.g) + 0.5);
    if (c.squaredNorm() <= grid.t_max * grid.t_max) kept.push_back(c);
  }
  return kept;
}
}  // namespace

TEST_CASE("the ball's cell centres cover the ball within half a side, and every kept cell meets it",
          "[property][stage6]") {
  mha::test::property("dyadic grids, 1-4 axes, G ≤ 16", 200, [] {
    const Grid grid = *dyadic_grid(1);
    const std::vector<Eigen::VectorXd> centres = ball_cell_centres(grid.axes, grid.g, grid.t_max);
    RC_CLASSIFY(centres.size() < static_cast<size_t>(std::pow(grid.g, grid.axes)), "some cells pruned");
    const double side = 2 * grid.t_max / grid.g;
    for (const auto& c : centres) {
      // The cell's nearest point to the origin, clamped coordinate by coordinate, lies in the ball.
      const Eigen::VectorXd nearest = c.array().sign() * (c.array().abs() - side / 2).max(0.0);
      RC_ASSERT(nearest.squaredNorm() <= grid.t_max * grid.t_max);
    }
    check_cover(grid, centres);
  });
}

TEST_CASE("test of the tester: keeping only the centres inside the ball leaves points of the ball uncovered",
          "[property][stage6][tester]") {
  mha::test::property_rejects("centres inside the ball", 200, [] {
    const Grid grid = *dyadic_grid(2);
    check_cover(grid, centres_inside_ball(grid));
  });
}
