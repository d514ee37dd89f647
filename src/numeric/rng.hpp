// Counter-based randomness (Philox4x64-10 from Random123).
//
// Every random quantity is a pure function of (seed, stream, counter): sample n
// is computed from (seed, n) alone, so results do not depend on thread count,
// batch size or the order in which samples are drawn. docs/formats.md gives
// the exact layout so other tools can reproduce the streams.
#pragma once

#include <Random123/philox.h>

#include <Eigen/Core>

#include <array>
#include <cstdint>

namespace mha {

// Stream ids keep independent uses of one seed apart (key word 1).
enum class Stream : uint64_t {
  inputs = 1,          // X of labelled samples
  instance = 2,        // parameters of generated instances
  test_inputs = 3,     // held-out inputs for evaluation
  conditions = 4,      // Monte Carlo inside the condition report
  student_init = 5,    // starting points of gradient-trained students (baseline/adam.hpp)
  verify = 6,          // the perturbed layers `mhalearn verify` evaluates (verify/verify.hpp)
  label_noise = 7,     // Gaussian noise added to labels by `--label-noise` (data/noisy_source.hpp)
  polish_start = 8,    // random starting points of polishing alone (baseline/random_polish.hpp)
  span_directions = 9, // stage 5's random directions by membership queries (stages/stage5/span_membership.hpp)
};

using Philox = r123::Philox4x64_R<10>;

inline std::array<uint64_t, 4> philox_block(uint64_t seed, Stream stream, uint64_t c0, uint64_t c1,
                                            uint64_t c2, uint64_t c3 = 0) {
  Philox gen;
  Philox::key_type key = {{seed, static_cast<uint64_t>(stream)}};
  Philox::ctr_type ctr = {{c0, c1, c2, c3}};
  Philox::ctr_type out = gen(ctr, key);
  return {out[0], out[1], out[2], out[3]};
}

// Four standard normals from one block (Box–Muller on two pairs of 64-bit words).
std::array<double, 4> normal_block(uint64_t seed, Stream stream, uint64_t c0, uint64_t c1, uint64_t c2);

// A d×d matrix of iid standard normals: entry e (row-major) is
// normal_block(seed, stream, c0, c1, e / 4)[e % 4].
Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> gaussian_matrix(uint64_t seed, Stream stream,
                                                                                       uint64_t c0, uint64_t c1, int d);

}  // namespace mha
