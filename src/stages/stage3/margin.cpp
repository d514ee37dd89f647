#include "stages/stage3/margin.hpp"

#include "util/clock.hpp"
#include "util/progress.hpp"

#include <Eigen/Cholesky>
#include <Eigen/QR>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace mha {

double logit_margin(const RowVec<double>& logits, int& argmax) {
  argmax = 0;
  for (Eigen::Index b = 1; b < logits.size(); ++b)
    if (logits(b) > logits(argmax)) argmax = static_cast<int>(b);
  double second = -INFINITY;
  for (Eigen::Index b = 0; b < logits.size(); ++b)
    if (b != argmax) second = std::max(second, logits(b));
  return logits(argmax) - second;
}

namespace {
struct Event {
  RowVec<double> token;   // x_{j*}
  RowVec<double> label;   // y_a
  SelectedEvent where;
  // With the truth: the smallest true head's margin on j* (−∞ when some head's argmax is
  // another token) and the sum over heads of Lemma 3.3.1's S(k, μ_i)/2 (Corollary 3.3.2).
  double true_min_margin = INFINITY;
  double true_bias = 0;
  bool true_not_argmax = false;
};

// Lemma 3.3.1's sharp bound S(k, μ) = 2(k−1)e^{−μ}/(1 + (k−1)e^{−μ}).
double sharp_bound(int k, double mu) {
  const double q = (k - 1) * std::exp(-mu);
  return 2 * q / (1 + q);
}

// The order of the top-events selection: larger margin first, then earlier sample, then row.
bool ranks_before(const Event& a, const Event& b) {
  if (a.where.margin != b.where.margin) return a.where.margin > b.where.margin;
  if (a.where.sample != b.where.sample) return a.where.sample < b.where.sample;
  return a.where.row < b.where.row;
}
bool in_sample_order(const Event& a, const Event& b) {
  return a.where.sample != b.where.sample ? a.where.sample < b.where.sample : a.where.row < b.where.row;
}

// The rank of the kept events' tokens, as the fast path decides ranks (column-pivoted QR).
int tokens_rank(const std::vector<Event>& events, const std::vector<char>& keep, int d) {
  int64_t n = 0;
  for (char k : keep) n += k;
  MatD tokens(n, d);
  for (size_t e = 0, row = 0; e < events.size(); ++e)
    if (keep[e]) tokens.row(static_cast<Eigen::Index>(row++)) = events[e].token;
  return static_cast<int>(Eigen::ColPivHouseholderQR<MatD>(tokens).rank());
}

// Fits W on the kept events and records them as the fit's inputs.
void least_squares(const std::vector<Event>& events, const std::vector<char>& keep, int d, MarginResult& result) {
  int64_t n = 0;
  for (char k : keep) n += k;
  MatD& r = result.fit_tokens;
  MatD& t = result.fit_labels;
  r.resize(n, d);
  t.resize(n, d);
  int64_t row = 0;
  for (size_t e = 0; e < events.size(); ++e)
    if (keep[e]) {
      r.row(row) = events[e].token;
      t.row(row) = events[e].label;
      ++row;
    }
  result.w_sum = Eigen::ColPivHouseholderQR<MatD>(r).solve(t);
}
}  // namespace

std::vector<MatD> proxy_logits(const MatD& x, const std::vector<MatD>& proxies) {
  std::vector<MatD> logits;
  for (const MatD& p : proxies) logits.push_back(x * p * x.transpose());
  return logits;
}

double joint_margin(const std::vector<MatD>& logits, int row, int& argmax) {
  double margin = INFINITY;
  for (size_t p = 0; p < logits.size(); ++p) {
    int j;
    const double mu = logit_margin(logits[p].row(row), j);
    if (p == 0) argmax = j;
    else if (j != argmax) return -INFINITY;
    margin = std::min(margin, mu);
  }
  return margin;
}

MarginResult refine_wsum(const SampleSource& source, const MatD& proxy, const MarginOptions& o, const Layer* truth) {
  return refine_wsum(source, std::vector<MatD>{proxy}, o, truth);
}

