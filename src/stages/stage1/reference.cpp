#include "stages/stage1/reference.hpp"

#include "data/oracle.hpp"
#include "model/forward_error.hpp"
#include "model/reference.hpp"
#include "numeric/precision.hpp"
#include "numeric/tolerance.hpp"
#include "stages/stage1/wsum.hpp"

#include <chrono>
#include <optional>

namespace mha {

Stage1SameSampleCheck stage1_same_sample_check(const SampleSource& source, const Layer* layer, uint64_t first,
                                               int64_t n, unsigned bits, const Stage1Fast& fast_path) {
  Stage1SameSampleCheck out;
  const int k = source.k(), d = source.d();
  auto t0 = std::chrono::steady_clock::now();
  Stage1Options options;
  options.samples = n;
  options.first_sample = first;
  const Stage1Result fast = fast_path(source, options);
  out.seconds_fast = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.fast = fast.w_hat;
  out.samples = n = fast.samples;

  t0 = std::chrono::steady_clock::now();
  const LabelledBatch batch = source.draw(first, n, 1);
  ScopedPrecision precision(bits);
  std::optional<LayerT<Mpfr>> reference_layer;
  if (layer) reference_layer = convert_layer<Mpfr>(*layer);
  Mat<Mpfr> sum = Mat<Mpfr>::Zero(d, d);
  MatD propagated = MatD::Zero(d, d), magnitude = MatD::Zero(d, d);
  for (int64_t i = 0; i < n; ++i) {
    const MatD x = batch.x.sample(i);
    const Mat<Mpfr> xm = cast_matrix<Mpfr>(x);
    const Mat<Mpfr> y = reference_layer ? forward_reference<Mpfr>(*reference_layer, xm)
                                        : cast_matrix<Mpfr>(MatD(Eigen::Map<const MatD>(batch.y.data() + i * k * d, k, d)));
    sum += xm.colwise().sum().transpose() * y.colwise().sum() / Mpfr(k);
    // Propagated label error (none with the source's own labels) and the size of the sample's statistic.
    const RowVec<double> xs = x.colwise().sum().cwiseAbs();
    if (layer) propagated += xs.transpose() * forward_error_bound(*layer, x).colwise().sum() / double(k);
    magnitude += (xs.transpose() * to_double_matrix<Mpfr>(Mat<Mpfr>(y.colwise().sum())).cwiseAbs()) / double(k);
  }
  out.reference = to_double_matrix<Mpfr>(Mat<Mpfr>(sum / Mpfr(static_cast<double>(n))));
  out.seconds_reference = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Each sample's statistic meets at most N + 2k roundings on its way into Ŵ:
  // k − 1 in each token sum, the product, the division by k, at most N − 1
  // additions of the blocked sum and the division by N (proofs/stage1_identities.md).
  const double g = tolerance::gamma(n + 2LL * k);
  // magnitude uses MPFR labels; the fast labels differ by at most `propagated`.
  out.bound = (propagated + g * (magnitude + propagated)) / double(n) +
              out.reference.cwiseAbs() * tolerance::kDoubleUnitRoundoff;
  // The bound's own evaluation: N-term sums of nonnegative terms and a few operations.
  out.bound *= tolerance::bound_evaluation_factor(n + 2LL * k + 8);
  const MatD diff = (out.fast - out.reference).cwiseAbs();
  out.max_abs_diff = diff.maxCoeff();
  out.max_ratio = 0;
  for (Eigen::Index e = 0; e < diff.size(); ++e)  // 0/0 (an exact zero both ways) counts as agreement
    if (diff.data()[e] > 0) out.max_ratio = std::max(out.max_ratio, diff.data()[e] / out.bound.data()[e]);
  return out;
}

}  // namespace mha
