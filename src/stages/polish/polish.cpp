#include "stages/polish/polish.hpp"

#include "model/forward_error.hpp"
#include "model/forward_fast.hpp"
#include "model/forward_reference.hpp"
#include "numeric/softmax.hpp"
#include "numeric/tolerance.hpp"
#include "stages/polish/attention_jacobian.hpp"
#include "stages/polish/operator.hpp"
#include "stages/stage6/net.hpp"
#include "stages/stage6/w_least_squares.hpp"
#include "util/progress.hpp"

#include <Eigen/Cholesky>
#include <Eigen/QR>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace mha {

// Levenberg–Marquardt's parameters (algorithm choices, not comparison
// tolerances): the damping λ starts at kInitialDamping, is divided by 5 after an
// accepted step down to kMinimumDamping, and scales the Gauss–Newton matrix's
// diagonal floored at kDiagonalFloor of its largest entry (so that a parameter
// the data do not see still gets damped).
constexpr double kInitialDamping = 1e-3;
constexpr double kMinimumDamping = 1e-12;
constexpr double kDiagonalFloor = 1e-12;

// The matrix-free solver's conjugate gradients (algorithm choices): each damped
// Gauss–Newton system is solved to a relative residual of kCgTolerance (the
// step's relative error is at most κ(H) times that) — an inexact Newton step
// that still shrinks the parameter error by orders of magnitude per iteration
// (measured: the same 9–10 iterations to the rounding floor as the dense
// solver), at a fraction of an exact solve's cost; PolishOptions::
// cg_max_iterations caps one solve (a step is accepted only if it lowers the
// error either way).
constexpr double kCgTolerance = 1e-6;

namespace {

// Each (sample, row) tells a head's Θ only k−1 logit differences, so Θ_i (d² unknowns)
// needs N·k·(k−1) ≥ d² to be identified; twice that keeps Gauss–Newton well conditioned
// (at d = 32 with 1.5× it crawled: the earlier runs in docs/bench/learner/, NOTES.md).
int64_t train_samples(int d, int k, int m, const PolishOptions& o) {
  if (o.samples > 0) return o.samples;
  const int64_t dd = int64_t{d} * d, pairs = int64_t{k} * (k - 1);
  return std::max<int64_t>({256, 16 * int64_t{m} * d / k, (2 * dd + pairs - 1) / pairs});
}

int64_t validation_samples(const PolishOptions& o) { return o.validation_samples > 0 ? o.validation_samples : 256; }

struct Data {
  std::vector<MatD> xs;
  MatD y;  // (N·k) × d
  double norm2 = 0;
};

Data to_data(const LabelledBatch& b, int k, int d) {
  Data out;
  out.y = Eigen::Map<const MatD>(b.y.data(), b.x.count * k, d);
  out.norm2 = std::max(out.y.squaredNorm(), 1e-300);
  out.xs = b.x.samples();
  return out;
}

// The variable-projection state at Θ: the design, W(Θ) and the residual.
struct State {
  std::vector<MatD> thetas;
  MatD design;
  Layer layer;
  MatD residual;  // (N·k) × d
  double cost = INFINITY;  // ‖residual‖² / ‖Y‖²
};

// The design's rows are shared by `processes` (each its block of samples, gathered);
// W(Θ) and the residual are every process's own.
State evaluate(const std::vector<MatD>& thetas, const Data& data, int threads, const Processes& processes) {
  State s;
  s.thetas = thetas;
  const int64_t k = data.xs.front().rows(), d = data.y.cols(), m = thetas.size(), n = data.xs.size();
  s.design.resize(n * k, m * d);
  // Plain variables: clang 14 cannot capture a structured binding in an OpenMP region.
  const std::pair<int64_t, int64_t> block = processes.share(n);
  const int64_t first = block.first, end = block.second;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t t = first; t < end; ++t) {
    std::vector<MatD> attentions;
    for (const auto& th : thetas) attentions.push_back(softmax_rows<double>(data.xs[t] * th * data.xs[t].transpose()));
    s.design.middleRows(t * k, k) = w_design_rows<double>(attentions, data.xs[t]);
  }
  gather_blocks(processes, n, k * m * d, s.design.data());  // row-major: sample t's rows are contiguous
  const std::optional<MatD> w = solve_w_stack(s.design, data.y);
  if (!w) return s;
  s.layer = layer_from_stack(thetas, *w);
  s.residual = s.design * *w - data.y;
  s.cost = s.residual.squaredNorm() / data.norm2;
  if (!std::isfinite(s.cost)) s.cost = INFINITY;
  return s;
}

