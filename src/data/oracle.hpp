// Sources of labelled samples for the learner's stages.
//
// SampleOracle: sample n of an instance is (X_n, F(X_n)) with X_n drawn from
// (seed, stream, n) and F evaluated on the fast path; unlimited, and any
// batching gives the same samples. DatasetSource: a fixed dataset (e.g. from
// .npy files); it has `available()` samples and draws past the end return fewer.
#pragma once

#include "data/inputs.hpp"
#include "data/npy.hpp"
#include "model/forward_fast.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
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

// Samples left in `source` from index `first` on (0 when first is past the end).
inline int64_t samples_from(const SampleSource& source, uint64_t first) {
  const int64_t available = source.available();
  if (available <= 0 || first >= static_cast<uint64_t>(available)) return 0;
  return available - static_cast<int64_t>(first);
}

// The first `limit` samples of another source (a view; `inner` must outlive it).
// The learner runs its stages on such a prefix of a finite dataset so that the
// samples polishing needs stay untouched at its end.
class PrefixSource : public SampleSource {
 public:
  PrefixSource(const SampleSource& inner, int64_t limit)
      : inner_(inner), limit_(std::clamp<int64_t>(limit, 0, inner.available())) {}
  int k() const override { return inner_.k(); }
  int d() const override { return inner_.d(); }
  int64_t available() const override { return limit_; }
  LabelledBatch draw(uint64_t first, int64_t count, int threads) const override {
    return inner_.draw(first, std::min(count, samples_from(*this, first)), threads);
  }

 private:
  const SampleSource& inner_;
  int64_t limit_;
};

// Largest magnitude of an input entry an oracle draws: 1 for Boolean inputs;
// for Gaussian ones the Box–Muller radius sqrt(-2 ln u), u >= 2^-65 (Random123's
// u01 of a 64-bit word), is below 9.5.
double max_abs_oracle_input(InputKind kind);

// "" when the fast path answers every input the oracle of `instance` can draw
// (FastForward::answers_all_inputs), else an error line. An oracle's labels are
// then never non-finite; the CLI checks this before building one.
std::string oracle_problem(const Instance& instance);

class SampleOracle : public SampleSource {
 public:
  // Precondition: oracle_problem(instance) is "" (std::invalid_argument otherwise).
  SampleOracle(const Instance& instance, uint64_t seed, Stream stream = Stream::inputs);

  int k() const override { return instance_.k; }
  int d() const override { return instance_.d(); }
  int64_t available() const override { return std::numeric_limits<int64_t>::max(); }
  LabelledBatch draw(uint64_t first, int64_t count, int threads) const override;

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

// A dataset from its arrays (as read from X.npy and Y.npy): the checks of
// check_dataset_shapes, then N ≥ 1 and k ≤ d. `error` is one line when
// `source` is null.
struct DatasetOpen {
  std::string error;
  std::unique_ptr<DatasetSource> source;
};
DatasetOpen open_dataset(NpyArray x, NpyArray y);

}  // namespace mha
