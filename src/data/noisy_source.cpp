#include "data/noisy_source.hpp"

#include "numeric/rng.hpp"

#include <cmath>
#include <stdexcept>

namespace mha {

NoisySource::NoisySource(std::unique_ptr<SampleSource> inner, double relative, uint64_t seed)
    : inner_(std::move(inner)), relative_(relative), seed_(seed) {
  if (!inner_) throw std::invalid_argument("NoisySource: no inner source");
  if (!(relative >= 0) || !std::isfinite(relative))
    throw std::invalid_argument("NoisySource: the relative noise must be finite and >= 0");
}

LabelledBatch NoisySource::draw(uint64_t first, int64_t count, int threads) const {
  LabelledBatch b = inner_->draw(first, count, threads);
  if (relative_ == 0) return b;
  const int64_t per = int64_t{b.x.k} * b.x.d;
  for (int64_t i = 0; i < b.x.count; ++i) {
    double* y = b.y.data() + i * per;
    double sum_sq = 0;
    for (int64_t e = 0; e < per; ++e) sum_sq += y[e] * y[e];
    const double sigma = relative_ * std::sqrt(sum_sq / static_cast<double>(per));
    const uint64_t n = first + static_cast<uint64_t>(i);
    for (int64_t e = 0; e < per; e += 4) {
      const std::array<double, 4> g = normal_block(seed_, Stream::label_noise, n, static_cast<uint64_t>(e / 4), 0);
      for (int64_t j = 0; j < 4 && e + j < per; ++j) y[e + j] += sigma * g[j];
    }
  }
  return b;
}

}  // namespace mha