// P⊥ M = M − Q (Qᵀ M) into `out`: each column of M (one output column's residuals
// over the rows (n, a)) projected onto the orthogonal complement of range(D) = range(Q).
// Qᵀ M is summed over fixed row chunks in chunk order (thread-count independent),
// the chunks' products shared by `processes` (each its block, gathered). `partial`
// holds the chunks' products and `out` the result, both reused from call to call
// (AttentionLinearization::partial_ says why).
void project_out(const Eigen::MatrixXd& q, const MatD& values, int threads, const Processes& processes,
                 std::vector<double>& partial, MatD& out) {
  const int64_t rows = values.rows(), chunk = kSampleChunk * 4;
  const int64_t chunks = (rows + chunk - 1) / chunk, per_chunk = q.cols() * values.cols();
  partial.resize(static_cast<size_t>(chunks * per_chunk));  // chunk by chunk, each column-major; every chunk written
  const std::pair<int64_t, int64_t> block = processes.share(chunks);
  const int64_t first = block.first, end = block.second;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t ch = first; ch < end; ++ch) {
    const int64_t begin = ch * chunk, size = std::min(rows, begin + chunk) - begin;
    Eigen::Map<Eigen::MatrixXd>(partial.data() + ch * per_chunk, q.cols(), values.cols()) =
        q.middleRows(begin, size).transpose() * values.middleRows(begin, size);
  }
  gather_blocks(processes, chunks, per_chunk, partial.data());
  Eigen::MatrixXd coefficients = Eigen::MatrixXd::Zero(q.cols(), values.cols());
  for (int64_t ch = 0; ch < chunks; ++ch)
    coefficients += Eigen::Map<const Eigen::MatrixXd>(partial.data() + ch * per_chunk, q.cols(), values.cols());
  out = values;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t ch = 0; ch < chunks; ++ch) {
    const int64_t begin = ch * chunk, size = std::min(rows, begin + chunk) - begin;
    out.middleRows(begin, size) -= q.middleRows(begin, size) * coefficients;
  }
}

// Head blocks of JᵀJ for the matrix-free solver's preconditioner, formed once
// per polishing run (at its start; see MatrixFreeModel), and the storage of their
// damped Cholesky factors, kept from one Levenberg–Marquardt iteration to the next:
// a model made anew at every iteration allocated m·d⁴ doubles afresh (4.3 GB at
// (128,2,2): the resident set swung between 4.8 and 8.9 GB, docs/bench/memory.md).
struct PreconditionerCache {
  std::vector<Eigen::MatrixXd> head_blocks;
  std::vector<Eigen::MatrixXd> factors;  // Cholesky factors (lower triangle) of the damped head blocks
  std::vector<char> factored;
};

