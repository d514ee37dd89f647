#include "stages/stage1/wsum.hpp"

#include "util/progress.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace mha {

void accumulate_stage1_statistic(const MatD& x, const MatD& y, MatD& sum, MatD& sum_sq) {
  const double k = static_cast<double>(x.rows());
  const RowVec<double> xs = x.colwise().sum(), ys = y.colwise().sum();
  const MatD s = xs.transpose() * ys / k;
  sum += s;
  sum_sq += s.cwiseProduct(s);
}

Stage1Result stage1_estimate_wsum(const SampleSource& source, const Stage1Options& options) {
  const auto start = std::chrono::steady_clock::now();
  const int k = source.k(), d = source.d();
  Stage1Result r;
  int64_t n = std::min<int64_t>(options.samples, samples_from(source, options.first_sample));
  if (n < options.samples) r.budget_exhausted = true;
  n = std::max<int64_t>(n, 0);
  MatD sum = MatD::Zero(d, d), sum_sq = MatD::Zero(d, d);
  Progress progress("stage 1", n);
  // A super-batch of whole blocks is drawn at once, reduced per block in
  // parallel, and the block partials are added in block order.
  const int64_t blocks_per_batch = 64;
  int64_t done = 0;
  for (int64_t first = 0; first < n; first += blocks_per_batch * kStage1Block) {
    const int64_t count = std::min(n - first, blocks_per_batch * kStage1Block);
    const LabelledBatch batch = source.draw(options.first_sample + first, count, options.threads);
    const int64_t blocks = (count + kStage1Block - 1) / kStage1Block;
    std::vector<MatD> part_sum(blocks, MatD::Zero(d, d)), part_sq(blocks, MatD::Zero(d, d));
#pragma omp parallel for schedule(static) num_threads(options.threads)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t end = std::min(count, (b + 1) * kStage1Block);
      for (int64_t i = b * kStage1Block; i < end; ++i) {
        const MatD x = batch.x.sample(i);
        const MatD y = Eigen::Map<const MatD>(batch.y.data() + i * k * d, k, d);
        accumulate_stage1_statistic(x, y, part_sum[b], part_sq[b]);
      }
    }
    for (int64_t b = 0; b < blocks; ++b) {
      sum += part_sum[b];
      sum_sq += part_sq[b];
    }
    done = first + count;
    progress.update(done);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (options.max_seconds > 0 && elapsed > options.max_seconds && done < n) {
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
