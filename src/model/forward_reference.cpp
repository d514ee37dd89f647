#include "model/forward_reference.hpp"

#include "model/reference.hpp"
#include "numeric/precision.hpp"
#include "numeric/softmax.hpp"
#include "util/progress.hpp"

namespace mha {

template <class T>
Mat<T> attention(const Mat<T>& theta, const Mat<T>& x) {
  Mat<T> logits = x * theta * x.transpose();
  return softmax_rows<T>(std::move(logits));
}

template <class T>
Mat<T> forward_reference(const LayerT<T>& layer, const Mat<T>& x) {
  Mat<T> y = Mat<T>::Zero(x.rows(), layer.d());
  for (const auto& head : layer.heads) y += attention<T>(head.theta, x) * x * head.w;
  return y;
}

template Mat<double> attention<double>(const Mat<double>&, const Mat<double>&);
template Mat<Mpfr> attention<Mpfr>(const Mat<Mpfr>&, const Mat<Mpfr>&);
template Mat<double> forward_reference<double>(const LayerT<double>&, const Mat<double>&);
template Mat<Mpfr> forward_reference<Mpfr>(const LayerT<Mpfr>&, const Mat<Mpfr>&);

MatD forward_mpfr(const Layer& layer, const MatD& x, unsigned bits) {
  ScopedPrecision precision(bits);
  return to_double_matrix(forward_reference<Mpfr>(convert_layer<Mpfr>(layer), cast_matrix<Mpfr>(x)));
}

std::vector<double> forward_mpfr_batch(const Layer& layer, const InputBatch& batch, unsigned bits) {
  ScopedPrecision precision(bits);
  const LayerT<Mpfr> ref = convert_layer<Mpfr>(layer);
  const int64_t per = int64_t{batch.k} * batch.d;
  std::vector<double> y(static_cast<size_t>(batch.count * per));
  Progress progress("forward (reference)", batch.count);
  for (int64_t i = 0; i < batch.count; ++i) {
    const MatD yi = to_double_matrix(forward_reference<Mpfr>(ref, cast_matrix<Mpfr>(batch.sample(i))));
    Eigen::Map<MatD>(y.data() + i * per, batch.k, batch.d) = yi;
    progress.update(i + 1);
  }
  return y;
}

}  // namespace mha