// The Levenberg–Marquardt linear model at one point, with the dense Jacobian:
// JᵀJ formed and each damped system solved by LDLT. Exact, and the cheaper
// path while m·d² is small (its cost grows as N·k·d·(m·d²)²).
class DenseModel {
 public:
  DenseModel(const State& state, const Data& data, const PolishOptions& o, PreconditionerCache&) {
    const int threads = o.threads;
    const int64_t k = data.xs.front().rows(), d = data.y.cols(), dd = d * d, m = state.thetas.size();
    const int64_t rows = static_cast<int64_t>(data.xs.size()) * k;
    // Jacobian rows ordered (c, n, a) so that each output column's block is contiguous.
    Eigen::MatrixXd jac(rows * d, m * dd);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t t = 0; t < static_cast<int64_t>(data.xs.size()); ++t) {
      const MatD j = attention_jacobian<double>(state.layer, data.xs[t]);
      for (int a = 0; a < k; ++a)
        for (int c = 0; c < d; ++c) jac.row(int64_t{c} * rows + t * k + a) = j.row(int64_t{a} * d + c);
    }
    // Kaufman's variable-projection Jacobian: project out range(D) per column.
    const Eigen::HouseholderQR<Eigen::MatrixXd> qr(state.design);
    const Eigen::MatrixXd q = qr.householderQ() * Eigen::MatrixXd::Identity(rows, state.design.cols());
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int c = 0; c < d; ++c) {
      auto block = jac.middleRows(int64_t{c} * rows, rows);
      block -= q * (q.transpose() * block);
    }
    Eigen::VectorXd r(rows * d);
    for (int c = 0; c < d; ++c) r.segment(int64_t{c} * rows, rows) = state.residual.col(c);
    normal_ = Eigen::MatrixXd::Zero(m * dd, m * dd);
    normal_.selfadjointView<Eigen::Lower>().rankUpdate(jac.transpose());
    normal_ = normal_.selfadjointView<Eigen::Lower>();
    gradient_ = jac.transpose() * r;
    diag_ = normal_.diagonal().cwiseMax(kDiagonalFloor * normal_.diagonal().maxCoeff());
  }

  Eigen::VectorXd step(double lambda) {
    Eigen::MatrixXd damped = normal_;
    damped.diagonal() += lambda * diag_;
    return -Eigen::LDLT<Eigen::MatrixXd>(damped).solve(gradient_);
  }

  int64_t last_cg_iterations() const { return 0; }
  // Jᵀ P⊥ r, the gradient of ½‖r‖² in Θ under Kaufman's approximation.
  const Eigen::VectorXd& gradient() const { return gradient_; }

 private:
  Eigen::MatrixXd normal_;
  Eigen::VectorXd gradient_, diag_;
};

// The same model without forming J: (JᵀP⊥J + λ·diag) s = −JᵀP⊥r solved by
// conjugate gradients, J·v and Jᵀ·R applied matrix-free
// (stages/polish/operator.hpp). Memory O(N·k·m·d + N·k²·d² + m·d⁴) instead of
// the dense Jacobian's N·k·d·m·d² doubles.
//
// The damping diagonal is that of the unprojected JᵀJ (the projected one would
// need Qᵀ J, as costly as J itself); it bounds the projected diagonal from
// above, so the damping is at least as strong.
//
// Preconditioner: block-diagonal, head i's block H_i + λ·diag_i with H_i the
// head's diagonal block of JᵀJ (AttentionLinearization::head_gram_block),
// Cholesky-factored. With a diagonal (Jacobi) preconditioner CG needed ~1800
// iterations per system at (32,2,2) (docs/benchmarks.md, "Polishing"): the
// attention weights' saturation makes each head's block badly conditioned,
// which the block captures exactly; what is left is the coupling between heads
// and the projection. H_i is formed at the first iteration only (its O(N k² d⁴)
// cost dominates at d = 64) and reused: the parameters move by the start's
// small error, so the blocks barely change, and a stale preconditioner changes
// only CG's iteration count, never the system solved. Above
// polish_preconditioner_samples training samples the blocks come from the first
// that many of them, scaled by N/n (their cost and memory grow as
// N k² d⁴; a large noisy final fit needs the average, not every term).
class MatrixFreeModel {
 public:
  MatrixFreeModel(const State& state, const Data& data, const PolishOptions& o, PreconditionerCache& cache)
      : linearization_(state.layer, data.xs, o.threads, o.processes), threads_(o.threads), processes_(o.processes),
        cg_max_(o.cg_max_iterations), cache_(cache) {
    const int64_t rows = state.design.rows();
    const Eigen::HouseholderQR<Eigen::MatrixXd> qr(state.design);
    q_ = qr.householderQ() * Eigen::MatrixXd::Identity(rows, state.design.cols());
    project_out(q_, state.residual, threads_, processes_, partial_, projected_);
    gradient_ = linearization_.apply_transpose(projected_);
    const Eigen::VectorXd gram = linearization_.gram_diagonal();
    diag_ = gram.cwiseMax(kDiagonalFloor * gram.maxCoeff());
    if (cache_.head_blocks.empty()) form_head_blocks(state.layer, data, o);
  }

