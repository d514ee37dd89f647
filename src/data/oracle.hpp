// The labelled-sample oracle of an instance: sample n is (X_n, F(X_n)) with
// X_n drawn from (seed, stream, n) and F evaluated on the fast path. Callers
// stream through it in batches; any batching gives the same samples.
#pragma once

#include "data/inputs.hpp"
#include "model/forward_fast.hpp"

#include <vector>

namespace mha {

struct LabelledBatch {
  InputBatch x;
  std::vector<double> y;   // count * k * d
};

class SampleOracle {
 public:
  SampleOracle(const Instance& instance, uint64_t seed, Stream stream = Stream::inputs)
      : instance_(instance), forward_(instance.layer), seed_(seed), stream_(stream) {}

  LabelledBatch draw(uint64_t first, int64_t count, int threads) const {
    LabelledBatch b{draw_inputs(seed_, stream_, instance_.inputs, instance_.k, instance_.d(), first, count, threads), {}};
    b.y = forward_.run(b.x, threads);
    return b;
  }

  const Instance& instance() const { return instance_; }
  const FastForward& forward() const { return forward_; }

 private:
  const Instance& instance_;
  FastForward forward_;
  uint64_t seed_;
  Stream stream_;
};

}  // namespace mha
