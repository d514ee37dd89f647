#include "baseline/random_polish.hpp"

#include "util/format.hpp"
#include "numeric/rng.hpp"
#include "stages/stage6/net.hpp"
#include "util/clock.hpp"
#include "util/progress.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

namespace mha {

using nlohmann::json;

namespace {

// Uniform in [0, 1) from the top 53 bits of a Philox word.
double unit_uniform(uint64_t word) { return static_cast<double>(word >> 11) * 0x1.0p-53; }

double start_norm(int start, int head, const RandomPolishOptions& o) {
  if (o.init_theta_norm > 0) return o.init_theta_norm;
  const auto block = philox_block(o.init_seed, Stream::polish_start, static_cast<uint64_t>(start),
                                  static_cast<uint64_t>(head), 0, 1);
  return o.radius * unit_uniform(block[0]);
}

// Each fit's polishing options: the training set defaults to kFitSampleFactor
// times polishing's own. That default is sized for a start near the truth
// (polish.cpp); from random starts at (16,2,2), logit scale 6, it was too
// few: 6 of 6 starts stalled at training error 0.1–0.2 with validation error
// 0.4–0.6 (an overfit), while 4× (1024 training samples) took 3 of 3 starts
// to parameter error 3e−16 in 12–24 iterations, and 2 of 3 at scale 24.
// The linear solver stays polishing's automatic choice (dense up to m·d² = 1024):
// the matrix-free one reuses its first iteration's preconditioner, which suits
// a start near the truth, not a random one — two starts at (16,2,2) took over
// 15 min with it against 61 s dense (shared machine, load ~14).
constexpr int64_t kFitSampleFactor = 4;

PolishOptions fit_options(int d, int k, const RandomPolishOptions& o) {
  PolishOptions po = o.polish;
  po.threads = o.threads;
  if (po.samples == 0) {
    PolishOptions def = po;
    def.validation_samples = 1;
    po.samples = kFitSampleFactor * (polish_samples_needed(d, k, o.m, def) - 1);
  }
  return po;
}

// Where start s fits: chunk s of the stream, or s mod q for a dataset with q chunks.
struct Chunks {
  int64_t first = 0, size = 0, count = 0;  // count: whole chunks available (max for an oracle)
  uint64_t first_sample(int start) const {
    return static_cast<uint64_t>(first + (start % count) * size);
  }
};

Chunks make_chunks(const SampleSource& source, const RandomPolishOptions& o, const PolishOptions& fit) {
  Chunks c{o.validation_samples, polish_samples_needed(source.d(), source.k(), o.m, fit), 0};
  c.count = source.available() == std::numeric_limits<int64_t>::max()
                ? std::numeric_limits<int>::max()
                : std::max<int64_t>(0, (source.available() - c.first) / c.size);
  return c;
}

// Polishing from start s on its chunk, scored on the shared validation set.
RandomPolishStart run_start(const SampleSource& source, int s, const Chunks& chunks, const LabelledBatch& validation,
                            const RandomPolishOptions& o, const PolishOptions& fit, double seconds_left,
                            const Instance* truth, Layer& layer) {
  const auto t0 = std::chrono::steady_clock::now();
  RandomPolishStart st;
  st.start = s;
  st.first_sample = chunks.first_sample(s);
  st.samples = s < chunks.count ? chunks.size : 0;
  const Layer start = random_polish_start(source.d(), s, o);
  for (const auto& h : start.heads) st.theta_norms.push_back(h.theta.norm());
  PolishOptions po = fit;
  po.first_sample = st.first_sample;
  po.max_seconds = seconds_left;
  const PolishResult pr = polish_layer(source, start, po);
  layer = pr.layer;
  st.iterations = pr.report.iterations;
  st.stop_reason = pr.report.stop_reason;
  if (!pr.report.train_error.empty()) st.train_error = pr.report.train_error.back();
  st.fit_validation_error = pr.report.validation_error_after;
  st.validation_error = relative_error(layer, validation, o.threads);
  if (!std::isfinite(st.validation_error)) st.validation_error = INFINITY;
  if (truth) {
    const LayerErrors e = compare_layers(layer, *truth, o.test_seed, 0, o.threads);
    st.theta_max_rel = e.theta_max_rel;
    st.w_max_rel = e.w_max_rel;
  }
  st.seconds = seconds_since(t0);
  return st;
}

}  // namespace

std::string check_random_polish(const SampleSource& source, const RandomPolishOptions& o) {
  if (o.m < 1) return format("random-polish needs m ≥ 1 heads, got %d", o.m);
  if (o.starts < 1) return format("random-polish needs at least one start, got --starts %d", o.starts);
  if (o.validation_samples < 1) return "random-polish needs a validation set of at least one sample";
  if (o.max_samples < 0 || o.max_seconds < 0) return "random-polish: budgets must not be negative";
  if (!(o.init_theta_norm >= 0) || !std::isfinite(o.init_theta_norm))
    return "random-polish: --init-theta-norm must be a finite number ≥ 0";
  if (!(o.radius > 0) || !std::isfinite(o.radius)) return "random-polish: --radius must be a finite number > 0";
  const Chunks c = make_chunks(source, o, fit_options(source.d(), source.k(), o));
  if (c.count < 1)
    return format("the data hold %lld samples: fewer than the %lld-sample validation set and one %lld-sample fit",
                  (long long)source.available(), (long long)c.first, (long long)c.size);
  if (o.max_samples > 0 && o.max_samples < c.first + c.size)
    return format("--max-samples %lld is less than the %lld-sample validation set and one %lld-sample fit",
                  (long long)o.max_samples, (long long)c.first, (long long)c.size);
  return "";
}

Layer random_polish_start(int d, int start, const RandomPolishOptions& o) {
  Layer layer;
  for (int i = 0; i < o.m; ++i) {
    const MatD g = gaussian_matrix(o.init_seed, Stream::polish_start, static_cast<uint64_t>(start),
                                   static_cast<uint64_t>(i), d);
    layer.heads.push_back({g * (start_norm(start, i, o) / g.norm()), MatD::Zero(d, d)});
  }
  return layer;
}

RandomPolishResult random_polish(const SampleSource& source, const RandomPolishOptions& o, const Instance* truth) {
  const auto t0 = std::chrono::steady_clock::now();
  RandomPolishResult result;
  RandomPolishReport& rep = result.report;
  if (auto e = check_random_polish(source, o); !e.empty()) {
    rep.message = e;
    return result;
  }
  const PolishOptions fit = fit_options(source.d(), source.k(), o);
  const Chunks chunks = make_chunks(source, o, fit);
  rep.samples_per_fit = chunks.size;
  const LabelledBatch validation = source.draw(0, o.validation_samples, o.threads);
  rep.validation_samples = validation.x.count;
  rep.samples_total = rep.validation_samples;
  rep.stop_reason = "starts";
  Progress progress("random-polish", o.starts);
  for (int s = 0; s < o.starts; ++s) {
    if (s > 0 && o.max_seconds > 0 && seconds_since(t0) >= o.max_seconds) {  // start 0 always runs
      rep.stop_reason = "time";
      break;
    }
    const int64_t fresh = s < chunks.count ? chunks.size : 0;
    if (o.max_samples > 0 && rep.samples_total + fresh > o.max_samples) {
      rep.stop_reason = "samples";
      break;
    }
    Layer layer;
    // The time budget also ends a running fit (at its next iteration), so the run keeps to it.
    const double left = o.max_seconds > 0 ? std::max(o.max_seconds - seconds_since(t0), 1e-9) : 0;
    rep.starts.push_back(run_start(source, s, chunks, validation, o, fit, left, truth, layer));
    rep.samples_total += rep.starts.back().samples;
    if (rep.best_start < 0 || rep.starts.back().validation_error < rep.starts[rep.best_start].validation_error) {
      rep.best_start = s;
      result.layer = std::move(layer);
    }
    progress.update(s + 1);
  }
  if (truth) rep.errors = compare_layers(result.layer, *truth, o.test_seed, o.test_samples, o.threads);
  rep.seconds = seconds_since(t0);
  rep.ok = true;
  return result;
}

json to_json(const RandomPolishReport& r) {
  json starts = json::array();
  for (const auto& s : r.starts) {
    json j = {{"start", s.start}, {"first_sample", s.first_sample}, {"samples", s.samples}, {"seconds", s.seconds},
              {"theta_norms", s.theta_norms}, {"iterations", s.iterations}, {"stop_reason", s.stop_reason},
              {"validation_error", s.validation_error}};
    if (std::isfinite(s.train_error)) j["train_error"] = s.train_error;
    if (std::isfinite(s.fit_validation_error)) j["fit_validation_error"] = s.fit_validation_error;
    if (std::isfinite(s.theta_max_rel)) j["theta_max_rel"] = s.theta_max_rel;
    if (std::isfinite(s.w_max_rel)) j["w_max_rel"] = s.w_max_rel;
    starts.push_back(j);
  }
  // The same top-level keys as the other methods' reports, one "stages" entry for the whole run.
  json stage = {{"stage", "random-polish"}, {"samples", r.samples_total}, {"seconds", r.seconds},
                {"starts", static_cast<int64_t>(r.starts.size())}, {"stop_reason", r.stop_reason},
                {"best_start", r.best_start}};
  json out = {{"method", "random-polish"}, {"stages", json::array({stage})}, {"starts", starts},
              {"samples_per_fit", r.samples_per_fit}, {"samples_total", r.samples_total},
              {"validation_samples", r.validation_samples}, {"seconds", r.seconds}, {"ok", r.ok}, {"message", r.message}};
  if (r.errors) out["errors"] = errors_json(*r.errors);
  return out;
}

std::string format_table(const RandomPolishReport& r) {
  std::ostringstream out;
  out << format("%6s %11s %9s %8s %6s %12s %12s %12s %12s\n", "start", "first", "samples", "seconds", "iters",
                "max ‖Θ_i‖", "validation", "max Θ err", "max W err");
  for (const auto& s : r.starts) {
    const double norm = s.theta_norms.empty() ? NAN : *std::max_element(s.theta_norms.begin(), s.theta_norms.end());
    out << format("%6d %11llu %9lld %8.2f %6d %12.3g %12.3e %12.3e %12.3e%s\n", s.start,
                  (unsigned long long)s.first_sample, (long long)s.samples, s.seconds, s.iterations, norm,
                  s.validation_error, s.theta_max_rel, s.w_max_rel, s.start == r.best_start ? "  <- kept" : "");
  }
  out << format("\nsamples: %lld (incl. %lld-sample validation set; %lld per fit), %zu starts; %.1f s; stopped: %s\n",
                (long long)r.samples_total, (long long)r.validation_samples, (long long)r.samples_per_fit,
                r.starts.size(), r.seconds, r.stop_reason.c_str());
  if (!r.message.empty()) out << "note: " << r.message << "\n";
  if (r.errors)
    out << format("%-34s max Θ error %.3e   max W error %.3e   test error %.3e\n", "errors (random-polish, kept start):",
                  r.errors->theta_max_rel, r.errors->w_max_rel, r.errors->test_relative_error);
  return out.str();
}

}  // namespace mha