  Eigen::VectorXd step(double lambda) {
    factor_preconditioner(lambda);
    // Preconditioned CG on H s = b, H = JᵀP⊥J + λ·diag, b = −gradient, from s = 0.
    const Eigen::VectorXd b = -gradient_;
    const double stop = kCgTolerance * b.norm();
    Eigen::VectorXd s = Eigen::VectorXd::Zero(b.size()), residual = b;
    Eigen::VectorXd z = precondition(residual), direction = z;
    double rz = residual.dot(z);
    cg_iterations_ = 0;
    while (cg_iterations_ < cg_max_ && residual.norm() > stop) {
      const Eigen::VectorXd hd = damped_product(direction, lambda);
      const double alpha = rz / direction.dot(hd);
      s += alpha * direction;
      residual -= alpha * hd;
      ++cg_iterations_;
      z = precondition(residual);
      const double rz_next = residual.dot(z);
      direction = z + (rz_next / rz) * direction;
      rz = rz_next;
    }
    return s;
  }

  int64_t last_cg_iterations() const { return cg_iterations_; }
  // Jᵀ P⊥ r (as DenseModel's, applied matrix-free).
  const Eigen::VectorXd& gradient() const { return gradient_; }

 private:
  // Head i's block by process i mod size alone, then every block to every process.
  void form_head_blocks(const Layer& layer, const Data& data, const PolishOptions& o) {
    const int64_t n = static_cast<int64_t>(data.xs.size());
    cache_.head_blocks.resize(layer.m());
    const int64_t used = polish_preconditioner_samples(n, layer.d(), static_cast<int>(data.xs.front().rows()), o);
    if (used >= n) {
      for (int i = processes_.rank; i < layer.m(); i += processes_.size)
        cache_.head_blocks[i] = linearization_.head_gram_block(i);
    } else {
      const std::vector<MatD> subset(data.xs.begin(), data.xs.begin() + used);
      const AttentionLinearization sub(layer, subset, threads_);
      const double weight = static_cast<double>(n) / static_cast<double>(used);
      for (int i = processes_.rank; i < layer.m(); i += processes_.size)
        cache_.head_blocks[i] = weight * sub.head_gram_block(i);
    }
    exchange_head_blocks(int64_t{layer.d()} * layer.d());
  }

  // Every process's blocks (head i from process i mod size) to every process, in one all-gather.
  void exchange_head_blocks(int64_t dd) {
    if (processes_.size == 1) return;
    const int m = static_cast<int>(cache_.head_blocks.size());
    std::vector<double> mine;
    for (int i = processes_.rank; i < m; i += processes_.size)
      mine.insert(mine.end(), cache_.head_blocks[i].data(), cache_.head_blocks[i].data() + dd * dd);
    const std::vector<double> all = processes_.all_gather(mine);
    if (static_cast<int64_t>(all.size()) != m * dd * dd)
      throw std::logic_error("polishing: head blocks gathered wrongly");
    const double* next = all.data();
    for (int r = 0; r < processes_.size; ++r)
      for (int i = r; i < m; i += processes_.size, next += dd * dd)
        cache_.head_blocks[i] = Eigen::Map<const Eigen::MatrixXd>(next, dd, dd);
  }

  Eigen::VectorXd damped_product(const Eigen::VectorXd& v, double lambda) {
    linearization_.apply(v, applied_);
    project_out(q_, applied_, threads_, processes_, partial_, projected_);
    Eigen::VectorXd out = linearization_.apply_transpose(projected_);
    out += lambda * diag_.cwiseProduct(v);
    return out;
  }

