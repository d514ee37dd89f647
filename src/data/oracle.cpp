#include "data/oracle.hpp"

#include <algorithm>
#include <stdexcept>

#include <malloc.h>

namespace mha {

double max_abs_oracle_input(InputKind kind) { return kind == InputKind::boolean ? 1.0 : 9.5; }

std::string oracle_problem(const Instance& instance) {
  if (FastForward(instance.layer).answers_all_inputs(max_abs_oracle_input(instance.inputs))) return "";
  return "the instance's weights are so large that the fast path could overflow double on the oracle's " +
         std::string(to_string(instance.inputs)) + " inputs; rescale the instance";
}

SampleOracle::SampleOracle(const Instance& instance, uint64_t seed, Stream stream)
    : instance_(instance), forward_(instance.layer), seed_(seed), stream_(stream) {
  if (!forward_.answers_all_inputs(max_abs_oracle_input(instance.inputs)))
    throw std::invalid_argument(oracle_problem(instance));
}

LabelledBatch SampleOracle::draw(uint64_t first, int64_t count, int threads) const {
  LabelledBatch b;
  draw_into(first, count, threads, b);
  return b;
}

void SampleOracle::draw_into(uint64_t first, int64_t count, int threads, LabelledBatch& out) const {
  draw_inputs_into(seed_, stream_, instance_.inputs, instance_.k, instance_.d(), first, count, threads, out.x);
  out.y.resize(static_cast<size_t>(count) * instance_.k * instance_.d());
  // The constructor's a priori bound rules this out; reaching it is a bug.
  const FastForwardStatus status = forward_.run(out.x, out.y.data(), threads);
  if (!status.ok()) throw std::logic_error("SampleOracle: " + status.message() + " despite the a priori bound");
}

LabelledBatch DatasetSource::draw(uint64_t first, int64_t count, int) const {
  const int64_t begin = std::min<int64_t>(static_cast<int64_t>(first), x_.count);
  const int64_t n = std::max<int64_t>(0, std::min(count, x_.count - begin));
  LabelledBatch b;
  b.x.kind = x_.kind;
  b.x.k = x_.k;
  b.x.d = x_.d;
  b.x.count = n;
  const int64_t per = int64_t{x_.k} * x_.d;
  if (x_.kind == InputKind::boolean) {
    const int64_t words = int64_t{x_.k} * words_per_token(x_.d);
    b.x.bits.assign(x_.bits.begin() + begin * words, x_.bits.begin() + (begin + n) * words);
  } else {
    b.x.values.assign(x_.values.begin() + begin * per, x_.values.begin() + (begin + n) * per);
  }
  b.y.assign(y_.begin() + begin * per, y_.begin() + (begin + n) * per);
  return b;
}

DatasetOpen open_dataset(NpyArray x, NpyArray y) {
  DatasetOpen out;
  auto failure = [&out](std::string e) {
    out.error = std::move(e);
    return std::move(out);
  };
  if (auto e = check_dataset_shapes(x, y); !e.empty()) return failure(e);
  const int64_t n = x.shape[0];
  const int k = static_cast<int>(x.shape[1]), d = static_cast<int>(x.shape[2]);
  if (n < 1) return failure("the dataset is empty");
  if (k > d) return failure("k = " + std::to_string(k) + " exceeds d = " + std::to_string(d));
  InputBatch batch = x.dtype == NpyDtype::int8 ? boolean_batch_from_values(x.i8, n, k, d)
                                               : dense_batch_from_values(std::move(x.f64), n, k, d);
  out.source = std::make_unique<DatasetSource>(std::move(batch), std::move(y.f64));
  return out;
}

NpyDatasetSource::NpyDatasetSource(std::unique_ptr<NpyReader> x, std::unique_ptr<NpyReader> y)
    : x_(std::move(x)), y_(std::move(y)) {
  if (!x_ || !y_) throw std::invalid_argument("NpyDatasetSource: missing file");
  if (auto e = check_dataset_headers(x_->header(), y_->header()); !e.empty()) throw std::invalid_argument(e);
  n_ = x_->header().shape[0];
  k_ = static_cast<int>(x_->header().shape[1]);
  d_ = static_cast<int>(x_->header().shape[2]);
}

namespace {
void throw_if(const std::string& error) {
  if (!error.empty()) throw DatasetError(error);
}
}  // namespace

LabelledBatch NpyDatasetSource::draw(uint64_t first, int64_t count, int) const {
  const int64_t begin = first >= static_cast<uint64_t>(n_) ? n_ : static_cast<int64_t>(first);
  const int64_t n = std::max<int64_t>(0, std::min(count, n_ - begin));
  const int64_t per = int64_t{k_} * d_;
#ifdef __GLIBC__
  // Before a large batch is allocated, what the stages freed since the last
  // one goes back to the system: glibc keeps freed blocks below its mmap
  // threshold (the net's designs, per-sample records, allocated by worker
  // threads in their own arenas) resident otherwise, about 8 MB more at
  // (16,2,2) (docs/bench/streaming.md). Draws of less than 1 MiB of labels
  // (Adam's minibatches, one per step) cannot raise the peak much and skip it.
  if (n * per * 8 >= static_cast<int64_t>(kNpyStagingBytes)) malloc_trim(0);
#endif
  const std::vector<int64_t>& shape = x_->header().shape;
  LabelledBatch b;
  b.x.kind = x_->header().dtype == NpyDtype::int8 ? InputKind::boolean : InputKind::gaussian;
  b.x.k = k_;
  b.x.d = d_;
  b.x.count = n;
  if (b.x.kind == InputKind::boolean) {
    // ±1 bytes a staging block at a time, packed into bits as DatasetSource holds them.
    const int64_t words = int64_t{k_} * words_per_token(d_);
    const int64_t chunk = std::max<int64_t>(1, static_cast<int64_t>(kNpyStagingBytes) / per);
    std::vector<int8_t> staging(static_cast<size_t>(std::min(n, chunk) * per));
    b.x.bits.assign(static_cast<size_t>(n * words), 0);
    for (int64_t done = 0; done < n; done += chunk) {
      const int64_t c = std::min(chunk, n - done), at = (begin + done) * per;
      throw_if(x_->read_int8(at, c * per, staging.data()));
      throw_if(check_dataset_block(staging.data(), c * per, at, shape, "X"));
      pack_boolean_values(staging.data(), c, k_, d_, b.x.bits.data() + done * words);
    }
  } else {
    b.x.values.resize(static_cast<size_t>(n * per));
    throw_if(x_->read_float64(begin * per, n * per, b.x.values.data()));
    throw_if(check_dataset_block(b.x.values.data(), n * per, begin * per, shape, "X"));
  }
  b.y.resize(static_cast<size_t>(n * per));
  throw_if(y_->read_float64(begin * per, n * per, b.y.data()));
  throw_if(check_dataset_block(b.y.data(), n * per, begin * per, shape, "Y"));
  return b;
}

DatasetFilesOpen open_dataset_files(const std::string& x_path, const std::string& y_path) {
  DatasetFilesOpen out;
  NpyReader::Open x = NpyReader::open(x_path);
  if (!x.reader) return {x.error, nullptr};
  NpyReader::Open y = NpyReader::open(y_path);
  if (!y.reader) return {y.error, nullptr};
  if (auto e = check_dataset_headers(x.reader->header(), y.reader->header()); !e.empty()) return {e, nullptr};
  const std::vector<int64_t>& shape = x.reader->header().shape;
  if (shape[0] < 1) return {"the dataset is empty", nullptr};
  if (shape[1] > shape[2])
    return {"k = " + std::to_string(shape[1]) + " exceeds d = " + std::to_string(shape[2]), nullptr};
  out.source = std::make_unique<NpyDatasetSource>(std::move(x.reader), std::move(y.reader));
  return out;
}

}  // namespace mha