namespace {

// Pilot: the margin distribution of the proxy, for an adaptive threshold (the
// top accept_fraction of the pilot's margins).
void pilot_threshold(const SampleSource& source, const std::vector<MatD>& proxies, const MarginOptions& o,
                     int64_t pilot, MarginReport& rep) {
  const int k = source.k();
  const LabelledBatch batch = source.draw(o.first_sample, pilot, o.threads);
  std::vector<double> margins(static_cast<size_t>(pilot) * k);
#pragma omp parallel for schedule(static) num_threads(o.threads)
  for (int64_t s = 0; s < pilot; ++s) {
    const std::vector<MatD> logits = proxy_logits(batch.x.sample(s), proxies);
    for (int a = 0; a < k; ++a) {
      int j;
      margins[s * k + a] = joint_margin(logits, a, j);
    }
  }
  const size_t idx = std::min(margins.size() - 1, static_cast<size_t>((1.0 - o.accept_fraction) * margins.size()));
  std::nth_element(margins.begin(), margins.begin() + idx, margins.end());
  rep.threshold = margins[idx];
  rep.pilot_samples = pilot;
}

// The events of one batch (samples first.. of the source, `count` of them): every
// row whose proxies agree on the argmax with a joint margin ≥ the threshold,
// with what the true heads say of it when the truth is known. Per sample, so
// that the order does not depend on the threads.
std::vector<std::vector<Event>> events_in_batch(const LabelledBatch& batch, int64_t count, uint64_t first,
                                                const std::vector<MatD>& proxies, const Layer* truth, double threshold,
                                                int k, int d, int threads) {
  std::vector<std::vector<Event>> found(count);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t s = 0; s < count; ++s) {
    const MatD x = batch.x.sample(s);
    const std::vector<MatD> logits = proxy_logits(x, proxies);
    for (int a = 0; a < k; ++a) {
      int j;
      const double margin = joint_margin(logits, a, j);
      if (!(margin >= threshold)) continue;
      Event e{x.row(j), Eigen::Map<const RowVec<double>>(batch.y.data() + (s * k + a) * d, d),
              {static_cast<int64_t>(first + s), a, j, margin}};
      if (truth)
        for (const auto& h : truth->heads) {
          const MatD true_logits = x * h.theta * x.transpose();
          int tj;
          const double tm = logit_margin(true_logits.row(a), tj);
          e.true_not_argmax |= tj != j;
          e.true_min_margin = std::min(e.true_min_margin, tj != j ? -INFINITY : tm);
          e.true_bias += tj != j ? 1.0 : sharp_bound(k, tm) / 2;
        }
      found[s].push_back(std::move(e));
    }
  }
  return found;
}

// Events as doubles for the all-gather (util/processes.hpp): per event the token
// and the label (d each), then sample, a, j, margin and the truth's three values.
std::vector<double> pack_events(const std::vector<Event>& events) {
  std::vector<double> v;
  for (const Event& e : events) {
    v.insert(v.end(), e.token.data(), e.token.data() + e.token.size());
    v.insert(v.end(), e.label.data(), e.label.data() + e.label.size());
    v.insert(v.end(), {double(e.where.sample), double(e.where.row), double(e.where.argmax), e.where.margin,
                       e.true_min_margin, e.true_bias, e.true_not_argmax ? 1.0 : 0.0});
  }
  return v;
}

std::vector<Event> unpack_events(const std::vector<double>& v, int d) {
  const size_t stride = 2 * static_cast<size_t>(d) + 7;
  if (v.size() % stride != 0) throw std::runtime_error("stage 3: a process's share of the events arrived truncated");
  std::vector<Event> events;
  for (size_t i = 0; i < v.size(); i += stride) {
    const double* p = v.data() + i;
    Event e{Eigen::Map<const RowVec<double>>(p, d), Eigen::Map<const RowVec<double>>(p + d, d),
            {static_cast<int64_t>(p[2 * d]), static_cast<int>(p[2 * d + 1]), static_cast<int>(p[2 * d + 2]), p[2 * d + 3]}};
    e.true_min_margin = p[2 * d + 4];
    e.true_bias = p[2 * d + 5];
    e.true_not_argmax = p[2 * d + 6] != 0;
    events.push_back(std::move(e));
  }
  return events;
}