  // Cholesky of each head's H_i + λ·diag_i, in place in the cache's factors[i] (one
  // d²×d² matrix per head beside the blocks: 134 MB each at d = 64); a head whose
  // block is not positive definite in floating point falls back to its diagonal.
  void factor_preconditioner(double lambda) {
    const int m = static_cast<int>(cache_.head_blocks.size());
    const int64_t dd = cache_.head_blocks.front().rows();
    cache_.factors.resize(m);
    cache_.factored.assign(m, 0);
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int i = 0; i < m; ++i) {
      cache_.factors[i] = cache_.head_blocks[i];  // the same size after the first call: no new allocation
      cache_.factors[i].diagonal() += lambda * diag_.segment(i * dd, dd);
      const Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(cache_.factors[i]);
      cache_.factored[i] = llt.info() == Eigen::Success;
    }
    lambda_ = lambda;
  }

  // (L Lᵀ)⁻¹ r for the lower-triangular factor L that factor_preconditioner left in `l`.
  static Eigen::VectorXd cholesky_solve(const Eigen::MatrixXd& l, const Eigen::VectorXd& r) {
    Eigen::VectorXd x = r;
    l.triangularView<Eigen::Lower>().solveInPlace(x);
    l.transpose().triangularView<Eigen::Upper>().solveInPlace(x);
    return x;
  }

  Eigen::VectorXd precondition(const Eigen::VectorXd& r) const {
    const int m = static_cast<int>(cache_.factors.size());
    const int64_t dd = r.size() / m;
    Eigen::VectorXd out(r.size());
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int i = 0; i < m; ++i)
      out.segment(i * dd, dd) = cache_.factored[i] ? cholesky_solve(cache_.factors[i], r.segment(i * dd, dd))
                                             : Eigen::VectorXd(r.segment(i * dd, dd).cwiseQuotient(
                                                   (1 + lambda_) * diag_.segment(i * dd, dd)));
    return out;
  }

  AttentionLinearization linearization_;
  int threads_;
  Processes processes_;
  int64_t cg_max_;
  PreconditionerCache& cache_;
  Eigen::MatrixXd q_;
  Eigen::VectorXd gradient_, diag_;
  // Scratch of every product with JᵀP⊥J, reused (N·k × d each, and project_out's chunk products).
  MatD applied_, projected_;
  std::vector<double> partial_;
  double lambda_ = 0;
  int64_t cg_iterations_ = 0;
};

// Why Levenberg–Marquardt stopped; the floor's cause (rounding or noise) is
// named after the run, from the residual against its rounding level.
enum class StopCause { iteration_limit, time_budget, target, no_decrease, not_halved, statistical };

// The training error cost = Σr²/ΣY² as a noise estimate: at a least-squares
// optimum with p parameters on n residual entries E[Σr²] = (n − p)σ², so the
// relative noise is √(cost·n/(n − p)) (proofs/label_noise.md).
double noise_from_cost(double cost, int64_t entries, int64_t parameters) {
  return std::sqrt(cost * static_cast<double>(entries) / static_cast<double>(std::max<int64_t>(entries - parameters, 1)));
}

// One Levenberg–Marquardt iteration's damping loop: up to 12 damped steps of
// `model` from `state`, the damping raised 8× after each that does not lower
// the objective; the first that does is accepted and the damping lowered 5×
// for the next iteration. `lambda` carries the damping between iterations.
struct DampedStep {
  bool accepted = false;
  State next;                 // the accepted trial
  double lambda = 0;          // the damping it was solved with
  int64_t cg_iterations = 0;  // over all attempts (0: dense)
};

template <class Model>
DampedStep damped_step(Model& model, const State& state, const Data& data, double& lambda, const PolishOptions& o) {
  const int d = data.y.cols(), m = state.thetas.size();
  const int64_t dd = int64_t{d} * d;
  DampedStep out;
  for (int attempt = 0; attempt < 12 && !out.accepted; ++attempt) {
    const Eigen::VectorXd step = model.step(lambda);
    out.cg_iterations += model.last_cg_iterations();
    std::vector<MatD> trial = state.thetas;
    for (int i = 0; i < m; ++i) trial[i] += Eigen::Map<const MatD>(step.data() + i * dd, d, d);
    State next = evaluate(trial, data, o.threads, o.processes);
    if (next.cost < state.cost) {
      out.accepted = true;
      out.next = std::move(next);
      out.lambda = lambda;
      lambda = std::max(lambda / 5, kMinimumDamping);
    } else {
      lambda *= 8;
    }
  }
  return out;
}

