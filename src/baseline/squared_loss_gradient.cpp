#include "baseline/squared_loss_gradient.hpp"

#include "model/reference.hpp"
#include "numeric/multiprecision.hpp"

namespace mha {

template <class T>
LossGradient<T> squared_loss_gradient(const LayerT<T>& layer, const Mat<T>& x, const Mat<T>& y) {
  const Eigen::Index k = x.rows(), d = layer.d(), m = layer.m();
  std::vector<Mat<T>> a(m), v(m);
  Mat<T> r = -y;
  for (Eigen::Index i = 0; i < m; ++i) {
    a[i] = attention<T>(layer.heads[i].theta, x);
    v[i] = x * layer.heads[i].w;
    r += a[i] * v[i];
  }
  LossGradient<T> out{T(r.squaredNorm() / 2), {}};
  for (Eigen::Index i = 0; i < m; ++i) {
    const Mat<T> g = r * v[i].transpose();  // ∂loss/∂A_i
    Mat<T> s(k, k);
    for (Eigen::Index row = 0; row < k; ++row) {
      T centre(0);
      for (Eigen::Index j = 0; j < k; ++j) centre += a[i](row, j) * g(row, j);
      for (Eigen::Index l = 0; l < k; ++l) s(row, l) = a[i](row, l) * (g(row, l) - centre);
    }
    Mat<T> d_theta = x.transpose() * s * x;
    Mat<T> d_w = (a[i] * x).transpose() * r;
    out.gradient.heads.push_back({std::move(d_theta), std::move(d_w)});
  }
  (void)d;
  return out;
}

template <class T>
T squared_loss(const LayerT<T>& layer, const Mat<T>& x, const Mat<T>& y) {
  Mat<T> r = -y;
  for (const auto& h : layer.heads) r += attention<T>(h.theta, x) * (x * h.w);
  return T(r.squaredNorm() / 2);
}

template LossGradient<double> squared_loss_gradient<double>(const LayerT<double>&, const Mat<double>&, const Mat<double>&);
template LossGradient<Mpfr> squared_loss_gradient<Mpfr>(const LayerT<Mpfr>&, const Mat<Mpfr>&, const Mat<Mpfr>&);
template double squared_loss<double>(const LayerT<double>&, const Mat<double>&, const Mat<double>&);
template Mpfr squared_loss<Mpfr>(const LayerT<Mpfr>&, const Mat<Mpfr>&, const Mat<Mpfr>&);

}  // namespace mha
