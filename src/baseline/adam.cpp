#include "baseline/adam.hpp"

#include "baseline/squared_loss_gradient.hpp"
#include "util/format.hpp"
#include "numeric/rng.hpp"
#include "stages/stage6/net.hpp"
#include "util/clock.hpp"
#include "util/progress.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <numbers>
#include <sstream>

namespace mha {

using nlohmann::json;

const char* to_string(AdamInit init) { return init == AdamInit::symmetric ? "symmetric" : "random"; }

bool parse_adam_init(const std::string& name, AdamInit& out) {
  if (name == "random") out = AdamInit::random;
  else if (name == "symmetric") out = AdamInit::symmetric;
  else return false;
  return true;
}

namespace {

// Gradients are summed over this many fixed slices of each batch and the slices
// added in order, so a step is bit-identical for any thread count.
constexpr int kSlices = 16;

Layer zeros_like(const Layer& layer) {
  Layer z = layer;
  for (auto& h : z.heads) {
    h.theta.setZero();
    h.w.setZero();
  }
  return z;
}

// One Adam moment pair per parameter matrix.
struct Moments {
  Layer first, second;
};

void adam_update(MatD& p, MatD& m1, MatD& m2, const MatD& g, const AdamOptions& o, double rate, double c1, double c2) {
  m1 = o.beta1 * m1 + (1 - o.beta1) * g;
  m2 = o.beta2 * m2 + (1 - o.beta2) * g.cwiseProduct(g);
  p.array() -= rate * (m1.array() / c1) / ((m2.array() / c2).sqrt() + o.epsilon);
}

// Mean gradient (and mean loss) of the batch.
LossGradient<double> batch_gradient(const Layer& student, const LabelledBatch& b, int threads) {
  const int k = b.x.k, d = b.x.d;
  const int64_t n = b.x.count;
  std::vector<LossGradient<double>> slices(kSlices, LossGradient<double>{0.0, zeros_like(student)});
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int s = 0; s < kSlices; ++s) {
    for (int64_t t = n * s / kSlices; t < n * (s + 1) / kSlices; ++t) {
      const MatD x = b.x.sample(t);
      const MatD y = Eigen::Map<const MatD>(b.y.data() + t * k * d, k, d);
      const LossGradient<double> g = squared_loss_gradient<double>(student, x, y);
      slices[s].loss += g.loss;
      for (size_t i = 0; i < student.heads.size(); ++i) {
        slices[s].gradient.heads[i].theta += g.gradient.heads[i].theta;
        slices[s].gradient.heads[i].w += g.gradient.heads[i].w;
      }
    }
  }
  LossGradient<double> total = std::move(slices[0]);
  for (int s = 1; s < kSlices; ++s) {
    total.loss += slices[s].loss;
    for (size_t i = 0; i < student.heads.size(); ++i) {
      total.gradient.heads[i].theta += slices[s].gradient.heads[i].theta;
      total.gradient.heads[i].w += slices[s].gradient.heads[i].w;
    }
  }
  const double scale = 1.0 / static_cast<double>(std::max<int64_t>(n, 1));
  total.loss *= scale;
  for (auto& h : total.gradient.heads) {
    h.theta *= scale;
    h.w *= scale;
  }
  return total;
}

}  // namespace

Layer adam_initial_layer(int d, const AdamOptions& o) {
  Layer layer;
  for (int i = 0; i < o.m; ++i) {
    const uint64_t head = o.init == AdamInit::symmetric ? 0 : static_cast<uint64_t>(i);
    const MatD g = gaussian_matrix(o.init_seed, Stream::student_init, head, 0, d);
    const MatD w = gaussian_matrix(o.init_seed, Stream::student_init, head, 1, d);
    layer.heads.push_back({g * (o.init_theta_norm / d), w * (o.init_w_scale / std::sqrt(double(d)))});
  }
  return layer;
}