// Levenberg–Marquardt from `state` with the linear model Model, appending to `rep`.
template <class Model>
State levenberg_marquardt(State state, const Data& data, const PolishOptions& o, PolishReport& rep, StopCause& cause,
                          std::chrono::steady_clock::time_point t0) {
  double lambda = kInitialDamping;
  PreconditionerCache cache;
  Progress progress("polish", o.max_iterations);
  cause = StopCause::iteration_limit;
  while (rep.iterations < o.max_iterations) {
    if (state.cost <= o.target) {
      cause = StopCause::target;
      break;
    }
    if (o.max_seconds > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >= o.max_seconds) {
      cause = StopCause::time_budget;
      break;
    }
    Model model(state, data, o, cache);
    DampedStep taken = damped_step(model, state, data, lambda, o);
    rep.cg_iterations.push_back(taken.cg_iterations);
    if (!taken.accepted) {
      cause = StopCause::no_decrease;
      break;
    }
    const double next_cost = taken.next.cost;
    // Near zero, a step that does not halve the error is rounding noise.
    const bool at_floor = next_cost < o.floor && next_cost > 0.5 * state.cost;
    // Above the rounding level, a Gauss–Newton step that gains less than a
    // fraction of the statistical error has reached the noise floor.
    const double statistical = next_cost * static_cast<double>(rep.parameters) /
                               static_cast<double>(std::max<int64_t>(rep.residual_entries - rep.parameters, 1));
    const bool settled = o.statistical_stop > 0 && taken.lambda <= kInitialDamping &&
                         noise_from_cost(next_cost, rep.residual_entries, rep.parameters) > rep.rounding_level &&
                         state.cost - next_cost < o.statistical_stop * statistical;
    state = std::move(taken.next);
    ++rep.iterations;
    rep.train_error.push_back(state.cost);
    progress.update(rep.iterations);
    if (at_floor || settled) {
      cause = at_floor ? StopCause::not_halved : StopCause::statistical;
      break;
    }
  }
  return state;
}

// What rounding alone leaves in a fit's residual, measured at `layer` on the
// first kRoundingSamples inputs of `batch` (relative rms over the labels):
//   - the evaluation: the layer's fast forward pass against its MPFR reference
//     (128 bits), once for the fit and once more for labels computed the same way;
//   - the parameters: the fast pass at the layer with every entry of every Θ_i
//     and W_i moved by a relative ±u (a fixed sign pattern) against the pass at
//     the layer — what storing the optimum in double costs, through the
//     layer's sensitivity (large logits amplify it).
// Returns √(2·evaluation² + parameters²) (proofs/label_noise.md, "Rounding level").
constexpr int64_t kRoundingSamples = 256;
constexpr unsigned kRoundingBits = 128;

Layer parameters_rounded(const Layer& layer) {
  Layer moved = layer;
  uint64_t index = 0;
  auto move = [&index](MatD& a) {
    for (Eigen::Index e = 0; e < a.size(); ++e, ++index)
      a.data()[e] *= 1 + ((index * 0x9E3779B97F4A7C15ULL) >> 63 ? tolerance::kDoubleUnitRoundoff
                                                                 : -tolerance::kDoubleUnitRoundoff);
  };
  for (auto& h : moved.heads) {
    move(h.theta);
    move(h.w);
  }
  return moved;
}

double measured_rounding(const Layer& layer, const LabelledBatch& batch, int threads) {
  InputBatch x = batch.x;
  x.count = std::min(x.count, kRoundingSamples);
  const int64_t entries = x.count * x.k * x.d;
  x.bits.resize(std::min(x.bits.size(), static_cast<size_t>(x.count * x.k * words_per_token(x.d))));
  if (!x.values.empty()) x.values.resize(static_cast<size_t>(entries));
  const FastForwardResult fast = FastForward(layer).run(x, threads);
  const FastForwardResult moved = FastForward(parameters_rounded(layer)).run(x, threads);
  if (!fast.status.ok() || !moved.status.ok()) return INFINITY;
  const std::vector<double> exact = forward_mpfr_batch(layer, x, kRoundingBits);
  double evaluation_sq = 0, parameters_sq = 0, label_sq = 0;
  for (int64_t e = 0; e < entries; ++e) {
    evaluation_sq += (fast.y[e] - exact[e]) * (fast.y[e] - exact[e]);
    parameters_sq += (moved.y[e] - fast.y[e]) * (moved.y[e] - fast.y[e]);
    label_sq += batch.y[e] * batch.y[e];
  }
  return label_sq > 0 ? std::sqrt((2 * evaluation_sq + parameters_sq) / label_sq) : INFINITY;
}

