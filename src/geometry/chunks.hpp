// Work on [0, total) split into chunks of `chunk` (the last takes the rest), one
// chunk per thread at a time: how the streamed centre shares its dense products
// over threads without changing their bytes (centre_streamed.hpp says why the
// chunk must start at a multiple of 4).
#pragma once

#include <Eigen/Core>

#include <algorithm>

namespace mha::centre_detail {

// A chunk size rounded down to a multiple of 4, at least 4.
inline Eigen::Index aligned_chunk(Eigen::Index chunk) { return std::max<Eigen::Index>(4, chunk / 4 * 4); }

// Calls work(first, width) for the chunks of [0, total): width = `chunk` (rounded by
// aligned_chunk) except for the last, which takes the rest, so a chunk narrower
// than `chunk` exists only when `total` itself is.
template <class Work>
void in_chunks(Eigen::Index total, Eigen::Index chunk, int threads, Work&& work) {
  const Eigen::Index size = aligned_chunk(chunk);
  const Eigen::Index chunks = std::max<Eigen::Index>(1, total / size);
#pragma omp parallel for num_threads(std::max(threads, 1)) schedule(static, 1) if (chunks > 1 && threads > 1)
  for (Eigen::Index c = 0; c < chunks; ++c) {
    const Eigen::Index first = c * size, width = c + 1 < chunks ? size : total - first;
    work(first, width);
  }
}

}  // namespace mha::centre_detail
