#include "model/forward_fast.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace mha {

namespace {
// Table size is chunks * 2^bits * width doubles; 8-bit chunks halve the work
// of 4-bit ones but only pay while the table stays in the L2 cache.
int choose_chunk_bits(int d, int width) {
  const double bytes8 = double((d + 7) / 8) * 256.0 * width * sizeof(double);
  return bytes8 <= 2.0 * 1024 * 1024 ? 8 : 4;
}

// Dot product with eight lanes (lane q sums c ≡ q mod 8), the lanes added in a
// fixed tree: the order is fixed by the code, so vectorisation cannot change
// the result. D > 0 fixes the length at compile time (fully unrolled).
constexpr int kLanes = 8;
template <int D>
inline double dot8(const double* __restrict p, const double* __restrict x, int d_runtime) {
  const int d = D > 0 ? D : d_runtime;
  double acc[kLanes] = {0, 0, 0, 0, 0, 0, 0, 0};
  int c = 0;
  for (; c + kLanes <= d; c += kLanes)
#pragma omp simd
    for (int q = 0; q < kLanes; ++q) acc[q] += p[c + q] * x[c + q];
  for (int q = 0; c + q < d; ++q) acc[q] += p[c + q] * x[c + q];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// u = Σ_chunks table[chunk][pattern]: for every column the chunks are added in
// ascending order. Columns are processed in blocks that stay in registers
// across all chunks, instead of reloading and storing u once per chunk.
constexpr int kColumnBlock = 32;
constexpr int kMaxChunks = 1024 / 4;
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
  if (chunks_ > kMaxChunks) throw std::invalid_argument("FastForward supports d <= 1024");
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
// D > 0 is d known at compile time (the common sizes get unrolled kernels).
// Returns false when a logit or an output is not finite: the sample has no
// answer in double (an infinite logit makes softmax compute inf − inf, or hides
// how far ahead the largest one is).
template <int D>
bool FastForward::finish(int k, const double* x, const double* u, double* y, double* row) const {
  const int d = D > 0 ? D : d_;
  bool finite = true;
  for (int t = 0; t < k * d; ++t) y[t] = 0.0;
  for (int i = 0; i < m_; ++i) {
    for (int a = 0; a < k; ++a) {
      const double* p = u + a * width_ + i * d;
      int top = 0;
      for (int b = 0; b < k; ++b) {
        row[b] = dot8<D>(p, x + b * d, d);
        finite &= std::isfinite(row[b]);
        if (row[b] > row[top]) top = b;
      }
      // exp(0) = 1 exactly, so the largest term needs no call.
      const double top_logit = row[top];
      double total = 0.0;
      for (int b = 0; b < k; ++b) {
        row[b] = b == top ? 1.0 : std::exp(row[b] - top_logit);
        total += row[b];
      }
      double* __restrict ya = y + a * d;
      for (int b = 0; b < k; ++b) {
        const double weight = row[b] / total;
        const double* __restrict z = u + b * width_ + (m_ + i) * d;
#pragma omp simd
        for (int c = 0; c < d; ++c) ya[c] += weight * z[c];
      }
    }
  }
  for (int t = 0; t < k * d; ++t) finite &= std::isfinite(y[t]);
  return finite;
}

bool FastForward::finish_any(int k, const double* x, const double* u, double* y, double* row) const {
  switch (d_) {
    case 16: return finish<16>(k, x, u, y, row);
    case 32: return finish<32>(k, x, u, y, row);
    case 64: return finish<64>(k, x, u, y, row);
    default: return finish<0>(k, x, u, y, row);
  }
}

bool FastForward::forward_boolean(const uint64_t* bits, int k, double* y, std::vector<double>& scratch) const {
  scratch.resize(static_cast<size_t>(k) * (width_ + d_ + 1));
  double* u = scratch.data();
  double* x = u + k * width_;
  double* row = x + k * d_;
  // The table entries this token selects (d ≤ 1024 and chunks of ≥ 4 bits: ≤ 256).
  const double* entries[kMaxChunks];
  const int wpt = words_per_token(d_);
  const int patterns = 1 << chunk_bits_;
  const uint64_t mask = patterns - 1;
  for (int t = 0; t < k; ++t) {
    const uint64_t* tok = bits + t * wpt;
    for (int ch = 0; ch < chunks_; ++ch) {
      const int bit = ch * chunk_bits_;
      const uint64_t pattern = (tok[bit / 64] >> (bit % 64)) & mask;
      entries[ch] = table_.data() + (static_cast<size_t>(ch) * patterns + pattern) * width_;
    }
    double* ut = u + t * width_;
    int c0 = 0;
    for (; c0 + kColumnBlock <= width_; c0 += kColumnBlock) {
      double acc[kColumnBlock];
      const double* e0 = entries[0] + c0;
#pragma GCC unroll 32
      for (int c = 0; c < kColumnBlock; ++c) acc[c] = e0[c];
      for (int ch = 1; ch < chunks_; ++ch) {
        const double* e = entries[ch] + c0;
#pragma GCC unroll 32
        for (int c = 0; c < kColumnBlock; ++c) acc[c] += e[c];
      }
#pragma GCC unroll 32
      for (int c = 0; c < kColumnBlock; ++c) ut[c0 + c] = acc[c];
    }
    for (int c = c0; c < width_; ++c) {
      double acc = entries[0][c];
      for (int ch = 1; ch < chunks_; ++ch) acc += entries[ch][c];
      ut[c] = acc;
    }
    for (int j = 0; j < d_; ++j) x[t * d_ + j] = ((tok[j / 64] >> (j % 64)) & 1u) ? 1.0 : -1.0;
  }
  return finish_any(k, x, u, y, row);
}

bool FastForward::forward_dense(const double* x, int k, double* y, std::vector<double>& scratch) const {
  scratch.resize(static_cast<size_t>(k) * (width_ + 1));
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
  return finish_any(k, x, u, y, row);
}

FastForwardStatus FastForward::run(const InputBatch& batch, double* y, int threads) const {
  return run(batch, 0, batch.count, y, threads);
}

FastForwardStatus FastForward::run(const InputBatch& batch, int64_t first, int64_t end, double* y,
                                   int threads) const {
  const int k = batch.k;
  const int64_t per = static_cast<int64_t>(k) * d_;
  // The lowest unanswered index, whatever the thread count (min-reduction).
  int64_t unanswered = end;
#pragma omp parallel num_threads(threads) reduction(min : unanswered)
  {
    std::vector<double> scratch;
#pragma omp for schedule(static)
    for (int64_t i = first; i < end; ++i) {
      double* out = y + (i - first) * per;
      const bool answered = batch.kind == InputKind::boolean ? forward_boolean(batch.sample_bits(i), k, out, scratch)
                                                             : forward_dense(batch.sample_values(i), k, out, scratch);
      if (!answered && i < unanswered) unanswered = i;
    }
  }
  return {unanswered < end ? unanswered : -1};
}

FastForwardResult FastForward::run(const InputBatch& batch, int threads) const {
  FastForwardResult r;
  r.y.resize(static_cast<size_t>(batch.count) * batch.k * d_);
  r.status = run(batch, r.y.data(), threads);
  return r;
}

bool FastForward::answers_all_inputs(double max_abs_input) const {
  double theta = 0, w = 0;  // max over heads of Σ|Θ_i|, max over heads and columns of Σ_r |W_i[r,c]|
  for (int i = 0; i < m_; ++i) {
    double t = 0;
    for (int r = 0; r < d_; ++r)
      for (int c = 0; c < d_; ++c) t += std::abs(g_[r * width_ + i * d_ + c]);
    theta = std::max(theta, t);
    for (int c = 0; c < d_; ++c) {
      double col = 0;
      for (int r = 0; r < d_; ++r) col += std::abs(g_[r * width_ + (m_ + i) * d_ + c]);
      w = std::max(w, col);
    }
  }
  const double limit = std::numeric_limits<double>::max() * 0x1p-16;
  const double a = max_abs_input;
  // Divisions keep the test itself from overflowing.
  return std::isfinite(a) && theta <= limit / a / a && w <= limit / a / m_;
}

std::string FastForwardStatus::message() const {
  if (ok()) return "the fast path answered every sample";
  return "sample " + std::to_string(first_unanswered) +
         " overflows double on the fast path (its logits or outputs are not finite)";
}

}  // namespace mha
