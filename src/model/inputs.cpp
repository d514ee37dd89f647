#include "model/inputs.hpp"

#include <algorithm>

#include <omp.h>

namespace mha {

void boolean_sample_bits(uint64_t seed, Stream stream, uint64_t n, int k, int d, uint64_t* words) {
  const int wpt = words_per_token(d);
  for (int t = 0; t < k; ++t) {
    uint64_t* tok = words + t * wpt;
    for (int w = 0; w < wpt; ++w) {
      if (w % 4 == 0) {
        auto block = philox_block(seed, stream, n, static_cast<uint64_t>(t), static_cast<uint64_t>(w / 4));
        for (int q = 0; q < 4 && w + q < wpt; ++q) tok[w + q] = block[q];
      }
    }
    if (d % 64 != 0) tok[wpt - 1] &= (uint64_t{1} << (d % 64)) - 1;
  }
}

MatD InputBatch::sample(int64_t i) const {
  MatD x(k, d);
  sample_into(i, x.data());
  return x;
}

std::vector<MatD> InputBatch::samples() const {
  std::vector<MatD> out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out.push_back(sample(i));
  return out;
}

void InputBatch::sample_into(int64_t i, double* out) const {
  if (kind == InputKind::boolean) {
    const uint64_t* w = sample_bits(i);
    const int wpt = words_per_token(d);
    for (int t = 0; t < k; ++t)
      for (int j = 0; j < d; ++j) out[t * d + j] = ((w[t * wpt + j / 64] >> (j % 64)) & 1u) ? 1.0 : -1.0;
  } else {
    std::copy(sample_values(i), sample_values(i) + static_cast<int64_t>(k) * d, out);
  }
}

InputBatch draw_inputs(uint64_t seed, Stream stream, InputKind kind, int k, int d, uint64_t first,
                       int64_t count, int threads) {
  InputBatch batch;
  draw_inputs_into(seed, stream, kind, k, d, first, count, threads, batch);
  return batch;
}

void draw_inputs_into(uint64_t seed, Stream stream, InputKind kind, int k, int d, uint64_t first, int64_t count,
                      int threads, InputBatch& batch) {
  batch.kind = kind;
  batch.k = k;
  batch.d = d;
  batch.count = count;
  if (kind == InputKind::boolean) {
    const int per = k * words_per_token(d);
    batch.bits.assign(static_cast<size_t>(count) * per, 0);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = 0; i < count; ++i)
      boolean_sample_bits(seed, stream, first + i, k, d, batch.bits.data() + i * per);
  } else {
    batch.values.assign(static_cast<size_t>(count) * k * d, 0.0);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = 0; i < count; ++i) {
      double* v = batch.values.data() + i * k * d;
      for (int t = 0; t < k; ++t)
        for (int j0 = 0; j0 < d; j0 += 4) {
          auto z = normal_block(seed, stream, first + i, static_cast<uint64_t>(t), static_cast<uint64_t>(j0 / 4));
          for (int q = 0; q < 4 && j0 + q < d; ++q) v[t * d + j0 + q] = z[q];
        }
    }
  }
}

InputBatch boolean_batch_from_values(const std::vector<int8_t>& pm1, int64_t count, int k, int d) {
  InputBatch batch;
  batch.kind = InputKind::boolean;
  batch.k = k;
  batch.d = d;
  batch.count = count;
  batch.bits.assign(static_cast<size_t>(count) * k * words_per_token(d), 0);
  pack_boolean_values(pm1.data(), count, k, d, batch.bits.data());
  return batch;
}

void pack_boolean_values(const int8_t* pm1, int64_t count, int k, int d, uint64_t* bits) {
  const int wpt = words_per_token(d);
  for (int64_t i = 0; i < count; ++i)
    for (int t = 0; t < k; ++t)
      for (int j = 0; j < d; ++j)
        if (pm1[(i * k + t) * d + j] > 0) bits[(i * k + t) * wpt + j / 64] |= uint64_t{1} << (j % 64);
}

InputBatch dense_batch_from_values(std::vector<double> values, int64_t count, int k, int d) {
  InputBatch batch;
  batch.kind = InputKind::gaussian;
  batch.k = k;
  batch.d = d;
  batch.count = count;
  batch.values = std::move(values);
  return batch;
}

}  // namespace mha
