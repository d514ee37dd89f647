#include "stages/stage1/wsum.hpp"

#include "util/progress.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace mha {

void accumulate_stage1_statistic(const MatD& x, const MatD& y, MatD& sum, MatD& sum_sq) {
  const double k = static_cast<double>(x.rows());
  const RowVec<double> xs = x.colwise().sum(), ys = y.colwise().sum();
  const MatD s = xs.transpose() * ys / k;
  sum += s;
  sum_sq += s.cwiseProduct(s);
}

namespace {

// The block partials (sum, sum of squares) of every process, gathered in rank
// order — which is block order, each process's blocks being contiguous.
void gather_partials(const Processes& processes, int64_t first_block, int64_t blocks, std::vector<MatD>& part_sum,
                     std::vector<MatD>& part_sq) {
  const Eigen::Index dd = part_sum.front().size();
  std::vector<double> mine;
  for (int64_t b = first_block; b < first_block + blocks; ++b)
    for (const MatD* m : {&part_sum[b], &part_sq[b]}) mine.insert(mine.end(), m->data(), m->data() + dd);
  const std::vector<double> all = processes.all_gather(mine);
  if (all.size() != part_sum.size() * 2 * static_cast<size_t>(dd))
    throw std::runtime_error("stage 1: the processes' block partials do not add up");
  for (size_t b = 0; b < part_sum.size(); ++b) {
    part_sum[b] = Eigen::Map<const MatD>(all.data() + 2 * b * dd, part_sum[b].rows(), part_sum[b].cols());
    part_sq[b] = Eigen::Map<const MatD>(all.data() + (2 * b + 1) * dd, part_sq[b].rows(), part_sq[b].cols());
  }
}

}  // namespace

Stage1Result stage1_estimate_wsum(const SampleSource& source, const Stage1Options& options) {
  const auto start = std::chrono::steady_clock::now();
  const int k = source.k(), d = source.d();
  Stage1Result r;
  int64_t n = std::min<int64_t>(options.samples, samples_from(source, options.first_sample));
  if (n < options.samples) r.budget_exhausted = true;
  n = std::max<int64_t>(n, 0);
  MatD sum = MatD::Zero(d, d), sum_sq = MatD::Zero(d, d);
  check_processes(options.processes, "stage 1");
  r.samples_by_process.assign(static_cast<size_t>(options.processes.size), 0);
  Progress progress("stage 1", n);
  // A super-batch of whole blocks is drawn at once, reduced per block in
  // parallel, and the block partials are added in block order.
  const int64_t blocks_per_batch = 64;
  int64_t done = 0;
  for (int64_t first = 0; first < n; first += blocks_per_batch * kStage1Block) {
    const int64_t count = std::min(n - first, blocks_per_batch * kStage1Block);
    const int64_t blocks = (count + kStage1Block - 1) / kStage1Block;
    // This process's blocks of the batch (samples `lo` .. `hi` − 1 of it).
    const std::pair<int64_t, int64_t> mine = options.processes.share(blocks);
    for (int p = 0; p < options.processes.size; ++p) {
      const std::pair<int64_t, int64_t> theirs = options.processes.share_of(p, blocks);
      r.samples_by_process[static_cast<size_t>(p)] +=
          std::min(count, theirs.second * kStage1Block) - std::min(count, theirs.first * kStage1Block);
    }
    const int64_t lo = std::min(count, mine.first * kStage1Block), hi = std::min(count, mine.second * kStage1Block);
    const LabelledBatch batch = source.draw(options.first_sample + first + lo, hi - lo, options.threads);
    std::vector<MatD> part_sum(blocks, MatD::Zero(d, d)), part_sq(blocks, MatD::Zero(d, d));
#pragma omp parallel for schedule(static) num_threads(options.threads)
    for (int64_t b = mine.first; b < mine.second; ++b) {
      const int64_t end = std::min(count, (b + 1) * kStage1Block);
      for (int64_t i = b * kStage1Block; i < end; ++i) {
        const MatD x = batch.x.sample(i - lo);
        const MatD y = Eigen::Map<const MatD>(batch.y.data() + (i - lo) * k * d, k, d);
        accumulate_stage1_statistic(x, y, part_sum[b], part_sq[b]);
      }
    }
    if (options.processes.size > 1) gather_partials(options.processes, mine.first, mine.second - mine.first, part_sum, part_sq);
    for (int64_t b = 0; b < blocks; ++b) {
      sum += part_sum[b];
      sum_sq += part_sq[b];
    }
    done = first + count;
    progress.update(done);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (options.max_seconds > 0 && first_process_value(options.processes, elapsed > options.max_seconds) && done < n) {
      r.budget_exhausted = true;
      break;
    }
  }
  r.samples = done;
  const double nd = std::max<double>(1, done);
  r.w_hat = sum / nd;
  const MatD var = (sum_sq / nd - r.w_hat.cwiseProduct(r.w_hat)).cwiseMax(0.0) * (nd / std::max<double>(1, nd - 1));
  r.standard_error = (var / nd).cwiseSqrt();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace mha
