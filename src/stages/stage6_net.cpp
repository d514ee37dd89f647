#include "stages/stage6_net.hpp"

#include "numeric/softmax.hpp"
#include "stages/w_least_squares.hpp"
#include "util/progress.hpp"

#include <Eigen/Cholesky>

#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace mha {

// An algorithm parameter, not a comparison tolerance: a refinement move must
// beat the current validation error by more than its round-off (normal
// equations: ~1e-12 relative); smaller "gains" are noise and would keep the
// search walking along a flat valley at the same step indefinitely.
constexpr double kNetMinimumRelativeGain = 1e-12;

double relative_error(const Layer& layer, const LabelledBatch& batch, int threads) {
  const FastForwardResult fast = FastForward(layer).run(batch.x, threads);
  // A layer the fast path cannot evaluate (e.g. diverged to huge weights) has
  // no measured error: reported as NaN, as for a diverged layer.
  if (!fast.status.ok()) return std::numeric_limits<double>::quiet_NaN();
  const std::vector<double>& f = fast.y;
  double num = 0, den = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    num += (f[i] - batch.y[i]) * (f[i] - batch.y[i]);
    den += batch.y[i] * batch.y[i];
  }
  return den > 0 ? num / den : num;
}

namespace {

// The design block of one candidate Θ on a batch: rows (n, a) = A(X_n)[a,:] X_n.
MatD design_block(const MatD& theta, const std::vector<MatD>& xs) {
  const Eigen::Index k = xs.front().rows(), d = theta.rows();
  MatD block(static_cast<Eigen::Index>(xs.size()) * k, d);
  for (size_t n = 0; n < xs.size(); ++n) {
    const MatD a = softmax_rows<double>(xs[n] * theta * xs[n].transpose());
    block.middleRows(n * k, k) = a * xs[n];
  }
  return block;
}

struct Batch {
  std::vector<MatD> xs;
  MatD y;  // (N·k) × d
};

Batch to_batch(const LabelledBatch& b, int k, int d) {
  Batch out;
  out.y = Eigen::Map<const MatD>(b.y.data(), b.x.count * k, d);
  for (int64_t n = 0; n < b.x.count; ++n) out.xs.push_back(b.x.sample(n));
  return out;
}

// A candidate point's design blocks on the training and validation batches.
struct PointDesign {
  MatD theta, train, validation;
};

PointDesign point_design(const Eigen::VectorXd& x0, const Eigen::MatrixXd& dirs, const Eigen::VectorXd& t,
                         const Batch& train, const Batch& validation, int d) {
  Eigen::VectorXd flat = x0;
  if (dirs.rows() > 0) flat += dirs.transpose() * t;
  PointDesign p;
  p.theta = Eigen::Map<const MatD>(flat.data(), d, d);
  p.train = design_block(p.theta, train.xs);
  p.validation = design_block(p.theta, validation.xs);
  return p;
}

// Relative validation error of a tuple, its W_stack from the normal equations
// (Cholesky: fast, and accurate enough to rank candidates; the returned layer is
// re-solved by QR). +inf when the tuple's design is singular.
double tuple_error(const std::vector<const PointDesign*>& tuple, const Batch& train, const Batch& validation,
                   double validation_norm2) {
  const Eigen::Index m = static_cast<Eigen::Index>(tuple.size()), d = train.y.cols();
  Eigen::MatrixXd gram(m * d, m * d), rhs(m * d, d);
  for (Eigen::Index i = 0; i < m; ++i) {
    rhs.middleRows(i * d, d).noalias() = tuple[i]->train.transpose() * train.y;
    for (Eigen::Index j = i; j < m; ++j) {
      gram.block(i * d, j * d, d, d).noalias() = tuple[i]->train.transpose() * tuple[j]->train;
      if (j != i) gram.block(j * d, i * d, d, d) = gram.block(i * d, j * d, d, d).transpose();
    }
  }
  Eigen::LLT<Eigen::MatrixXd> llt(gram);
  if (llt.info() != Eigen::Success) return std::numeric_limits<double>::infinity();
  const Eigen::MatrixXd w = llt.solve(rhs);
  MatD residual = -validation.y;
  for (Eigen::Index i = 0; i < m; ++i) residual.noalias() += tuple[i]->validation * w.middleRows(i * d, d);
  const double e = residual.squaredNorm() / validation_norm2;
  return std::isfinite(e) ? e : std::numeric_limits<double>::infinity();
}

double binomial(int64_t n, int r) {
  double c = 1;
  for (int i = 0; i < r; ++i) c = c * double(n - i) / double(i + 1);
  return c;
}

// Lowest index among the minima: the selection does not depend on the thread count.
size_t argmin(const std::vector<double>& v) {
  size_t best = 0;
  for (size_t i = 1; i < v.size(); ++i)
    if (v[i] < v[best]) best = i;
  return best;
}

Layer solve_layer(const std::vector<const PointDesign*>& tuple, const Batch& train) {
  const Eigen::Index d = train.y.cols();
  MatD design(train.y.rows(), static_cast<Eigen::Index>(tuple.size()) * d);
  std::vector<MatD> thetas;
  for (size_t i = 0; i < tuple.size(); ++i) {
    design.middleCols(i * d, d) = tuple[i]->train;
    thetas.push_back(tuple[i]->theta);
  }
  const std::optional<MatD> w = solve_w_stack(design, train.y);
  if (!w) throw std::runtime_error("stage 6: the winning tuple's design is rank-deficient");
  return layer_from_stack(thetas, *w);
}

// The training and validation batches and the ball's half-extent T of a net search.
struct NetSetup {
  LabelledBatch train_raw, val_raw;
  Batch train, validation;
  double validation_norm2 = 0;
  double t_max = 0;
};

NetSetup prepare(const SampleSource& source, const Eigen::VectorXd& x0, const Eigen::MatrixXd& dirs, int m,
                 const NetOptions& o) {
  const int k = source.k(), d = source.d(), axes = m - 1;
  if (dirs.rows() != axes || (axes > 0 && dirs.cols() != x0.size()) || x0.size() != int64_t{d} * d)
    throw std::invalid_argument("stage 6: hull directions must be (m−1) × d²");
  const int64_t n_train = o.train_samples > 0 ? o.train_samples : std::max<int64_t>(64, 8 * int64_t{m} * d / k);
  const int64_t n_val = o.validation_samples > 0 ? o.validation_samples : n_train;
  NetSetup s;
  s.train_raw = source.draw(o.first_sample, n_train, o.threads);
  s.val_raw = source.draw(o.first_sample + n_train, n_val, o.threads);
  if (s.train_raw.x.count * k < int64_t{m} * d || s.val_raw.x.count == 0)
    throw std::runtime_error("stage 6: too few samples for the least squares (need N·k ≥ m·d)");
  s.train = to_batch(s.train_raw, k, d);
  s.validation = to_batch(s.val_raw, k, d);
  s.validation_norm2 = std::max(s.validation.y.squaredNorm(), 1e-300);
  s.t_max = std::sqrt(std::max(o.radius * o.radius - x0.squaredNorm(), 0.0));
  if (axes > 0 && !(s.t_max > 0)) throw std::runtime_error("stage 6: the hull point lies outside the ball of radius R");
  return s;
}

// Level 1: the exhaustive net, every unordered tuple of distinct grid points ranked.
struct Level1 {
  int grid_per_axis = 0;
  int64_t grid_points = 0;
  double resolution = 0;
  std::vector<Eigen::VectorXd> coords;
  std::vector<PointDesign> points;
  std::vector<std::vector<int64_t>> tuples;
  std::vector<double> errors;
};

Level1 exhaustive_level(const Eigen::VectorXd& x0, const Eigen::MatrixXd& dirs, int m, const NetSetup& setup,
                        const NetOptions& o, int d) {
  const int axes = m - 1;
  Level1 l;
  int g = 2;
  if (axes > 0)
    while (binomial(static_cast<int64_t>(std::pow(g + 1, axes)), m) <= double(o.max_tuples)) ++g;
  else g = 1;
  l.grid_per_axis = g;
  l.grid_points = axes > 0 ? static_cast<int64_t>(std::llround(std::pow(g, axes))) : 1;
  l.resolution = axes > 0 ? 2 * setup.t_max / (g - 1) : 0;
  l.points.resize(l.grid_points);
  l.coords.assign(l.grid_points, Eigen::VectorXd::Zero(axes));
  for (int64_t p = 0; p < l.grid_points; ++p) {
    int64_t rest = p;
    for (int j = 0; j < axes; ++j) {
      l.coords[p](j) = -setup.t_max + l.resolution * double(rest % g);
      rest /= g;
    }
  }
  Progress progress("stage 6: net", l.grid_points);
#pragma omp parallel for schedule(dynamic) num_threads(o.threads)
  for (int64_t p = 0; p < l.grid_points; ++p)
    l.points[p] = point_design(x0, dirs, l.coords[p], setup.train, setup.validation, d);
  progress.update(l.grid_points);

  if (m == 1) l.tuples.push_back({0});
  else {
    std::vector<int64_t> idx(m);
    for (int i = 0; i < m; ++i) idx[i] = i;
    while (true) {
      l.tuples.push_back(idx);
      int i = m - 1;
      while (i >= 0 && idx[i] == l.grid_points - m + i) --i;
      if (i < 0) break;
      ++idx[i];
      for (int j = i + 1; j < m; ++j) idx[j] = idx[j - 1] + 1;
    }
  }
  l.errors.resize(l.tuples.size());
#pragma omp parallel for schedule(dynamic, 16) num_threads(o.threads)
  for (size_t t = 0; t < l.tuples.size(); ++t) {
    std::vector<const PointDesign*> tuple;
    for (int64_t p : l.tuples[t]) tuple.push_back(&l.points[p]);
    l.errors[t] = tuple_error(tuple, setup.train, setup.validation, setup.validation_norm2);
  }
  return l;
}

}  // namespace