namespace {

// What the run trains on: the validation set, then consecutive training
// samples cycling through a finite dataset, `batch` at a time.
struct AdamData {
  LabelledBatch validation;
  int64_t train_first = 0, train_available = 0, batch = 0;
};

// The data of a run, or false with the report's message saying why there are none.
bool adam_data(const SampleSource& source, const AdamOptions& o, AdamReport& rep, AdamData& data) {
  if (o.m < 1 || o.batch < 1 || (o.max_samples <= 0 && o.max_seconds <= 0)) {
    rep.message = "adam needs m ≥ 1, a batch ≥ 1 and a sample or time budget";
    return false;
  }
  data.validation = source.draw(0, o.validation_samples, o.threads);
  data.train_first = data.validation.x.count;
  data.train_available = samples_from(source, data.train_first);
  if (data.validation.x.count < o.validation_samples || data.train_available < 1) {
    rep.message = "the data hold " + std::to_string(source.available()) + " samples: fewer than the " +
                  std::to_string(o.validation_samples) + "-sample validation set and one training batch";
    return false;
  }
  rep.validation_samples = data.validation.x.count;
  data.batch = std::min(o.batch, data.train_available);
  return true;
}

// The student and its moments as training moves them.
struct AdamStudent {
  Layer layer;
  Moments moments;
  int64_t trained = 0;  // training samples drawn
};

// Step `step` at learning rate `rate` on the next batch; returns the batch's mean loss.
double adam_step(const SampleSource& source, const AdamOptions& o, const AdamData& data, int64_t step, double rate,
                 AdamStudent& s) {
  const uint64_t first = data.train_first + static_cast<uint64_t>(s.trained % data.train_available);
  LabelledBatch b = source.draw(first, std::min(data.batch, data.train_available - (s.trained % data.train_available)),
                                o.threads);
  s.trained += b.x.count;
  const LossGradient<double> g = batch_gradient(s.layer, b, o.threads);
  const double c1 = 1 - std::pow(o.beta1, double(step)), c2 = 1 - std::pow(o.beta2, double(step));
  for (int i = 0; i < o.m; ++i) {
    adam_update(s.layer.heads[i].theta, s.moments.first.heads[i].theta, s.moments.second.heads[i].theta,
                g.gradient.heads[i].theta, o, rate, c1, c2);
    adam_update(s.layer.heads[i].w, s.moments.first.heads[i].w, s.moments.second.heads[i].w, g.gradient.heads[i].w, o,
                rate, c1, c2);
  }
  return g.loss;
}

// The trajectory's point after `step`: recorded, the best layer by validation
// kept in `best`; true, with the report's stop reason, when it ends the run.
bool adam_checkpoint(const AdamOptions& o, const AdamData& data, const AdamStudent& s, const Instance* truth,
                     int64_t step, double rate, double loss, double seconds, AdamReport& rep, Layer& best) {
  AdamCheckpoint c;
  c.step = step;
  c.samples = rep.validation_samples + s.trained;
  c.learning_rate = rate;
  c.train_loss = loss;
  c.validation_error = relative_error(s.layer, data.validation, o.threads);
  if (!std::isfinite(c.validation_error)) c.validation_error = INFINITY;
  if (truth) {
    const LayerErrors e = compare_layers(s.layer, *truth, o.test_seed, 0, o.threads);
    c.theta_max_rel = e.theta_max_rel;
    c.w_max_rel = e.w_max_rel;
  }
  c.seconds = seconds;
  const double best_validation = rep.best_checkpoint < 0 ? INFINITY : rep.trajectory[rep.best_checkpoint].validation_error;
  if (c.validation_error < best_validation) {
    best = s.layer;
    rep.best_checkpoint = static_cast<int>(rep.trajectory.size());
  }
  rep.trajectory.push_back(c);
  if (!std::isfinite(c.validation_error)) rep.stop_reason = "diverged";
  else if (c.validation_error < o.target) rep.stop_reason = "target";
  else if (truth && o.stop_parameter_error > 0 && std::max(c.theta_max_rel, c.w_max_rel) <= o.stop_parameter_error) {
    best = s.layer;  // the run is measured at this checkpoint
    rep.best_checkpoint = static_cast<int>(rep.trajectory.size()) - 1;
    rep.stop_reason = "parameter_error";
  } else return false;
  return true;
}

}  // namespace

