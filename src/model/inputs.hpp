// Input distributions: uniform Boolean tokens and iid standard Gaussian ones.
//
// Sample n is a pure function of (seed, stream, n) (see numeric/rng.hpp):
//  - Boolean: coordinate j of token t is +1 iff bit (j mod 256) of
//    philox_block(seed, stream, n, t, j / 256) is set (bit b = bit b%64 of word b/64);
//  - Gaussian: coordinate j of token t is normal_block(seed, stream, n, t, j / 4)[j % 4].
#pragma once

#include "model/layer.hpp"
#include "numeric/rng.hpp"

#include <cstdint>
#include <vector>

namespace mha {

inline int words_per_token(int d) { return (d + 63) / 64; }

// Bit-packed Boolean tokens of one sample: k * words_per_token(d) words, bit
// j of token t (set = +1) at word t*wpt + j/64, bit j%64. Unused bits are 0.
void boolean_sample_bits(uint64_t seed, Stream stream, uint64_t n, int k, int d, uint64_t* words);

// A batch of consecutive samples first .. first+count-1 of one stream.
struct InputBatch {
  InputKind kind = InputKind::boolean;
  int k = 0, d = 0;
  int64_t count = 0;
  std::vector<uint64_t> bits;   // Boolean: count * k * wpt words
  std::vector<double> values;   // Gaussian: count * k * d, row-major (sample, token, coordinate)

  // Sample i as a k×d matrix of ±1.0 or Gaussian values.
  MatD sample(int64_t i) const;
  // Every sample, in order.
  std::vector<MatD> samples() const;
  // The same values written to out (k*d doubles, row-major), without allocating.
  void sample_into(int64_t i, double* out) const;
  const uint64_t* sample_bits(int64_t i) const { return bits.data() + i * k * words_per_token(d); }
  const double* sample_values(int64_t i) const { return values.data() + i * k * d; }
};

InputBatch draw_inputs(uint64_t seed, Stream stream, InputKind kind, int k, int d, uint64_t first,
                       int64_t count, int threads);
// The same samples into `batch`, reusing its memory: a loop that draws batch
// after batch then touches no fresh pages (a new 16 MB block per batch cost
// the sample loops of stages 2 and 4 a fifth of their time in page faults).
void draw_inputs_into(uint64_t seed, Stream stream, InputKind kind, int k, int d, uint64_t first, int64_t count,
                      int threads, InputBatch& batch);

// Boolean batch from explicit ±1 matrices (e.g. read from X.npy).
InputBatch boolean_batch_from_values(const std::vector<int8_t>& pm1, int64_t count, int k, int d);
// The same packing into `bits` (count * k * wpt words, zeroed by the caller),
// for a dataset read in blocks: positive entries set their bit.
void pack_boolean_values(const int8_t* pm1, int64_t count, int k, int d, uint64_t* bits);
InputBatch dense_batch_from_values(std::vector<double> values, int64_t count, int k, int d);

}  // namespace mha
