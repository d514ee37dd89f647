#include "stages/polish.hpp"

#include "numeric/softmax.hpp"
#include "stages/attention_jacobian.hpp"
#include "stages/stage6_net.hpp"
#include "stages/w_least_squares.hpp"
#include "util/progress.hpp"

#include <Eigen/Cholesky>
#include <Eigen/QR>

#include <chrono>
#include <cmath>
#include <cstdio>

namespace mha {

// Levenberg–Marquardt's parameters (algorithm choices, not comparison
// tolerances): the damping λ starts at kInitialDamping, is divided by 5 after an
// accepted step down to kMinimumDamping, and scales the Gauss–Newton matrix's
// diagonal floored at kDiagonalFloor of its largest entry (so that a parameter
// the data do not see still gets damped).
constexpr double kInitialDamping = 1e-3;
constexpr double kMinimumDamping = 1e-12;
constexpr double kDiagonalFloor = 1e-12;

namespace {

// Each (sample, row) tells a head's Θ only k−1 logit differences, so Θ_i (d² unknowns)
// needs N·k·(k−1) ≥ d² to be identified; twice that keeps Gauss–Newton well conditioned
// (at d = 32 with 1.5× it crawled: docs/learner.md).
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
  for (int64_t n = 0; n < b.x.count; ++n) out.xs.push_back(b.x.sample(n));
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

State evaluate(const std::vector<MatD>& thetas, const Data& data, int threads) {
  State s;
  s.thetas = thetas;
  const int64_t k = data.xs.front().rows(), d = data.y.cols(), m = thetas.size(), n = data.xs.size();
  s.design.resize(n * k, m * d);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t t = 0; t < n; ++t) {
    std::vector<MatD> attentions;
    for (const auto& th : thetas) attentions.push_back(softmax_rows<double>(data.xs[t] * th * data.xs[t].transpose()));
    s.design.middleRows(t * k, k) = w_design_rows<double>(attentions, data.xs[t]);
  }
  const std::optional<MatD> w = solve_w_stack(s.design, data.y);
  if (!w) return s;
  s.layer = layer_from_stack(thetas, *w);
  s.residual = s.design * *w - data.y;
  s.cost = s.residual.squaredNorm() / data.norm2;
  if (!std::isfinite(s.cost)) s.cost = INFINITY;
  return s;
}

}  // namespace

int64_t polish_samples_needed(int d, int k, int m, const PolishOptions& o) {
  return train_samples(d, k, m, o) + validation_samples(o);
}

