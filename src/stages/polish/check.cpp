#include "stages/polish/check.hpp"

#include "model/forward_fast.hpp"
#include "stages/polish/reference.hpp"

#include <cstdio>
#include <limits>
#include <vector>

namespace mha {

double squared_error_fast(const Layer& layer, const MatD& x, const MatD& y) {
  const FastForward ff(layer);
  MatD out(x.rows(), x.cols());
  std::vector<double> scratch;
  if (!ff.forward_dense(x.data(), static_cast<int>(x.rows()), out.data(), scratch))
    return std::numeric_limits<double>::infinity();
  return (out - y).squaredNorm();
}

Comparison check_polish(const Layer& layer, const SampleSource& source, uint64_t first, int64_t samples,
                        int64_t gradient_samples, const SquaredErrorFast& fast) {
  const LabelledBatch batch = source.draw(first, samples, 1);
  const int k = source.k(), d = source.d();
  std::vector<MatD> xs, ys;
  double fast_sum = 0, y_sum = 0;
  for (int64_t s = 0; s < batch.x.count; ++s) {
    xs.push_back(batch.x.sample(s));
    ys.push_back(Eigen::Map<const MatD>(batch.y.data() + s * k * d, k, d));
    fast_sum += fast(layer, xs.back(), ys.back());
    y_sum += ys.back().squaredNorm();
  }
  Comparison c = escalate([&](unsigned bits) { return compare_objective(layer, xs, ys, fast_sum / y_sum, bits); });
  const double gradient = reference_gradient_norm(layer, xs, ys, gradient_samples, c.precision);
  char line[160];
  std::snprintf(line, sizeof line, "; reference gradient norm %.2e on %lld samples", gradient,
                static_cast<long long>(std::min<int64_t>(gradient_samples, batch.x.count)));
  c.detail += line;
  return c;
}

}  // namespace mha
