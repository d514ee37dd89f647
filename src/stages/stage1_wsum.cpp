#include "stages/stage1_wsum.hpp"

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

Stage1Result stage1_estimate_wsum(const SampleOracle& oracle, const Stage1Options& options) {
  const auto start = std::chrono::steady_clock::now();
  const int k = oracle.instance().k, d = oracle.instance().d();
  const int64_t n = options.samples;
  MatD sum = MatD::Zero(d, d), sum_sq = MatD::Zero(d, d);
  Progress progress("stage 1", n);
  // A super-batch of whole blocks is drawn at once, reduced per block in
  // parallel, and the block partials are added in block order.
  const int64_t blocks_per_batch = 64;
  for (int64_t first = 0; first < n; first += blocks_per_batch * kStage1Block) {
    const int64_t count = std::min(n - first, blocks_per_batch * kStage1Block);
    const LabelledBatch batch = oracle.draw(first, count, options.threads);
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
    progress.update(first + count);
  }
  Stage1Result r;
  r.samples = n;
  r.w_hat = sum / double(n);
  const MatD var = (sum_sq / double(n) - r.w_hat.cwiseProduct(r.w_hat)).cwiseMax(0.0) * (double(n) / std::max<double>(1, n - 1));
  r.standard_error = (var / double(n)).cwiseSqrt();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace mha
