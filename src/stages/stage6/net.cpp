#include "stages/stage6/net.hpp"

#include "numeric/softmax.hpp"
#include "stages/stage6/w_least_squares.hpp"
#include "util/progress.hpp"

#include <Eigen/Cholesky>

#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

namespace mha {

// An algorithm parameter, not a comparison tolerance: a refinement move must
// beat the current validation error by more than its round-off (normal
// equations: ~1e-12 relative); smaller "gains" are noise and would keep the
// search walking along a flat valley at the same step indefinitely.
constexpr double kNetMinimumRelativeGain = 1e-12;

double relative_error_of_block(const Layer& layer, const InputBatch& x, int64_t first, int64_t end, const double* y,
                               int threads, const Processes& processes) {
  const int64_t per = int64_t{x.k} * layer.d(), entries = (end - first) * per;
  std::vector<double> f(static_cast<size_t>(entries));
  const FastForwardStatus status = FastForward(layer).run(x, first, end, f.data(), threads);
  // Per entry (f − y)² and y², so that the sums below run over every process's
  // entries in sample order, the terms of one process's loop. A layer the fast
  // path cannot evaluate (e.g. diverged to huge weights) has no measured error: a
  // NaN term makes it NaN, as for a diverged layer.
  std::vector<double> terms(2 * f.size());
  for (size_t i = 0; i < f.size(); ++i) {
    terms[2 * i] = (f[i] - y[i]) * (f[i] - y[i]);
    terms[2 * i + 1] = y[i] * y[i];
  }
  if (!status.ok() && !terms.empty()) terms[0] = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> all = processes.gather(terms);
  double num = 0, den = 0;
  for (size_t i = 0; i < all.size(); i += 2) {
    num += all[i];
    den += all[i + 1];
  }
  if (std::isnan(num)) return std::numeric_limits<double>::quiet_NaN();
  return den > 0 ? num / den : num;
}

double relative_error(const Layer& layer, const LabelledBatch& batch, int threads, const Processes& processes) {
  const auto [first, end] = processes.share(batch.x.count);
  const int64_t per = int64_t{batch.x.k} * layer.d();
  return relative_error_of_block(layer, batch.x, first, end, batch.y.data() + first * per, threads, processes);
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
  out.xs = b.x.samples();
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

// A tuple's normal equations: the Gram matrix DᵀD (md × md, blocks P_iᵀP_j of
// the heads' training designs) and DᵀY (md × d).
struct NormalEquations {
  Eigen::MatrixXd gram, rhs;
};

NormalEquations assemble(const std::vector<const PointDesign*>& tuple, const Batch& train) {
  const Eigen::Index m = static_cast<Eigen::Index>(tuple.size()), d = train.y.cols();
  NormalEquations s{Eigen::MatrixXd(m * d, m * d), Eigen::MatrixXd(m * d, d)};
  for (Eigen::Index i = 0; i < m; ++i) {
    s.rhs.middleRows(i * d, d).noalias() = tuple[i]->train.transpose() * train.y;
    for (Eigen::Index j = i; j < m; ++j) {
      s.gram.block(i * d, j * d, d, d).noalias() = tuple[i]->train.transpose() * tuple[j]->train;
      if (j != i) s.gram.block(j * d, i * d, d, d) = s.gram.block(i * d, j * d, d, d).transpose();
    }
  }
  return s;
}

// Relative validation error of the tuple whose normal equations are `s` and
// whose heads' validation designs are `validation_blocks`, W_stack from the
// normal equations (Cholesky: fast, and accurate enough to rank candidates; the
// returned layer is re-solved by QR). +inf when the design is singular.
double system_error(const NormalEquations& s, const std::vector<const MatD*>& validation_blocks,
                    const Batch& validation, double validation_norm2) {
  const Eigen::Index d = validation.y.cols();
  Eigen::LLT<Eigen::MatrixXd> llt(s.gram);
  if (llt.info() != Eigen::Success) return std::numeric_limits<double>::infinity();
  const Eigen::MatrixXd w = llt.solve(s.rhs);
  MatD residual = -validation.y;
  for (size_t i = 0; i < validation_blocks.size(); ++i)
    residual.noalias() += *validation_blocks[i] * w.middleRows(static_cast<Eigen::Index>(i) * d, d);
  const double e = residual.squaredNorm() / validation_norm2;
  return std::isfinite(e) ? e : std::numeric_limits<double>::infinity();
}

std::vector<const MatD*> validation_blocks(const std::vector<const PointDesign*>& tuple) {
  std::vector<const MatD*> v;
  for (const PointDesign* p : tuple) v.push_back(&p->validation);
  return v;
}

double tuple_error(const std::vector<const PointDesign*>& tuple, const Batch& train, const Batch& validation,
                   double validation_norm2) {
  return system_error(assemble(tuple, train), validation_blocks(tuple), validation, validation_norm2);
}

// f(i) for every i in [0, n): this process's contiguous block of indices, on
// `threads` threads, then every process's block gathered in rank order. f must
// be a pure function of i, so the vector does not depend on the split.
template <class F>
std::vector<double> evaluate_shared(int64_t n, const Processes& procs, int threads, int chunk, const F& f) {
  const int64_t lo = procs.share(n).first, hi = procs.share(n).second;
  std::vector<double> mine(static_cast<size_t>(hi - lo));
#pragma omp parallel for schedule(dynamic, chunk) num_threads(threads)
  for (int64_t i = lo; i < hi; ++i) mine[i - lo] = f(i);
  if (procs.size == 1) return mine;
  std::vector<double> all = procs.all_gather(mine);
  if (static_cast<int64_t>(all.size()) != n) throw std::runtime_error("stage 6: the processes' shares do not add up");
  return all;
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

std::optional<Layer> solve_layer(const std::vector<const PointDesign*>& tuple, const Batch& train) {
  const Eigen::Index d = train.y.cols();
  MatD design(train.y.rows(), static_cast<Eigen::Index>(tuple.size()) * d);
  std::vector<MatD> thetas;
  for (size_t i = 0; i < tuple.size(); ++i) {
    design.middleCols(i * d, d) = tuple[i]->train;
    thetas.push_back(tuple[i]->theta);
  }
  const std::optional<MatD> w = solve_w_stack(design, train.y);
  if (!w) return std::nullopt;
  return layer_from_stack(thetas, *w);
}

// The training and validation batches and the ball's half-extent T of a net search.
struct NetSetup {
  LabelledBatch train_raw, val_raw;
  Batch train, validation;
  double validation_norm2 = 0;
  double t_max = 0;
  int axes = 0;         // the grid's dimension: m − 1 (the hull) or m (the span)
  std::string failure;  // why the net cannot run ("" when it can)
};

NetSetup prepare(const SampleSource& source, const Eigen::VectorXd& x0, const Eigen::MatrixXd& dirs, int m,
                 const NetOptions& o) {
  const int k = source.k(), d = source.d();
  const int axes = static_cast<int>(dirs.rows());
  if ((axes != m - 1 && axes != m) || (axes > 0 && dirs.cols() != x0.size()) || x0.size() != int64_t{d} * d)
    throw std::invalid_argument("stage 6: the directions must be (m−1) × d² (the hull) or m × d² (the span)");
  const int64_t n_train = o.train_samples > 0 ? o.train_samples : std::max<int64_t>(64, 8 * int64_t{m} * d / k);
  const int64_t n_val = o.validation_samples > 0 ? o.validation_samples : n_train;
  NetSetup s;
  s.axes = axes;
  s.train_raw = source.draw(o.first_sample, n_train, o.threads);
  s.val_raw = source.draw(o.first_sample + n_train, n_val, o.threads);
  if (s.train_raw.x.count * k < int64_t{m} * d || s.val_raw.x.count == 0) {
    s.failure = "stage 6: too few samples for the least squares (need N·k ≥ m·d)";
    return s;
  }
  s.train = to_batch(s.train_raw, k, d);
  s.validation = to_batch(s.val_raw, k, d);
  s.validation_norm2 = std::max(s.validation.y.squaredNorm(), 1e-300);
  s.t_max = std::sqrt(std::max(o.radius * o.radius - x0.squaredNorm(), 0.0));
  if (axes > 0 && !(s.t_max > 0)) s.failure = "stage 6: the hull point lies outside the ball of radius R";
  return s;
}

// ---- Level 1 ----------------------------------------------------------------

// Every pair's Gram block P_aᵀP_b (a ≤ b) and every point's P_aᵀY, formed once:
// with m ≥ 3 each pair of grid points is shared by many tuples. Only while they
// fit in kMaxPairGramDoubles (a choice of memory, not of the result: the blocks
// are the same products either way).
constexpr int64_t kMaxPairGramDoubles = int64_t{1} << 26;  // 512 MiB

class PairGrams {
 public:
  PairGrams(const std::vector<PointDesign>& points, const Batch& train, int threads)
      : n_(static_cast<int64_t>(points.size())), blocks_(static_cast<size_t>(n_ * (n_ + 1) / 2)), rhs_(points.size()) {
#pragma omp parallel for schedule(dynamic) num_threads(threads)
    for (int64_t a = 0; a < n_; ++a) {
      rhs_[a].noalias() = points[a].train.transpose() * train.y;
      for (int64_t b = a; b < n_; ++b) blocks_[index(a, b)].noalias() = points[a].train.transpose() * points[b].train;
    }
  }
  static bool fits(int64_t points, int d) { return points * (points + 1) / 2 * d * d <= kMaxPairGramDoubles; }

  NormalEquations assemble(const std::vector<int64_t>& tuple, Eigen::Index d) const {
    const Eigen::Index m = static_cast<Eigen::Index>(tuple.size());
    NormalEquations s{Eigen::MatrixXd(m * d, m * d), Eigen::MatrixXd(m * d, d)};
    for (Eigen::Index i = 0; i < m; ++i) {
      s.rhs.middleRows(i * d, d) = rhs_[tuple[i]];
      for (Eigen::Index j = i; j < m; ++j) {
        s.gram.block(i * d, j * d, d, d) = blocks_[index(tuple[i], tuple[j])];
        if (j != i) s.gram.block(j * d, i * d, d, d) = s.gram.block(i * d, j * d, d, d).transpose();
      }
    }
    return s;
  }

 private:
  // Row-major upper triangle: rows 0..a−1 hold n + (n−1) + … + (n−a+1) pairs.
  size_t index(int64_t a, int64_t b) const { return static_cast<size_t>(a * n_ - a * (a - 1) / 2 + (b - a)); }
  int64_t n_;
  std::vector<MatD> blocks_, rhs_;
};

// Level 1: the exhaustive net, every unordered tuple of distinct grid points ranked.
struct Level1 {
  int grid_per_axis = 0;
  int64_t grid_points = 0, grid_cells = 0;
  bool centred = false;
  double resolution = 0;
  std::vector<Eigen::VectorXd> coords;
  std::vector<PointDesign> points;
  std::vector<std::vector<int64_t>> tuples;
  std::vector<double> errors;
};

int64_t integer_power(int64_t base, int exponent) {
  int64_t p = 1;
  for (int i = 0; i < exponent; ++i) p *= base;
  return p;
}

// G per axis: the largest with at most max_tuples tuples (at least 2). One axis:
// the interval's vertices; more: the cell centres that meet the ball.
int grid_per_axis(int axes, int m, double t_max, int64_t max_tuples) {
  if (axes == 0) return 1;
  int g = 2;
  if (axes == 1) {
    while (binomial(static_cast<int64_t>(std::pow(g + 1, axes)), m) <= double(max_tuples)) ++g;
    return g;
  }
  // integer_power bounds the cells enumerated (a budget near 2^32 at m = 3 needs G ≈ 1700, 3e6 cells).
  while (integer_power(g + 1, axes) <= (int64_t{1} << 30) &&
         binomial(static_cast<int64_t>(ball_cell_centres(axes, g + 1, t_max).size()), m) <= double(max_tuples))
    ++g;
  return g;
}

Level1 exhaustive_level(const Eigen::VectorXd& x0, const Eigen::MatrixXd& dirs, int m, const NetSetup& setup,
                        const NetOptions& o, int d) {
  const int axes = setup.axes;
  Level1 l;
  const int g = grid_per_axis(axes, m, setup.t_max, o.max_tuples);
  l.grid_per_axis = g;
  l.grid_cells = integer_power(g, axes);
  l.centred = axes >= 2;
  if (l.centred) {
    l.resolution = 2 * setup.t_max / g;
    l.coords = ball_cell_centres(axes, g, setup.t_max);
  } else {
    l.resolution = axes > 0 ? 2 * setup.t_max / (g - 1) : 0;
    l.coords.assign(l.grid_cells, Eigen::VectorXd::Zero(axes));
    for (int64_t p = 0; p < l.grid_cells && axes > 0; ++p) l.coords[p](0) = -setup.t_max + l.resolution * double(p);
  }
  l.grid_points = static_cast<int64_t>(l.coords.size());
  l.points.resize(l.grid_points);
  Progress progress("stage 6: net", l.grid_points);
#pragma omp parallel for schedule(dynamic) num_threads(o.threads)
  for (int64_t p = 0; p < l.grid_points; ++p)
    l.points[p] = point_design(x0, dirs, l.coords[p], setup.train, setup.validation, d);
  progress.update(l.grid_points);

  if (m == 1) l.tuples.push_back({0});
  else {
    std::vector<int64_t> idx(m);
    for (int i = 0; i < m; ++i) idx[i] = i;
    while (m <= l.grid_points) {
      l.tuples.push_back(idx);
      int i = m - 1;
      while (i >= 0 && idx[i] == l.grid_points - m + i) --i;
      if (i < 0) break;
      ++idx[i];
      for (int j = i + 1; j < m; ++j) idx[j] = idx[j - 1] + 1;
    }
  }
  if (l.tuples.empty()) return l;  // fewer points than heads: the caller says so
  std::optional<PairGrams> pairs;
  if (m >= 3 && PairGrams::fits(l.grid_points, d)) pairs.emplace(l.points, setup.train, o.threads);
  l.errors = evaluate_shared(static_cast<int64_t>(l.tuples.size()), o.processes, o.threads, 16, [&](int64_t t) {
    std::vector<const PointDesign*> tuple;
    for (int64_t p : l.tuples[t]) tuple.push_back(&l.points[p]);
    if (!pairs) return tuple_error(tuple, setup.train, setup.validation, setup.validation_norm2);
    return system_error(pairs->assemble(l.tuples[t], d), validation_blocks(tuple), setup.validation,
                        setup.validation_norm2);
  });
  return l;
}

// ---- Level 2 ----------------------------------------------------------------

// The refinement's current tuple: each head's hull coordinates and designs.
struct Current {
  std::vector<Eigen::VectorXd> coords;
  std::vector<PointDesign> designs;
  double error = 0;
  std::vector<const PointDesign*> tuple() const {
    std::vector<const PointDesign*> t;
    for (const PointDesign& p : designs) t.push_back(&p);
    return t;
  }
};

// t moved by the pattern v ∈ [0, 3^axes): digit j of v (base 3) moves axis j by (digit − 1)·h.
Eigen::VectorXd moved(const Eigen::VectorXd& t, int64_t v, int axes, double h) {
  Eigen::VectorXd out = t;
  for (int j = 0; j < axes; ++j, v /= 3) out(j) += h * double(v % 3 - 1);
  return out;
}

// Everything a refinement step reads.
struct RefineContext {
  const Eigen::VectorXd& x0;
  const Eigen::MatrixXd& dirs;
  const NetSetup& setup;
  const NetOptions& o;
  int m, d, axes;
};

// One iteration of the joint pattern: every combination of every head's 3^axes
// moves; true when the best improves on the current tuple (which then moves).
bool joint_step(const RefineContext& c, double h, Current& cur, NetReport& rep) {
  const int64_t moves_per_head = integer_power(3, c.axes);
  // Moved copies of every head: designs[i * moves_per_head + v].
  std::vector<PointDesign> designs(static_cast<size_t>(c.m) * moves_per_head);
#pragma omp parallel for schedule(dynamic) num_threads(c.o.threads)
  for (int64_t k = 0; k < int64_t{c.m} * moves_per_head; ++k)
    designs[k] = point_design(c.x0, c.dirs, moved(cur.coords[k / moves_per_head], k % moves_per_head, c.axes, h),
                              c.setup.train, c.setup.validation, c.d);
  const int64_t combos = integer_power(moves_per_head, c.m);
  const std::vector<double> errs = evaluate_shared(combos, c.o.processes, c.o.threads, 8, [&](int64_t k) {
    std::vector<const PointDesign*> tuple;
    for (int i = 0; i < c.m; ++i, k /= moves_per_head) tuple.push_back(&designs[i * moves_per_head + k % moves_per_head]);
    return tuple_error(tuple, c.setup.train, c.setup.validation, c.setup.validation_norm2);
  });
  rep.tuples_refine += combos;
  const size_t best = argmin(errs);
  if (!(errs[best] < cur.error * (1 - kNetMinimumRelativeGain))) return false;
  cur.error = errs[best];
  int64_t rest = static_cast<int64_t>(best);
  for (int i = 0; i < c.m; ++i, rest /= moves_per_head) {
    cur.designs[i] = designs[i * moves_per_head + rest % moves_per_head];
    cur.coords[i] = moved(cur.coords[i], rest % moves_per_head, c.axes, h);
  }
  return true;
}

// `s` (the current tuple's normal equations) with head i's blocks and
// right-hand side replaced by those of `p`.
void replace_head(NormalEquations& s, int i, const PointDesign& p, const std::vector<const PointDesign*>& tuple,
                  const Batch& train) {
  const Eigen::Index d = train.y.cols(), m = static_cast<Eigen::Index>(tuple.size());
  s.rhs.middleRows(i * d, d).noalias() = p.train.transpose() * train.y;
  for (Eigen::Index j = 0; j < m; ++j) {
    if (j < i) {
      s.gram.block(j * d, i * d, d, d).noalias() = tuple[j]->train.transpose() * p.train;
      s.gram.block(i * d, j * d, d, d) = s.gram.block(j * d, i * d, d, d).transpose();
    } else {
      s.gram.block(i * d, j * d, d, d).noalias() = p.train.transpose() * (j == i ? p.train : tuple[j]->train);
      if (j != i) s.gram.block(j * d, i * d, d, d) = s.gram.block(i * d, j * d, d, d).transpose();
    }
  }
}

// One sweep of the head-wise pattern: for each head in turn, its 3^axes − 1
// moves with the other heads fixed, the best taken when it improves. True when
// some head moved. A move that leaves the ball ‖t‖ ≤ T leaves the net's domain
// H ∩ ball(R) and is not evaluated (+inf): on a poor hull the validation error
// can fall slowly along a valley towards ever larger Θ, which polishing cannot
// come back from and which the iteration cap would otherwise end.
bool head_wise_sweep(const RefineContext& c, double h, Current& cur, NetReport& rep) {
  const int64_t patterns = integer_power(3, c.axes), still = (patterns - 1) / 2;  // `still`: every digit 1
  bool any = false;
  for (int i = 0; i < c.m; ++i) {
    const std::vector<const PointDesign*> tuple = cur.tuple();
    const NormalEquations base = assemble(tuple, c.setup.train);
    const std::vector<double> errs = evaluate_shared(patterns - 1, c.o.processes, c.o.threads, 1, [&](int64_t k) {
      const int64_t v = k < still ? k : k + 1;
      const Eigen::VectorXd t = moved(cur.coords[i], v, c.axes, h);
      if (t.squaredNorm() > c.setup.t_max * c.setup.t_max) return std::numeric_limits<double>::infinity();
      const PointDesign p = point_design(c.x0, c.dirs, t, c.setup.train, c.setup.validation, c.d);
      NormalEquations s = base;
      replace_head(s, i, p, tuple, c.setup.train);
      std::vector<const MatD*> blocks = validation_blocks(tuple);
      blocks[i] = &p.validation;
      return system_error(s, blocks, c.setup.validation, c.setup.validation_norm2);
    });
    rep.tuples_refine += patterns - 1;
    const size_t best = argmin(errs);
    if (!(errs[best] < cur.error * (1 - kNetMinimumRelativeGain))) continue;
    const int64_t v = static_cast<int64_t>(best) < still ? static_cast<int64_t>(best) : static_cast<int64_t>(best) + 1;
    cur.coords[i] = moved(cur.coords[i], v, c.axes, h);
    cur.designs[i] = point_design(c.x0, c.dirs, cur.coords[i], c.setup.train, c.setup.validation, c.d);
    cur.error = errs[best];
    any = true;
  }
  return any;
}

// After a sweep that moved some head, the sweep's displacement Δ (every head at
// once) is tried again from where the sweep ended, doubled after each success,
// while the error falls and the heads stay in the ball (Hooke and Jeeves'
// pattern move): head-by-head steps zig-zag along a valley that couples the
// heads, and this follows it in a few tuples instead of many sweeps. Each trial
// is one tuple, evaluated by every process.
void extrapolate(const RefineContext& c, const std::vector<Eigen::VectorXd>& before, Current& cur, NetReport& rep) {
  std::vector<Eigen::VectorXd> delta(c.m);
  for (int i = 0; i < c.m; ++i) delta[i] = cur.coords[i] - before[i];
  while (true) {
    Current trial = cur;
    for (int i = 0; i < c.m; ++i) {
      trial.coords[i] += delta[i];
      if (trial.coords[i].squaredNorm() > c.setup.t_max * c.setup.t_max) return;
    }
#pragma omp parallel for schedule(dynamic) num_threads(c.o.threads)
    for (int i = 0; i < c.m; ++i)
      if (delta[i].squaredNorm() > 0)
        trial.designs[i] = point_design(c.x0, c.dirs, trial.coords[i], c.setup.train, c.setup.validation, c.d);
    trial.error = tuple_error(trial.tuple(), c.setup.train, c.setup.validation, c.setup.validation_norm2);
    ++rep.tuples_refine;
    if (!(trial.error < cur.error * (1 - kNetMinimumRelativeGain))) return;
    cur = std::move(trial);
    ++rep.refine_extrapolations;
    for (auto& v : delta) v *= 2;
  }
}

}  // namespace

std::vector<Eigen::VectorXd> ball_cell_centres(int axes, int g, double t_max) {
  if (axes < 1 || g < 1 || !(t_max > 0)) throw std::invalid_argument("ball_cell_centres: needs axes ≥ 1, G ≥ 1, T > 0");
  const double side = 2 * t_max / g;
  const int64_t cells = integer_power(g, axes);
  std::vector<Eigen::VectorXd> kept;
  Eigen::VectorXd c(axes);
  for (int64_t p = 0; p < cells; ++p) {
    // The cell's nearest point to the origin: each coordinate of the centre
    // clamped towards 0 by at most half a side (proofs/net_pruning.md).
    double distance2 = 0;
    int64_t rest = p;
    for (int j = 0; j < axes; ++j, rest /= g) {
      c(j) = -t_max + side * (double(rest % g) + 0.5);
      const double gap = std::max(std::abs(c(j)) - side / 2, 0.0);
      distance2 += gap * gap;
    }
    if (distance2 <= t_max * t_max) kept.push_back(c);
  }
  return kept;
}

NetCandidates net_candidates(const SampleSource& source, const Eigen::VectorXd& x0, const Eigen::MatrixXd& dirs, int m,
                             const NetOptions& o) {
  const NetSetup setup = prepare(source, x0, dirs, m, o);
  NetCandidates c;
  if (!setup.failure.empty()) {
    c.failure = setup.failure;
    return c;
  }
  Level1 l = exhaustive_level(x0, dirs, m, setup, o, source.d());
  if (l.tuples.empty()) {
    c.failure = "stage 6: the net has fewer points than heads";
    return c;
  }
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
  const int d = source.d();
  check_processes(o.processes, "stage 6");
  const NetSetup setup = prepare(source, x0, dirs, m, o);
  NetResult result;
  NetReport& rep = result.report;
  rep.samples = setup.train_raw.x.count + setup.val_raw.x.count;
  const auto fail = [&](std::string why) {
    result.failure = std::move(why);
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::move(result);
  };
  if (!setup.failure.empty()) return fail(setup.failure);
  const int axes = setup.axes;

  // Level 1: the exhaustive net.
  Level1 level1 = exhaustive_level(x0, dirs, m, setup, o, d);
  rep.grid_per_axis = level1.grid_per_axis;
  rep.grid_points = level1.grid_points;
  rep.grid_cells = level1.grid_cells;
  rep.grid_centred = level1.centred;
  rep.coarse_resolution = level1.resolution;
  rep.tuples_exhaustive = static_cast<int64_t>(level1.tuples.size());
  if (level1.tuples.empty()) return fail("stage 6: the net has fewer points than heads");
  const size_t best = argmin(level1.errors);
  if (!std::isfinite(level1.errors[best])) return fail("stage 6: every candidate tuple has a singular design");
  rep.coarse_validation_error = level1.errors[best];
  Current cur;
  cur.error = level1.errors[best];
  for (int64_t p : level1.tuples[best]) {
    cur.coords.push_back(level1.coords[p]);
    cur.designs.push_back(level1.points[p]);
  }
  const std::optional<Layer> coarse = solve_layer(cur.tuple(), setup.train);
  if (!coarse) return fail("stage 6: the winning tuple's design is rank-deficient");
  result.coarse_layer = *coarse;
  level1 = Level1{};

  // Level 2: pattern search from the winner, halving h when no move improves.
  const RefineContext context{x0, dirs, setup, o, m, d, axes};
  rep.refine_head_wise = axes > 0 && std::pow(3.0, double(axes) * m) > double(o.max_joint_moves);
  double h = rep.coarse_resolution / 2;
  while (axes > 0 && h >= o.final_step * setup.t_max) {
    if (rep.refine_iterations == o.max_refine_iterations) {
      rep.refine_capped = true;
      break;
    }
    ++rep.refine_iterations;
    if (!rep.refine_head_wise) {
      if (!joint_step(context, h, cur, rep)) h /= 2;
      continue;
    }
    const std::vector<Eigen::VectorXd> before = cur.coords;
    if (head_wise_sweep(context, h, cur, rep)) extrapolate(context, before, cur, rep);
    else h /= 2;
  }
  rep.final_resolution = axes > 0 ? 2 * h : 0;
  const std::optional<Layer> refined = solve_layer(cur.tuple(), setup.train);
  if (!refined) return fail("stage 6: the refined tuple's design is rank-deficient");
  result.layer = *refined;
  rep.validation_error = relative_error(result.layer, setup.val_raw, o.threads, o.processes);
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace mha