PolishResult polish_layer(const SampleSource& source, const Layer& start, const PolishOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const int k = source.k(), d = source.d(), m = start.m();
  const int64_t dd = int64_t{d} * d;
  const int64_t n_train = train_samples(d, k, m, o);
  const int64_t n_val = validation_samples(o);
  const LabelledBatch train_raw = source.draw(o.first_sample, n_train, o.threads);
  const LabelledBatch val_raw = source.draw(o.first_sample + n_train, n_val, o.threads);
  PolishResult result;
  PolishReport& rep = result.report;
  rep.samples = train_raw.x.count + val_raw.x.count;
  if (train_raw.x.count * k * d < m * dd || val_raw.x.count == 0) {  // a dataset that ran out
    result.layer = start;
    rep.stop_reason = "too few samples left to polish";
    return result;
  }
  rep.validation_error_before = relative_error(start, val_raw, o.threads);
  const double jacobian_bytes = 8.0 * static_cast<double>(train_raw.x.count) * k * d * static_cast<double>(m * dd);
  if (jacobian_bytes > o.max_jacobian_bytes) {
    result.layer = start;
    rep.validation_error_after = rep.validation_error_before;
    char msg[160];
    std::snprintf(msg, sizeof msg, "skipped: the Jacobian would take %.1f GB (more than the %.1f GB allowed)",
                  jacobian_bytes / 1e9, o.max_jacobian_bytes / 1e9);
    rep.stop_reason = msg;
    return result;
  }
  const Data data = to_data(train_raw, k, d);
  const int64_t rows = static_cast<int64_t>(data.xs.size()) * k;

  std::vector<MatD> thetas;
  for (const auto& h : start.heads) thetas.push_back(h.theta);
  State state = evaluate(thetas, data, o.threads);
  if (!std::isfinite(state.cost)) {
    result.layer = start;
    rep.stop_reason = "the starting point's design is rank-deficient";
    rep.validation_error_after = rep.validation_error_before;
    return result;
  }
  rep.train_error.push_back(state.cost);
  double lambda = kInitialDamping;
  Progress progress("polish", o.max_iterations);
  rep.stop_reason = "iteration limit";
  while (rep.iterations < o.max_iterations) {
    if (state.cost <= o.target) {
      rep.stop_reason = "reached the target error";
      break;
    }
    // Jacobian rows ordered (c, n, a) so that each output column's block is contiguous.
    Eigen::MatrixXd jac(rows * d, m * dd);
#pragma omp parallel for schedule(static) num_threads(o.threads)
    for (int64_t t = 0; t < static_cast<int64_t>(data.xs.size()); ++t) {
      const MatD j = attention_jacobian<double>(state.layer, data.xs[t]);
      for (int a = 0; a < k; ++a)
        for (int c = 0; c < d; ++c) jac.row(int64_t{c} * rows + t * k + a) = j.row(int64_t{a} * d + c);
    }
    // Kaufman's variable-projection Jacobian: project out range(D) per column.
    const Eigen::HouseholderQR<Eigen::MatrixXd> qr(state.design);
    const Eigen::MatrixXd q = qr.householderQ() * Eigen::MatrixXd::Identity(rows, state.design.cols());
#pragma omp parallel for schedule(static) num_threads(o.threads)
    for (int c = 0; c < d; ++c) {
      auto block = jac.middleRows(int64_t{c} * rows, rows);
      block -= q * (q.transpose() * block);
    }
    Eigen::VectorXd r(rows * d);
    for (int c = 0; c < d; ++c) r.segment(int64_t{c} * rows, rows) = state.residual.col(c);
    Eigen::MatrixXd normal = Eigen::MatrixXd::Zero(m * dd, m * dd);
    normal.selfadjointView<Eigen::Lower>().rankUpdate(jac.transpose());
    normal = normal.selfadjointView<Eigen::Lower>();
    const Eigen::VectorXd gradient = jac.transpose() * r;
    const Eigen::VectorXd diag = normal.diagonal().cwiseMax(kDiagonalFloor * normal.diagonal().maxCoeff());
    bool accepted = false, at_floor = false;
    for (int attempt = 0; attempt < 12 && !accepted; ++attempt) {
      Eigen::MatrixXd damped = normal;
      damped.diagonal() += lambda * diag;
      const Eigen::VectorXd step = -Eigen::LDLT<Eigen::MatrixXd>(damped).solve(gradient);
      std::vector<MatD> trial = state.thetas;
      for (int i = 0; i < m; ++i) trial[i] += Eigen::Map<const MatD>(step.data() + i * dd, d, d);
      State next = evaluate(trial, data, o.threads);
      if (next.cost < state.cost) {
        // Near zero, a step that does not halve the error is rounding noise.
        at_floor = next.cost < o.floor && next.cost > 0.5 * state.cost;
        state = std::move(next);
        lambda = std::max(lambda / 5, kMinimumDamping);
        accepted = true;
      } else {
        lambda *= 8;
      }
    }
    if (!accepted) {
      rep.stop_reason = "no step decreases the error (rounding floor)";
      break;
    }
    ++rep.iterations;
    rep.train_error.push_back(state.cost);
    progress.update(rep.iterations);
    if (at_floor) {
      rep.stop_reason = "rounding floor (the last step did not halve the error)";
      break;
    }
  }
  result.layer = state.layer;
  rep.validation_error_after = relative_error(result.layer, val_raw, o.threads);
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace mha
