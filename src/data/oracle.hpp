// Sources of labelled samples for the learner's stages.
//
// SampleOracle: sample n of an instance is (X_n, F(X_n)) with X_n drawn from
// (seed, stream, n) and F evaluated on the fast path; unlimited, and any
// batching gives the same samples. DatasetSource: a fixed dataset (e.g. from
// .npy files); it has `available()` samples and draws past the end return fewer.
#pragma once

#include "data/inputs.hpp"
#include "model/forward_fast.hpp"

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace mha {

struct LabelledBatch {
  InputBatch x;
  std::vector<double> y;   // count * k * d
};

class SampleSource {
 public:
  virtual ~SampleSource() = default;
  virtual int k() const = 0;
  virtual int d() const = 0;
  virtual int64_t available() const = 0;   // samples that can be drawn
  // Samples first .. first+count−1, clipped to available().
  virtual LabelledBatch draw(uint64_t first, int64_t count, int threads) const = 0;
};

class SampleOracle : public SampleSource {
 public:
  SampleOracle(const Instance& instance, uint64_t seed, Stream stream = Stream::inputs)
      : instance_(instance), forward_(instance.layer), seed_(seed), stream_(stream) {}

  int k() const override { return instance_.k; }
  int d() const override { return instance_.d(); }
  int64_t available() const override { return std::numeric_limits<int64_t>::max(); }
  LabelledBatch draw(uint64_t first, int64_t count, int threads) const override {
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

class DatasetSource : public SampleSource {
 public:
  DatasetSource(InputBatch x, std::vector<double> y) : x_(std::move(x)), y_(std::move(y)) {}
  int k() const override { return x_.k; }
  int d() const override { return x_.d; }
  int64_t available() const override { return x_.count; }
  LabelledBatch draw(uint64_t first, int64_t count, int threads) const override;

 private:
  InputBatch x_;
  std::vector<double> y_;
};

}  // namespace mha