// tolerance::residual_rounding_level on a batch at `layer`: per entry the
// forward pass's a priori rounding bound B of the layer (for the labels' and the
// fit's evaluation, 2B) and the labels' storage in double (u|y|).
double rounding_bound(const Layer& layer, const LabelledBatch& batch) {
  const int k = batch.x.k, d = batch.x.d;
  double rounding_sq = 0, label_sq = 0;
  for (int64_t n = 0; n < batch.x.count; ++n) {
    const MatD bound = forward_error_bound(layer, batch.x.sample(n));
    const Eigen::Map<const MatD> y(batch.y.data() + n * k * d, k, d);
    rounding_sq += (2 * bound + tolerance::kDoubleUnitRoundoff * y.cwiseAbs()).squaredNorm();
    label_sq += y.squaredNorm();
  }
  return tolerance::residual_rounding_level(rounding_sq, label_sq);
}

// The stop reason as reported: the noiseless strings are the earlier ones; at a
// noise floor the cause is named, with the estimate and the rounding level.
std::string stop_reason(StopCause cause, const PolishReport& rep, double statistical_stop) {
  char noise[160], gain[64];
  std::snprintf(noise, sizeof noise, "label noise ~%.1e above the rounding level %.1e", rep.noise_train,
                rep.rounding_level);
  std::snprintf(gain, sizeof gain, "%.3g%%", 100 * statistical_stop);
  switch (cause) {
    case StopCause::iteration_limit: return "iteration limit";
    case StopCause::time_budget: return "time budget";
    case StopCause::target: return "reached the target error";
    case StopCause::no_decrease:
      return rep.noise_floor ? std::string("no step decreases the error (noise floor: ") + noise + ")"
                             : "no step decreases the error (rounding floor)";
    case StopCause::not_halved:
      return rep.noise_floor ? std::string("noise floor (the last step did not halve the error; ") + noise + ")"
                             : "rounding floor (the last step did not halve the error)";
    case StopCause::statistical:
      return std::string("noise floor (the last step gained less than ") + gain + " of the fit's statistical error; " +
             noise + ")";
  }
  return "?";
}

}  // namespace

int64_t polish_samples_needed(int d, int k, int m, const PolishOptions& o) {
  return train_samples(d, k, m, o) + validation_samples(o);
}

int64_t polish_preconditioner_samples(int64_t n, int d, int k, const PolishOptions& o) {
  if (o.preconditioner_samples <= 0) return n;
  const int64_t kk = int64_t{k} * k;
  const int64_t floor = (o.preconditioner_rows_per_column * d * d + kk - 1) / kk;
  return std::min(n, std::max(o.preconditioner_samples, floor));
}

bool polish_uses_dense_solver(int d, int m, const PolishOptions& o) {
  switch (o.linear_solver) {
    case PolishSolver::dense: return true;
    case PolishSolver::matrix_free: return false;
    case PolishSolver::automatic: break;
  }
  return int64_t{m} * d * d <= o.dense_max_parameters;
}