AdamResult train_adam(const SampleSource& source, const AdamOptions& o, const Instance* truth) {
  const auto start = std::chrono::steady_clock::now();
  AdamResult result;
  AdamReport& rep = result.report;
  AdamData data;
  if (!adam_data(source, o, rep, data)) return result;
  AdamStudent s{adam_initial_layer(source.d(), o), {}, 0};
  s.moments = {zeros_like(s.layer), zeros_like(s.layer)};
  Layer best = s.layer;
  int64_t next_checkpoint = 1;
  rep.stop_reason = "budget";
  Progress progress("adam", o.max_samples);
  for (int64_t step = 1;; ++step) {
    // Schedule progress: samples when there is a sample budget, else time.
    const double done = o.max_samples > 0 ? static_cast<double>(s.trained) / o.max_samples : seconds_since(start) / o.max_seconds;
    if (done >= 1) break;
    if (o.max_seconds > 0 && seconds_since(start) >= o.max_seconds) {
      rep.stop_reason = "time";
      break;
    }
    const double rate = o.learning_rate * 0.5 * (1 + std::cos(std::numbers::pi * done));
    const double loss = adam_step(source, o, data, step, rate, s);
    progress.update(s.trained);
    rep.steps = step;
    const bool last = o.max_samples > 0 && s.trained >= o.max_samples;
    if (step < next_checkpoint && !last) continue;
    next_checkpoint = std::max(step + 1, static_cast<int64_t>(std::ceil(step * o.checkpoint_growth)));
    if (adam_checkpoint(o, data, s, truth, step, rate, loss, seconds_since(start), rep, best)) break;
  }
  rep.samples_total = rep.validation_samples + s.trained;
  if (rep.best_checkpoint < 0) {
    rep.message = "no checkpoint was reached within the budget";
    rep.seconds = seconds_since(start);
    return result;
  }
  result.layer = best;
  if (truth) rep.errors = compare_layers(best, *truth, o.test_seed, o.test_samples, o.threads);
  rep.seconds = seconds_since(start);
  rep.ok = true;
  return result;
}

json to_json(const AdamReport& r) {
  json trajectory = json::array();
  for (const auto& c : r.trajectory) {
    json j = {{"step", c.step}, {"samples", c.samples}, {"seconds", c.seconds}, {"learning_rate", c.learning_rate},
              {"train_loss", c.train_loss}, {"validation_error", c.validation_error}};
    if (std::isfinite(c.theta_max_rel)) j["theta_max_rel"] = c.theta_max_rel;
    if (std::isfinite(c.w_max_rel)) j["w_max_rel"] = c.w_max_rel;
    trajectory.push_back(j);
  }
  // The same top-level keys as the paper learner's report (learn/learner.hpp),
  // with one "stages" entry for the whole run.
  json stage = {{"stage", "adam"}, {"samples", r.samples_total}, {"seconds", r.seconds}, {"steps", r.steps},
                {"stop_reason", r.stop_reason}, {"best_checkpoint", r.best_checkpoint}};
  json out = {{"method", "adam"}, {"stages", json::array({stage})}, {"trajectory", trajectory},
              {"samples_total", r.samples_total}, {"validation_samples", r.validation_samples}, {"seconds", r.seconds},
              {"ok", r.ok}, {"message", r.message}};
  if (r.errors) out["errors"] = errors_json(*r.errors);
  return out;
}

std::string format_table(const AdamReport& r) {
  std::ostringstream out;
  out << format("%8s %11s %8s %10s %12s %12s %12s\n", "step", "samples", "seconds", "rate", "validation", "max Θ err",
                "max W err");
  // Every checkpoint up to 20, then a thinned list (every checkpoint is in the JSON report).
  const size_t n = r.trajectory.size(), stride = std::max<size_t>(1, n / 20);
  for (size_t i = 0; i < n; ++i) {
    if (i % stride != 0 && i + 1 != n && static_cast<int>(i) != r.best_checkpoint) continue;
    const auto& c = r.trajectory[i];
    out << format("%8lld %11lld %8.2f %10.2e %12.3e %12.3e %12.3e%s\n", (long long)c.step, (long long)c.samples,
                  c.seconds, c.learning_rate, c.validation_error, c.theta_max_rel, c.w_max_rel,
                  static_cast<int>(i) == r.best_checkpoint ? "  <- kept" : "");
  }
  out << format("\nsamples: %lld (incl. %lld-sample validation set), %lld steps; %.1f s; stopped: %s\n",
                (long long)r.samples_total, (long long)r.validation_samples, (long long)r.steps, r.seconds,
                r.stop_reason.c_str());
  if (!r.message.empty()) out << "note: " << r.message << "\n";
  if (r.errors)
    out << format("%-34s max Θ error %.3e   max W error %.3e   test error %.3e\n", "errors (Adam, best checkpoint):",
                  r.errors->theta_max_rel, r.errors->w_max_rel, r.errors->test_relative_error);
  return out.str();
}

}  // namespace mha
