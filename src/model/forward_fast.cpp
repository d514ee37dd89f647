#include "model/forward_fast.hpp"

#include <cmath>

namespace mha {

namespace {
// Table size is chunks * 2^bits * width doubles; 8-bit chunks halve the work
// of 4-bit ones but only pay while the table stays in the L2 cache.
int choose_chunk_bits(int d, int width) {
  const double bytes8 = double((d + 7) / 8) * 256.0 * width * sizeof(double);
  return bytes8 <= 2.0 * 1024 * 1024 ? 8 : 4;
}

// Dot product with four interleaved accumulators in a fixed order, so the
// compiler may vectorise it without changing the result.
inline double dot4(const double* a, const double* b, int n) {
  double acc[4] = {0.0, 0.0, 0.0, 0.0};
  int c = 0;
  for (; c + 4 <= n; c += 4)
    for (int q = 0; q < 4; ++q) acc[q] += a[c + q] * b[c + q];
  for (int q = 0; c < n; ++c, ++q) acc[q] += a[c] * b[c];
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}
}  // namespace

FastForward::FastForward(const Layer& layer)
    : d_(layer.d()), m_(layer.m()), width_(2 * layer.m() * layer.d()) {
  g_.assign(static_cast<size_t>(d_) * width_, 0.0);
  for (int i = 0; i < m_; ++i)
    for (int r = 0; r < d_; ++r)
      for (int c = 0; c < d_; ++c) {
        g_[r * width_ + i * d_ + c] = layer.heads[i].theta(r, c);
        g_[r * width_ + (m_ + i) * d_ + c] = layer.heads[i].w(r, c);
      }
  chunk_bits_ = choose_chunk_bits(d_, width_);
  chunks_ = (d_ + chunk_bits_ - 1) / chunk_bits_;
  const int patterns = 1 << chunk_bits_;
  table_.assign(static_cast<size_t>(chunks_) * patterns * width_, 0.0);
  for (int ch = 0; ch < chunks_; ++ch)
    for (int p = 0; p < patterns; ++p) {
      double* entry = table_.data() + (static_cast<size_t>(ch) * patterns + p) * width_;
      for (int b = 0; b < chunk_bits_; ++b) {
        const int r = ch * chunk_bits_ + b;
        if (r >= d_) break;
        const double s = ((p >> b) & 1) ? 1.0 : -1.0;
        for (int c = 0; c < width_; ++c) entry[c] += s * g_[r * width_ + c];
      }
    }
}

// Given u = X G (k × width) and the token values (k × d), computes
// y = Σ_i softmax_rows(P_i Xᵀ) Z_i with P_i, Z_i the Θ_i and W_i blocks of u.
void FastForward::finish(int k, const double* x, double* u, double* y, double* row) const {
  for (int t = 0; t < k * d_; ++t) y[t] = 0.0;
  for (int i = 0; i < m_; ++i) {
    for (int a = 0; a < k; ++a) {
      const double* p = u + a * width_ + i * d_;
      double top = -INFINITY;
      for (int b = 0; b < k; ++b) {
        row[b] = dot4(p, x + b * d_, d_);
        top = std::max(top, row[b]);
      }
      double total = 0.0;
      for (int b = 0; b < k; ++b) {
        row[b] = std::exp(row[b] - top);
        total += row[b];
      }
      double* ya = y + a * d_;
      for (int b = 0; b < k; ++b) {
        const double weight = row[b] / total;
        const double* z = u + b * width_ + (m_ + i) * d_;
        for (int c = 0; c < d_; ++c) ya[c] += weight * z[c];
      }
    }
  }
}

void FastForward::forward_boolean(const uint64_t* bits, int k, double* y, std::vector<double>& scratch) const {
  scratch.resize(static_cast<size_t>(k) * (width_ + d_) + k);
  double* u = scratch.data();
  double* x = u + k * width_;
  double* row = x + k * d_;
  const int wpt = words_per_token(d_);
  const int patterns = 1 << chunk_bits_;
  const uint64_t mask = patterns - 1;
  for (int t = 0; t < k; ++t) {
    const uint64_t* tok = bits + t * wpt;
    double* ut = u + t * width_;
    for (int c = 0; c < width_; ++c) ut[c] = 0.0;
    for (int ch = 0; ch < chunks_; ++ch) {
      const int bit = ch * chunk_bits_;
      const uint64_t pattern = (tok[bit / 64] >> (bit % 64)) & mask;
      const double* entry = table_.data() + (static_cast<size_t>(ch) * patterns + pattern) * width_;
      for (int c = 0; c < width_; ++c) ut[c] += entry[c];
    }
    for (int j = 0; j < d_; ++j) x[t * d_ + j] = ((tok[j / 64] >> (j % 64)) & 1u) ? 1.0 : -1.0;
  }
  finish(k, x, u, y, row);
}

void FastForward::forward_dense(const double* x, int k, double* y, std::vector<double>& scratch) const {
  scratch.resize(static_cast<size_t>(k) * width_ + k);
  double* u = scratch.data();
  double* row = u + k * width_;
  for (int t = 0; t < k; ++t) {
    double* ut = u + t * width_;
    for (int c = 0; c < width_; ++c) ut[c] = 0.0;
    for (int r = 0; r < d_; ++r) {
      const double xr = x[t * d_ + r];
      const double* gr = g_.data() + r * width_;
      for (int c = 0; c < width_; ++c) ut[c] += xr * gr[c];
    }
  }
  finish(k, x, u, y, row);
}

void FastForward::run(const InputBatch& batch, double* y, int threads) const {
  const int k = batch.k;
  const int64_t per = static_cast<int64_t>(k) * d_;
#pragma omp parallel num_threads(threads)
  {
    std::vector<double> scratch;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < batch.count; ++i) {
      if (batch.kind == InputKind::boolean)
        forward_boolean(batch.sample_bits(i), k, y + i * per, scratch);
      else
        forward_dense(batch.sample_values(i), k, y + i * per, scratch);
    }
  }
}

std::vector<double> FastForward::run(const InputBatch& batch, int threads) const {
  std::vector<double> y(static_cast<size_t>(batch.count) * batch.k * d_);
  run(batch, y.data(), threads);
  return y;
}

}  // namespace mha