// Top events: the rows of largest margin come from few tokens (⟨v, x⟩ over x ∈ {±1}^d is
// largest at sign(v) alone), so the `target` largest can have tokens of rank below d
// (measured: rank 9 of 12 at (12,2,2)). The stage keeps this many times `target` rows of
// largest margin while it scans, and then the shortest prefix of them, by margin, with at
// least `target` rows and tokens of rank d (growing by target/4), or all of them.
constexpr int64_t kTopEventsPool = 16;

int64_t top_prefix(const std::vector<Event>& ranked, int64_t target, int d) {
  const int64_t n = static_cast<int64_t>(ranked.size());
  const int64_t step = std::max<int64_t>(1, target / 4);
  for (int64_t k = std::min(target, n);; k = std::min(n, k + step)) {
    std::vector<char> keep(ranked.size(), 0);
    std::fill(keep.begin(), keep.begin() + k, 1);
    if (k == n || tokens_rank(ranked, keep, d) == d) return k;
  }
}

// Top-events selection: `events` keeps the `target` best by ranks_before (in that order).
void keep_top(std::vector<Event>& events, std::vector<Event>&& more, int64_t target) {
  for (auto& e : more) events.push_back(std::move(e));
  std::sort(events.begin(), events.end(), ranks_before);
  if (static_cast<int64_t>(events.size()) > target) events.resize(static_cast<size_t>(target));
}

// With the truth and top_events: what the rule "threshold M on the proxy" would have
// done on the same rows (every row with proxy margin ≥ M, and the first target of them).
struct LemmaRule {
  std::vector<Event> first;
  int64_t rows = 0, fails = 0;
  void add(const std::vector<Event>& batch, double m, int64_t target) {
    for (const Event& e : batch) {
      ++rows;
      fails += e.true_min_margin < m;
      if (static_cast<int64_t>(first.size()) < target) first.push_back(e);
    }
  }
};

// Draws batches after the pilot until `target` events are found, `limit` samples
// are drawn or the time budget ends; each process draws its block of every batch,
// and the events are merged in sample order. Returns the samples drawn.
int64_t collect_events(const SampleSource& source, const std::vector<MatD>& proxies, const MarginOptions& o,
                       const Layer* truth, MarginReport& rep, int64_t pilot, int64_t target, int64_t limit,
                       std::chrono::steady_clock::time_point start, Progress& progress, std::vector<Event>& events,
                       LemmaRule* lemma_rule) {
  const int k = source.k(), d = source.d();
  check_processes(o.processes, "stage 3");
  rep.samples_by_process.assign(static_cast<size_t>(o.processes.size), 0);
  int64_t drawn = 0;
  // Top events: the whole budget, each batch's rows above the pool's smallest margin.
  const bool top = o.top_events;
  const int64_t pool = top ? kTopEventsPool * target : target;
  while (drawn < limit && (top || static_cast<int64_t>(events.size()) < target)) {
    const int64_t count = std::min<int64_t>(262144, limit - drawn);
    const std::pair<int64_t, int64_t> block = o.processes.share(count);
    o.processes.count_shares(count, rep.samples_by_process);
    const uint64_t first = o.first_sample + pilot + drawn + block.first;
    const int64_t share = block.second - block.first;
    const LabelledBatch batch = source.draw(first, share, o.threads);
    const double floor = top && static_cast<int64_t>(events.size()) == pool
                             ? std::max(rep.threshold, events.back().where.margin) : rep.threshold;
    std::vector<Event> mine;
    for (auto& f : events_in_batch(batch, share, first, proxies, truth, lemma_rule ? rep.threshold : floor, k, d,
                                   o.threads))
      for (auto& e : f) mine.push_back(std::move(e));  // sample order: independent of threads
    if (o.processes.size > 1) mine = unpack_events(o.processes.all_gather(pack_events(mine)), d);  // and of processes
    if (lemma_rule) {
      lemma_rule->add(mine, rep.threshold, target);
      std::erase_if(mine, [&](const Event& e) { return e.where.margin < floor; });
    }
    if (top) keep_top(events, std::move(mine), pool);
    else for (auto& e : mine) events.push_back(std::move(e));
    drawn += count;
    progress.update(drawn);
    if (o.max_seconds > 0 && first_process_value(o.processes, seconds_since(start) > o.max_seconds)) break;
  }
  if (top) {
    // The largest margins, as many as give `target` events whose tokens have rank d; the
    // threshold they meet is the smallest kept margin (every row above it is kept).
    events.resize(static_cast<size_t>(top_prefix(events, target, d)));
    if (static_cast<int64_t>(events.size()) >= target && !events.empty())
      rep.threshold = std::max(rep.threshold, events.back().where.margin);
    std::sort(events.begin(), events.end(), in_sample_order);
  }
  return drawn;
}