NetCandidates net_candidates(const SampleSource& source, const Eigen::VectorXd& x0, const Eigen::MatrixXd& dirs, int m,
                             const NetOptions& o) {
  const NetSetup setup = prepare(source, x0, dirs, m, o);
  Level1 l = exhaustive_level(x0, dirs, m, setup, o, source.d());
  NetCandidates c;
  for (const PointDesign& p : l.points) c.thetas.push_back(p.theta);
  c.tuples = std::move(l.tuples);
  c.errors = std::move(l.errors);
  c.winner = argmin(c.errors);
  c.train_samples = setup.train_raw.x.count;
  c.validation_samples = setup.val_raw.x.count;
  c.first_sample = o.first_sample;
  return c;
}

NetResult search_net(const SampleSource& source, const Eigen::VectorXd& x0, const Eigen::MatrixXd& dirs, int m,
                     const NetOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const int d = source.d(), axes = m - 1;
  const NetSetup setup = prepare(source, x0, dirs, m, o);
  const Batch& train = setup.train;
  const Batch& validation = setup.validation;
  const double validation_norm2 = setup.validation_norm2;
  const LabelledBatch& val_raw = setup.val_raw;
  const double t_max = setup.t_max;
  NetResult result;
  NetReport& rep = result.report;
  rep.samples = setup.train_raw.x.count + setup.val_raw.x.count;

  // Level 1: the exhaustive net.
  Level1 level1 = exhaustive_level(x0, dirs, m, setup, o, d);
  rep.grid_per_axis = level1.grid_per_axis;
  rep.grid_points = level1.grid_points;
  rep.coarse_resolution = level1.resolution;
  std::vector<PointDesign>& points = level1.points;
  const std::vector<Eigen::VectorXd>& coords = level1.coords;
  const std::vector<std::vector<int64_t>>& tuples = level1.tuples;
  const std::vector<double>& errors = level1.errors;
  rep.tuples_exhaustive = static_cast<int64_t>(tuples.size());
  const size_t best = argmin(errors);
  if (!std::isfinite(errors[best])) throw std::runtime_error("stage 6: every candidate tuple has a singular design");
  rep.coarse_validation_error = errors[best];
  std::vector<Eigen::VectorXd> current;
  std::vector<PointDesign> current_designs;
  for (int64_t p : tuples[best]) {
    current.push_back(coords[p]);
    current_designs.push_back(points[p]);
  }
  {
    std::vector<const PointDesign*> tuple;
    for (const auto& p : current_designs) tuple.push_back(&p);
    result.coarse_layer = solve_layer(tuple, train);
  }
  points.clear();

  // Level 2: pattern search from the winner, steps {−h, 0, +h} in every coordinate.
  double current_error = errors[best];
  double h = rep.coarse_resolution / 2;
  const int moves_per_head = static_cast<int>(std::llround(std::pow(3, axes)));
  while (axes > 0 && h >= o.final_step * t_max) {
    if (rep.refine_iterations == o.max_refine_iterations) {
      rep.refine_capped = true;
      break;
    }
    ++rep.refine_iterations;
    // Moved copies of every head: designs[i * moves_per_head + v].
    std::vector<PointDesign> moved(static_cast<size_t>(m) * moves_per_head);
#pragma omp parallel for schedule(dynamic) num_threads(o.threads)
    for (int64_t c = 0; c < int64_t{m} * moves_per_head; ++c) {
      const int i = static_cast<int>(c / moves_per_head);
      int v = static_cast<int>(c % moves_per_head);
      Eigen::VectorXd t = current[i];
      for (int j = 0; j < axes; ++j, v /= 3) t(j) += h * double(v % 3 - 1);
      moved[c] = point_design(x0, dirs, t, train, validation, d);
    }
    const int64_t combos = static_cast<int64_t>(std::llround(std::pow(moves_per_head, m)));
    std::vector<double> errs(combos);
#pragma omp parallel for schedule(dynamic, 8) num_threads(o.threads)
    for (int64_t c = 0; c < combos; ++c) {
      std::vector<const PointDesign*> tuple;
      int64_t rest = c;
      for (int i = 0; i < m; ++i, rest /= moves_per_head) tuple.push_back(&moved[i * moves_per_head + rest % moves_per_head]);
      errs[c] = tuple_error(tuple, train, validation, validation_norm2);
    }
    rep.tuples_refine += combos;
    const size_t c_best = argmin(errs);
    if (errs[c_best] < current_error * (1 - kNetMinimumRelativeGain)) {
      current_error = errs[c_best];
      int64_t rest = static_cast<int64_t>(c_best);
      for (int i = 0; i < m; ++i, rest /= moves_per_head) {
        current_designs[i] = moved[i * moves_per_head + rest % moves_per_head];
        int v = static_cast<int>(rest % moves_per_head);
        for (int j = 0; j < axes; ++j, v /= 3) current[i](j) += h * double(v % 3 - 1);
      }
    } else {
      h /= 2;
    }
  }
  rep.final_resolution = axes > 0 ? 2 * h : 0;
  std::vector<const PointDesign*> tuple;
  for (const auto& p : current_designs) tuple.push_back(&p);
  result.layer = solve_layer(tuple, train);
  rep.validation_error = relative_error(result.layer, val_raw, o.threads);
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace mha