PolishResult polish_layer(const SampleSource& source, const Layer& start, const PolishOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  // Noiseless labels (SampleSource::noiseless) have no statistical error to stop
  // at: a residual above rounding is the fit's own, which further steps lower.
  PolishOptions o = options;
  if (source.noiseless()) o.statistical_stop = 0;
  const int k = source.k(), d = source.d(), m = start.m();
  const int64_t dd = int64_t{d} * d;
  const int64_t n_train = train_samples(d, k, m, o);
  const int64_t n_val = validation_samples(o);
  const LabelledBatch train_raw = source.draw(o.first_sample, n_train, o.threads);
  const LabelledBatch val_raw = source.draw(o.first_sample + n_train, n_val, o.threads);
  PolishResult result;
  PolishReport& rep = result.report;
  rep.samples = train_raw.x.count + val_raw.x.count;
  const bool dense = polish_uses_dense_solver(d, m, o);
  char reason[200];
  if (o.linear_solver != PolishSolver::automatic)
    std::snprintf(reason, sizeof reason, "chosen by the options");
  else
    std::snprintf(reason, sizeof reason, "m·d² = %lld parameters %s %lld (dense_max_parameters)",
                  static_cast<long long>(m * dd), dense ? "≤" : ">", static_cast<long long>(o.dense_max_parameters));
  rep.linear_solver = dense ? "dense LDLT of JᵀJ" : "matrix-free conjugate gradients (per-head block preconditioner)";
  rep.linear_solver_reason = reason;
  if (train_raw.x.count * k * d < m * dd || val_raw.x.count == 0) {  // a dataset that ran out
    result.layer = start;
    rep.stop_reason = "too few samples left to polish";
    return result;
  }
  rep.validation_error_before = relative_error(start, val_raw, o.threads, o.processes);
  const double jacobian_bytes = 8.0 * static_cast<double>(train_raw.x.count) * k * d * static_cast<double>(m * dd);
  if (dense && jacobian_bytes > o.max_jacobian_bytes) {
    result.layer = start;
    rep.validation_error_after = rep.validation_error_before;
    char msg[160];
    std::snprintf(msg, sizeof msg, "skipped: the Jacobian would take %.1f GB (more than the %.1f GB allowed)",
                  jacobian_bytes / 1e9, o.max_jacobian_bytes / 1e9);
    rep.stop_reason = msg;
    return result;
  }
  const Data data = to_data(train_raw, k, d);

  std::vector<MatD> thetas;
  for (const auto& h : start.heads) thetas.push_back(h.theta);
  State state = evaluate(thetas, data, o.threads, o.processes);
  if (!std::isfinite(state.cost)) {
    result.layer = start;
    rep.stop_reason = "the starting point's design is rank-deficient";
    rep.validation_error_after = rep.validation_error_before;
    return result;
  }
  rep.train_error.push_back(state.cost);
  rep.parameters = 2 * int64_t{m} * dd;
  rep.residual_entries = train_raw.x.count * k * d;
  rep.rounding_bound = rounding_bound(start, val_raw);
  rep.rounding_measured = measured_rounding(start, val_raw, o.threads);
  rep.rounding_level = tolerance::rounding_floor_factor() * rep.rounding_measured;
  StopCause cause = StopCause::iteration_limit;
  state = dense ? levenberg_marquardt<DenseModel>(std::move(state), data, o, rep, cause, t0)
                : levenberg_marquardt<MatrixFreeModel>(std::move(state), data, o, rep, cause, t0);
  result.layer = state.layer;
  rep.validation_error_after = relative_error(result.layer, val_raw, o.threads, o.processes);
  // The floor is named at the layer reached: rounding there, not at the start.
  rep.rounding_measured = measured_rounding(result.layer, val_raw, o.threads);
  rep.rounding_level = tolerance::rounding_floor_factor() * rep.rounding_measured;
  rep.noise_train = noise_from_cost(state.cost, rep.residual_entries, rep.parameters);
  rep.noise_heldout = std::sqrt(rep.validation_error_after);
  rep.noise_floor = rep.noise_train > rep.rounding_level;
  rep.reached_floor = cause != StopCause::iteration_limit && cause != StopCause::time_budget;
  rep.stop_reason = stop_reason(cause, rep, o.statistical_stop);
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

namespace {
// The first iteration of levenberg_marquardt<Model> from `state`, recorded.
template <class Model>
void iterate_once(const State& state, const Data& data, const PolishOptions& o, PolishIteration& out) {
  PreconditionerCache cache;
  Model model(state, data, o, cache);
  out.gradient = model.gradient();
  double lambda = kInitialDamping;
  DampedStep taken = damped_step(model, state, data, lambda, o);
  out.accepted = taken.accepted;
  if (!taken.accepted) return;
  out.next = taken.next.layer;
  out.next_objective = taken.next.cost;
}
}  // namespace

PolishIteration polish_iteration(const LabelledBatch& train, const Layer& start, const PolishOptions& o) {
  const int k = train.x.k, d = train.x.d, m = start.m();
  PolishIteration out;
  out.dense = polish_uses_dense_solver(d, m, o);
  if (train.x.count == 0) {
    out.objective = INFINITY;
    return out;
  }
  const Data data = to_data(train, k, d);
  out.xs = data.xs;
  for (int64_t n = 0; n < train.x.count; ++n) out.ys.push_back(data.y.middleRows(n * k, k));
  std::vector<MatD> thetas;
  for (const auto& h : start.heads) thetas.push_back(h.theta);
  const State state = evaluate(thetas, data, o.threads, o.processes);
  out.start = std::isfinite(state.cost) ? state.layer : start;
  out.objective = state.cost;
  if (!std::isfinite(state.cost)) return out;  // rank-deficient design: no iteration
  if (out.dense)
    iterate_once<DenseModel>(state, data, o, out);
  else
    iterate_once<MatrixFreeModel>(state, data, o, out);
  return out;
}

}  // namespace mha