// The least-squares W_Σ on every event, then the robust refit: events where some
// head was not large-margin have large residuals. Returns the events the fit kept.
std::vector<char> fit_robustly(const std::vector<Event>& events, int d, double trim, MarginResult& result) {
  MarginReport& rep = result.report;
  std::vector<char> keep(events.size(), 1);
  least_squares(events, keep, d, result);
  std::vector<double> residual(events.size());
  for (size_t e = 0; e < events.size(); ++e) residual[e] = (events[e].token * result.w_sum - events[e].label).norm();
  std::vector<double> sorted = residual;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  const double median = sorted[sorted.size() / 2];
  std::vector<char> trimmed(events.size(), 0);
  for (size_t e = 0; e < events.size(); ++e) trimmed[e] = residual[e] <= trim * median;
  int64_t kept = 0;
  for (char c : trimmed) kept += c;
  // The refit only on a kept set of full rank d: on fewer independent tokens the
  // least-squares W_Σ is not unique (a basic solution, which no reference can
  // check); otherwise the fit on every event stands.
  if (kept >= d && kept < rep.events && tokens_rank(events, trimmed, d) == d) {
    keep = trimmed;
    least_squares(events, keep, d, result);
  } else {
    kept = rep.events;
  }
  rep.events_kept = kept;
  return keep;
}

// The fit's standard error from the kept events' residuals and Gram matrix
// (when they outnumber the unknowns per column).
void standard_error(const std::vector<Event>& events, const std::vector<char>& keep, int d, MarginResult& result) {
  MarginReport& rep = result.report;
  const int64_t kept = rep.events_kept;
  MatD tokens_kept(kept, d);
  double residual2 = 0;
  for (size_t e = 0, row = 0; e < events.size(); ++e)
    if (keep[e]) {
      tokens_kept.row(row++) = events[e].token;
      residual2 += (events[e].token * result.w_sum - events[e].label).squaredNorm();
    }
  if (kept > d) {
    const MatD gram = tokens_kept.transpose() * tokens_kept;
    const double trace_inverse = gram.ldlt().solve(MatD::Identity(d, d)).trace();
    rep.standard_error = std::sqrt(std::max(trace_inverse, 0.0) * residual2 / double(kept - d));
    rep.relative_standard_error = rep.standard_error / std::max(result.w_sum.norm(), 1e-300);
  }
}

// What the truth says of the events and of the fit; `premise` is the margin Lemma 3.3.1 needs of every head.
MarginTruth margin_truth(const std::vector<Event>& events, const Layer& truth, const MatD& w_fit, double threshold,
                         double premise) {
  MarginTruth t;
  const MatD w_sum = truth.w_sum();
  if (w_fit.size() > 0) t.w_sum_rel_error = (w_fit - w_sum).norm() / w_sum.norm();
  int64_t not_large = 0, not_argmax = 0, fails = 0;
  double bias = 0;
  std::vector<double> margins;
  for (const auto& e : events) {
    not_large += e.true_min_margin < threshold;
    not_argmax += e.true_not_argmax;
    fails += e.true_min_margin < premise;
    bias += e.true_bias;
    margins.push_back(e.true_min_margin);
  }
  const double n = double(events.size());
  t.true_not_large_margin = double(not_large) / n;
  t.true_not_argmax = double(not_argmax) / n;
  t.premise_margin = premise;
  t.premise_fails = double(fails) / n;
  t.mean_event_bias_bound = bias / n;
  std::nth_element(margins.begin(), margins.begin() + margins.size() / 2, margins.end());
  t.median_true_margin = margins[margins.size() / 2];
  return t;
}

