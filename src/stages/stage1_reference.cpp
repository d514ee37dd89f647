#include "stages/stage1_reference.hpp"

#include "data/oracle.hpp"
#include "model/forward_error.hpp"
#include "model/reference.hpp"
#include "numeric/precision.hpp"
#include "numeric/tolerance.hpp"
#include "stages/stage1_wsum.hpp"

#include <chrono>

namespace mha {

Stage1SameSampleCheck stage1_same_sample_check(const Instance& instance, uint64_t seed, int64_t n, unsigned bits,
                                               const Stage1Fast& fast_path) {
  Stage1SameSampleCheck out;
  const int k = instance.k, d = instance.d();
  const SampleOracle oracle(instance, seed);
  auto t0 = std::chrono::steady_clock::now();
  const Stage1Result fast = fast_path(oracle, {n, 1});
  out.seconds_fast = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.fast = fast.w_hat;
  out.samples = fast.samples;

  t0 = std::chrono::steady_clock::now();
  const InputBatch inputs = draw_inputs(seed, Stream::inputs, instance.inputs, k, d, 0, n, 1);
  ScopedPrecision precision(bits);
  const LayerT<Mpfr> layer = convert_layer<Mpfr>(instance.layer);
  Mat<Mpfr> sum = Mat<Mpfr>::Zero(d, d);
  MatD propagated = MatD::Zero(d, d), magnitude = MatD::Zero(d, d);
  for (int64_t i = 0; i < n; ++i) {
    const MatD x = inputs.sample(i);
    const Mat<Mpfr> xm = cast_matrix<Mpfr>(x);
    const Mat<Mpfr> y = forward_reference<Mpfr>(layer, xm);
    sum += xm.colwise().sum().transpose() * y.colwise().sum() / Mpfr(k);
    // Propagated label error and the size of the sample's statistic.
    const RowVec<double> xs = x.colwise().sum().cwiseAbs();
    const RowVec<double> ey = forward_error_bound(instance.layer, x).colwise().sum();
    propagated += xs.transpose() * ey / double(k);
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
  out.max_ratio = diff.cwiseQuotient(out.bound).maxCoeff();
  return out;
}

}  // namespace mha
