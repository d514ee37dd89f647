// Sources of labelled samples for the learner's stages.
//
// SampleOracle: sample n of an instance is (X_n, F(X_n)) with X_n drawn from
// (seed, stream, n) and F evaluated on the fast path; unlimited, and any
// batching gives the same samples. DatasetSource: a fixed dataset held in
// memory (the Python module's arrays, tests); NpyDatasetSource: one in .npy
// files, read block by block as it is drawn, never whole. Both have
// `available()` samples, and draws past the end return fewer.
#pragma once

#include "model/inputs.hpp"
#include "data/npy.hpp"
#include "model/forward_fast.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
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
  // The same samples into `out`, reusing its memory where the source can (the
  // oracle does; others draw afresh): for loops that draw batch after batch.
  virtual void draw_into(uint64_t first, int64_t count, int threads, LabelledBatch& out) const {
    out = draw(first, count, threads);
  }
  // True when every label is a layer's own output up to the forward pass's
  // rounding (an oracle without label noise): a residual above rounding is then
  // the fit's own error, never noise. False when unknown (a dataset).
  virtual bool noiseless() const { return false; }
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
  bool noiseless() const override { return inner_.noiseless(); }
  LabelledBatch draw(uint64_t first, int64_t count, int threads) const override {
    return inner_.draw(first, std::min(count, samples_from(*this, first)), threads);
  }
  void draw_into(uint64_t first, int64_t count, int threads, LabelledBatch& out) const override {
    inner_.draw_into(first, std::min(count, samples_from(*this, first)), threads, out);
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
  bool noiseless() const override { return true; }
  LabelledBatch draw(uint64_t first, int64_t count, int threads) const override;
  void draw_into(uint64_t first, int64_t count, int threads, LabelledBatch& out) const override;

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

// A drawn block of a dataset file holds a value the checks refuse (an int8
// input other than ±1, a NaN or Inf), or the file cannot be read any more (a
// read error, truncated since it was opened). One line, naming the entry or
// the file; the CLI reports it as bad input (exit 2) and writes no output.
class DatasetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A dataset in X.npy and Y.npy, read on demand. Opening checks the headers
// (check_dataset_headers, N ≥ 1, k ≤ d); the values are checked block by
// block as they are drawn (check_dataset_block: the same one-line errors as
// check_dataset_shapes), so a run reads, and checks, only the samples it
// draws. draw() throws DatasetError. The memory a draw takes beyond the
// LabelledBatch it returns is one staging block of at most kNpyStagingBytes.
// The same samples, bit for bit, as DatasetSource over the arrays read whole.
class NpyDatasetSource : public SampleSource {
 public:
  NpyDatasetSource(std::unique_ptr<NpyReader> x, std::unique_ptr<NpyReader> y);
  int k() const override { return k_; }
  int d() const override { return d_; }
  int64_t available() const override { return n_; }
  LabelledBatch draw(uint64_t first, int64_t count, int threads) const override;

 private:
  std::unique_ptr<NpyReader> x_, y_;
  int64_t n_;
  int k_, d_;
};

struct DatasetFilesOpen {
  std::string error;  // one line when `source` is null
  std::unique_ptr<NpyDatasetSource> source;
};
DatasetFilesOpen open_dataset_files(const std::string& x_path, const std::string& y_path);

}  // namespace mha