// The rule "threshold M on the proxy" on the same rows: its premise share and its fit's W_Σ error.
void lemma_rule_truth(const LemmaRule& rule, const Layer& truth, int d, double trim, MarginTruth& t) {
  t.lemma_rule_rows = rule.rows;
  if (rule.rows > 0) t.lemma_rule_premise_fails = double(rule.fails) / double(rule.rows);
  if (rule.first.empty() || tokens_rank(rule.first, std::vector<char>(rule.first.size(), 1), d) < d) return;
  MarginResult fit;
  fit.report.events = static_cast<int64_t>(rule.first.size());
  fit_robustly(rule.first, d, trim, fit);
  const MatD w_sum = truth.w_sum();
  t.lemma_rule_w_sum_rel_error = (fit.w_sum - w_sum).norm() / w_sum.norm();
}

}  // namespace

MarginResult refine_wsum(const SampleSource& source, const std::vector<MatD>& proxies, const MarginOptions& o,
                         const Layer* truth) {
  const auto start = std::chrono::steady_clock::now();
  const int d = source.d();
  MarginResult result;
  MarginReport& rep = result.report;
  const bool adaptive = !(o.fixed_threshold > 0);
  const int64_t pilot = adaptive ? std::min<int64_t>(o.pilot_samples, samples_from(source, o.first_sample)) : 0;
  if (samples_from(source, o.first_sample) == 0) {  // the source ran out: nothing to refine with
    rep.budget_exhausted = true;
    rep.seconds = seconds_since(start);
    return result;
  }
  if (!adaptive) rep.threshold = o.fixed_threshold;
  else pilot_threshold(source, proxies, o, pilot, rep);
  if (o.top_events && adaptive) throw std::invalid_argument("stage 3: top_events needs a fixed threshold (the lemma's M)");
  const int64_t target = o.target_events > 0 ? o.target_events : 16 * int64_t{d};
  const int64_t limit = std::min<int64_t>(o.max_samples, samples_from(source, o.first_sample + pilot));
  std::vector<Event> events;
  Progress progress("stage 3: margins", limit);
  const auto loop_start = std::chrono::steady_clock::now();
  LemmaRule lemma_rule;
  LemmaRule* measure_lemma_rule = truth && o.top_events ? &lemma_rule : nullptr;
  rep.samples =
      collect_events(source, proxies, o, truth, rep, pilot, target, limit, start, progress, events, measure_lemma_rule);
  rep.loop_seconds = seconds_since(loop_start);
  rep.events = static_cast<int64_t>(events.size());
  for (const Event& e : events) result.selected.push_back(e.where);
  rep.budget_exhausted = rep.events < target;
  if (!events.empty()) {
    MatD tokens(events.size(), d);
    for (size_t e = 0; e < events.size(); ++e) tokens.row(e) = events[e].token;
    rep.event_rank = static_cast<int>(Eigen::ColPivHouseholderQR<MatD>(tokens).rank());
  }
  if (rep.event_rank == d) {
    const std::vector<char> keep = fit_robustly(events, d, o.trim, result);
    standard_error(events, keep, d, result);
  }
  if (truth && !events.empty()) {
    rep.truth = margin_truth(events, *truth, result.w_sum, rep.threshold, adaptive ? rep.threshold : o.fixed_threshold);
    rep.truth->premise_measured = !adaptive;
  }
  if (rep.truth && measure_lemma_rule) lemma_rule_truth(lemma_rule, *truth, d, o.trim, *rep.truth);
  rep.seconds = seconds_since(start);
  return result;
}

}  // namespace mha
