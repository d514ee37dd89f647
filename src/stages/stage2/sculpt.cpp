#include "stages/stage2/sculpt.hpp"

#include "util/progress.hpp"

#include <Eigen/SVD>
#include <omp.h>

#include <algorithm>
#include <limits>
#include <tuple>
#include <unordered_set>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace mha {

double default_sigma_min(int d, int k, int m) {
  return std::max(0.05, 0.5 * (std::sqrt(double(d)) - std::sqrt(double(k) * m)));
}

namespace {
// A certified row as the merge sees it: its slabs and what the report counts.
struct CertifiedRow {
  double relative_residual = 0;
  int64_t sample = 0;
  int row = 0;
  bool sigma_violated = false;  // σ_min(C) below the assumed bound (truth only)
  std::vector<SlabConstraint> slabs;
  std::vector<uint64_t> hashes;  // slab_hash of each slab (distinct_constraints only), made in the parallel loop
};

// What one thread (or, merged, one process) certified of a batch: its rows and verdict counts.
struct BatchOutcome {
  std::vector<CertifiedRow> rows;
  std::array<int64_t, 6> verdicts{};
};

// A process's outcome as doubles for the all-gather (util/processes.hpp): the six
// counts, the row count, then per row its residual, sample, row, σ flag and slab
// count, per slab b, η, row, other, the hash's bits and the n entries of a.
// Integers below 2⁵³ are exact in a double; the hash travels bit for bit.
double bits_as_double(uint64_t bits) {
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

uint64_t double_as_bits(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

std::vector<double> pack(const BatchOutcome& out) {
  std::vector<double> v(out.verdicts.begin(), out.verdicts.end());
  v.push_back(static_cast<double>(out.rows.size()));
  for (const CertifiedRow& r : out.rows) {
    v.insert(v.end(), {r.relative_residual, double(r.sample), double(r.row), r.sigma_violated ? 1.0 : 0.0,
                       double(r.slabs.size())});
    for (size_t i = 0; i < r.slabs.size(); ++i) {
      const SlabConstraint& c = r.slabs[i];
      v.insert(v.end(), {c.b, c.eta, double(c.row), double(c.other), bits_as_double(r.hashes.empty() ? 0 : r.hashes[i]),
                         double(c.a.size())});
      v.insert(v.end(), c.a.begin(), c.a.end());
    }
  }
  return v;
}

// Every process's outcome from the gathered doubles (pack's layout, in rank
// order), merged: counts summed, rows concatenated (hashes kept when `hashed`).
BatchOutcome unpack_all(const std::vector<double>& v, bool hashed) {
  BatchOutcome all;
  size_t i = 0;
  auto next = [&] {
    if (i >= v.size()) throw std::runtime_error("stage 2: a process's share of the sample loop arrived truncated");
    return v[i++];
  };
  while (i < v.size()) {
    for (auto& count : all.verdicts) count += static_cast<int64_t>(next());
    const auto rows = static_cast<int64_t>(next());
    for (int64_t r = 0; r < rows; ++r) {
      CertifiedRow row;
      row.relative_residual = next();
      row.sample = static_cast<int64_t>(next());
      row.row = static_cast<int>(next());
      row.sigma_violated = next() != 0;
      const auto slabs = static_cast<int64_t>(next());
      for (int64_t j = 0; j < slabs; ++j) {
        SlabConstraint c;
        c.b = next();
        c.eta = next();
        c.row = static_cast<int>(next());
        c.other = static_cast<int>(next());
        const uint64_t hash = double_as_bits(next());
        if (hashed) row.hashes.push_back(hash);
        c.a.resize(static_cast<size_t>(next()));
        for (double& x : c.a) x = next();
        row.slabs.push_back(std::move(c));
      }
      all.rows.push_back(std::move(row));
    }
  }
  return all;
}

// The outcomes of this process's threads, then of every process, as one: counts
// summed, rows in sample order (whatever thread or process found them).
BatchOutcome merge_outcomes(std::vector<BatchOutcome>& per_thread, const Processes& processes, bool hashed) {
  BatchOutcome mine;
  for (auto& out : per_thread) {
    for (int v = 0; v < 6; ++v) mine.verdicts[v] += out.verdicts[v];
    for (auto& row : out.rows) mine.rows.push_back(std::move(row));
  }
  if (processes.size > 1) mine = unpack_all(processes.all_gather(pack(mine)), hashed);
  std::sort(mine.rows.begin(), mine.rows.end(),
            [](const CertifiedRow& x, const CertifiedRow& y) { return std::tie(x.sample, x.row) < std::tie(y.sample, y.row); });
  return mine;
}

// FNV-1a over a slab's normal and centre, a 64-bit word at a time, then a
// final avalanche: equal slabs hash equally (−0.0 is hashed as +0.0: the
// normals of X and −X differ only in the signs of their zeros). A collision can
// only drop a genuine slab (the body gets looser, never wrong). Word-wise: the
// byte-wise hash of d² = 4096 doubles per slab was a serial bottleneck at d = 64.
uint64_t slab_hash(const SlabConstraint& s) {
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](double v) {
    v += 0.0;  // −0.0 + 0.0 = +0.0
    uint64_t word;
    std::memcpy(&word, &v, sizeof word);
    h = (h ^ word) * 1099511628211ULL;
  };
  for (double v : s.a) mix(v);
  mix(s.b);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

// The rows kept so far, merged in sample order whatever the thread count.
// threshold: every certified row; best_rows: the certified rows of smallest
// relative residual, just enough for the target (a max-heap on the residual,
// later rows first among equals, drops its worst row while the rest still reach it).
class RowSelection {
 public:
  RowSelection(SculptOptions::Selection mode, int64_t target, bool distinct)
      : mode_(mode), target_(target), distinct_(distinct) {}

  void offer(CertifiedRow r) {
    if (distinct_) drop_duplicates(r);
    if (r.slabs.empty()) return;
    constraints_ += static_cast<int64_t>(r.slabs.size());
    rows_.push_back(std::move(r));
    if (mode_ == SculptOptions::Selection::threshold) return;
    std::push_heap(rows_.begin(), rows_.end(), worse_first);
    while (constraints_ - static_cast<int64_t>(rows_.front().slabs.size()) >= target_) {
      constraints_ -= static_cast<int64_t>(rows_.front().slabs.size());
      std::pop_heap(rows_.begin(), rows_.end(), worse_first);
      rows_.pop_back();
      ++dropped_;
    }
  }
  int64_t constraints() const { return constraints_; }
  // best_rows: a row above this residual cannot enter any more (the worst kept
  // one once the target is reached; it only decreases), so certification may
  // reject it outright; +inf before.
  double cutoff() const {
    if (mode_ == SculptOptions::Selection::threshold || constraints_ < target_) return std::numeric_limits<double>::infinity();
    return rows_.front().relative_residual;
  }
  int64_t dropped_rows() const { return dropped_; }
  int64_t duplicates() const { return duplicates_; }
  // The kept rows in sample order (the body does not depend on how they arrived).
  std::vector<CertifiedRow> take_rows() {
    std::sort(rows_.begin(), rows_.end(),
              [](const CertifiedRow& x, const CertifiedRow& y) { return std::tie(x.sample, x.row) < std::tie(y.sample, y.row); });
    return std::move(rows_);
  }

 private:
  static bool worse_first(const CertifiedRow& x, const CertifiedRow& y) {  // heap order: the worst row on top
    return std::tie(x.relative_residual, x.sample, x.row) < std::tie(y.relative_residual, y.sample, y.row);
  }
  void drop_duplicates(CertifiedRow& r) {
    std::vector<SlabConstraint> fresh;
    for (size_t i = 0; i < r.slabs.size(); ++i)
      if (seen_.insert(r.hashes[i]).second) fresh.push_back(std::move(r.slabs[i]));
      else ++duplicates_;
    r.slabs = std::move(fresh);
    r.hashes.clear();
  }

  SculptOptions::Selection mode_;
  int64_t target_;
  bool distinct_;
  std::vector<CertifiedRow> rows_;
  std::unordered_set<uint64_t> seen_;
  int64_t constraints_ = 0, dropped_ = 0, duplicates_ = 0;
};

double smallest_singular_value_c(const Layer& layer, const MatD& x) {
  const int k = static_cast<int>(x.rows()), d = layer.d(), m = layer.m();
  MatD c(k * m, d);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < k; ++j) c.row(i * k + j) = x.row(j) * layer.heads[i].w;
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(c);
  return svd.singularValues().minCoeff();
}

// The lemma's promise for the body's hull (stage2_sculpt.hpp, SculptReport): the
// weighted errors of a point inside every slab are at most 1 each, and the least
// squares moves them by at most 1/s along each constrained direction.
void predict_hull_distance(const ConvexBody::Centre& c, const ConvexBody& body, int free, SculptReport& rep) {
  const Eigen::VectorXd& s = c.singular_values;  // ascending
  rep.hull_point_norm = c.x0.norm();
  if (free >= s.size() || !(s(free) > 0)) {
    rep.hull_distance_bound = rep.hull_distance_typical = std::numeric_limits<double>::infinity();
    return;
  }
  rep.hull_distance_bound = std::sqrt(double(body.size())) / s(free);
  double sum = 0;
  for (Eigen::Index j = free; j < s.size(); ++j) sum += 1.0 / (s(j) * s(j));
  rep.hull_distance_typical = std::sqrt(sum);
}

SculptTruth measure_truth(const ConvexBody& body, const ConvexBody::Centre& centre, const Layer& truth) {
  SculptTruth t;
  const int d = truth.d();
  std::vector<Eigen::VectorXd> thetas;
  for (const auto& h : truth.heads) {
    Eigen::VectorXd th = Eigen::Map<const Eigen::VectorXd>(h.theta.data(), d * d);
    thetas.push_back(th);
    t.theta_violation.push_back(body.max_violation(th));
    t.theta_in_ball.push_back(th.norm() <= body.radius());
    const Eigen::VectorXd rel = th - centre.x0;
    const Eigen::VectorXd proj = centre.x0 + centre.free_basis.transpose() * (centre.free_basis * rel);
    t.hull_error = std::max(t.hull_error, (proj - th).norm() / th.norm());
  }
  // Principal angles between span{Θ_i − Θ_0} and the estimated free directions.
  if (thetas.size() >= 2 && centre.free_basis.rows() == static_cast<Eigen::Index>(thetas.size()) - 1) {
    Eigen::MatrixXd dirs(d * d, thetas.size() - 1);
    for (size_t i = 1; i < thetas.size(); ++i) dirs.col(i - 1) = thetas[i] - thetas[0];
    const Eigen::MatrixXd q = Eigen::HouseholderQR<Eigen::MatrixXd>(dirs).householderQ() *
                              Eigen::MatrixXd::Identity(d * d, thetas.size() - 1);
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(centre.free_basis * q);
    const double cos_min = std::clamp(svd.singularValues().minCoeff(), 0.0, 1.0);
    t.hull_angle = std::acos(cos_min);
  }
  return t;
}
}  // namespace

SculptResult sculpt_slabs(const SampleSource& source, const MatD& w_hat, const SculptOptions& o, const Layer* truth) {
  const auto start = std::chrono::steady_clock::now();
  const int k = source.k(), d = source.d();
  const int64_t target = constraints_target(o, d);
  const bool best_rows = o.selection == SculptOptions::Selection::best_rows;
  CertifyOptions certify = o.certify;
  SculptResult result{ConvexBody(d * d, o.radius), {}, {}};
  SculptReport& rep = result.report;
  RowSelection selection(o.selection, target, o.distinct_constraints);
  const int64_t limit = std::min<int64_t>(o.max_samples, samples_from(source, o.first_sample));
  const int64_t batch_size = 65536;
  check_processes(o.processes, "stage 2");
  rep.samples_by_process.assign(static_cast<size_t>(o.processes.size), 0);
  Progress progress("stage 2: sculpt", limit);
  int64_t drawn = 0;
  LabelledBatch batch;  // reused from batch to batch
  while (drawn < limit && (best_rows || selection.constraints() < target)) {
    const int64_t count = std::min(batch_size, limit - drawn);
    // This process's block of the batch; the others draw and certify the rest.
    const std::pair<int64_t, int64_t> block = o.processes.share(count);
    const int64_t first = drawn + block.first, share = block.second - block.first;
    o.processes.count_shares(count, rep.samples_by_process);
    source.draw_into(o.first_sample + first, share, o.threads, batch);
    std::vector<BatchOutcome> outcomes(static_cast<size_t>(std::max(o.threads, 1)));
    if (best_rows) certify.tau = selection.cutoff();  // the selection applies the residual
#pragma omp parallel num_threads(o.threads)
    {
      RowCertifier certifier(w_hat, k);  // this thread's working memory
      BatchOutcome& out = outcomes[static_cast<size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 256)
      for (int64_t s = 0; s < share; ++s) {
        certifier.load(batch.x, s, batch.y.data() + s * k * d);
        for (int a = 0; a < (o.all_rows ? k : 1); ++a) {
          const RowVerdict verdict = certifier.certify(a, certify);
          ++out.verdicts[static_cast<int>(verdict)];
          if (verdict != RowVerdict::certified) continue;
          const MatD x = certifier.x();
          const RowCertificate cert = certifier.certificate();
          CertifiedRow row{cert.relative_residual, first + s, a, false, slabs_of_row(x, a, cert), {}};
          if (o.distinct_constraints)
            for (const SlabConstraint& slab : row.slabs) row.hashes.push_back(slab_hash(slab));
          if (truth) row.sigma_violated = smallest_singular_value_c(*truth, x) < o.certify.sigma_min;
          out.rows.push_back(std::move(row));
        }
      }
    }
    // Counts add up in any order; rows are offered in sample order, whatever thread or process found them.
    BatchOutcome merged = merge_outcomes(outcomes, o.processes, o.distinct_constraints);
    for (int v = 0; v < 6; ++v) rep.verdicts[v] += merged.verdicts[v];
    for (auto& row : merged.rows) selection.offer(std::move(row));
    drawn += count;
    progress.update(drawn);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (o.max_seconds > 0 && first_process_value(o.processes, elapsed > o.max_seconds)) break;  // rank 0's clock
  }
  // Rows certified at τ = ∞ but not among the best count as above τ_effective.
  rep.verdicts[static_cast<int>(RowVerdict::certified)] -= selection.dropped_rows();
  rep.verdicts[static_cast<int>(RowVerdict::residual_too_large)] += selection.dropped_rows();
  rep.duplicate_constraints = selection.duplicates();
  rep.tau_effective = best_rows ? 0 : o.certify.tau;
  int64_t sigma_violated = 0;
  for (CertifiedRow& row : selection.take_rows()) {
    if (row.row == 0) ++rep.rows_certified_first_row;
    if (row.sigma_violated) ++sigma_violated;
    if (best_rows) rep.tau_effective = std::max(rep.tau_effective, row.relative_residual);
    for (auto& slab : row.slabs) result.body.add(Slab{std::move(slab.a), slab.b, slab.eta});
  }
  rep.constraints = static_cast<int64_t>(result.body.size());
  if (truth) {
    rep.truth.emplace();
    rep.truth->sigma_assumption_violated = sigma_violated;
  }
  rep.samples = drawn;
  rep.rows_certified = rep.verdicts[static_cast<int>(RowVerdict::certified)];
  for (auto v : rep.verdicts) rep.rows_examined += v;
  rep.budget_exhausted = rep.constraints < target;
  rep.seconds = rep.loop_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rep.rows_per_second = rep.rows_examined / std::max(rep.seconds, 1e-9);
  return result;
}

SculptResult sculpt_body(const SampleSource& source, const MatD& w_hat, int m, const SculptOptions& o, const Layer* truth) {
  SculptResult result = sculpt_slabs(source, w_hat, o, truth);
  SculptReport& rep = result.report;
  const auto start = std::chrono::steady_clock::now();
  if (result.body.size() > 0) {
    result.centre = result.body.least_squares_centre(m - 1, ConvexBody::CentreMethod::automatic, o.threads,
                                                     ConvexBody::physical_memory_bytes(), o.processes);
    rep.numerical_rank = result.centre.rank;
    rep.gap = result.centre.gap;
    const Eigen::VectorXd& sv = result.centre.singular_values;
    for (Eigen::Index i = 0; i < std::min<Eigen::Index>(sv.size(), 2 * m); ++i) rep.smallest_singular_values.push_back(sv(i));
    predict_hull_distance(result.centre, result.body, m - 1, rep);
    if (truth) {
      const int64_t violated = rep.truth ? rep.truth->sigma_assumption_violated : 0;
      rep.truth = measure_truth(result.body, result.centre, *truth);
      rep.truth->sigma_assumption_violated = violated;
    }
  }
  rep.centre_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rep.seconds += rep.centre_seconds;
  return result;
}

}  // namespace mha
