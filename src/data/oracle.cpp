#include "data/oracle.hpp"

#include <algorithm>
#include <stdexcept>

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
  LabelledBatch b{draw_inputs(seed_, stream_, instance_.inputs, instance_.k, instance_.d(), first, count, threads), {}};
  FastForwardResult f = forward_.run(b.x, threads);
  // The constructor's a priori bound rules this out; reaching it is a bug.
  if (!f.status.ok()) throw std::logic_error("SampleOracle: " + f.status.message() + " despite the a priori bound");
  b.y = std::move(f.y);
  return b;
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

}  // namespace mha
