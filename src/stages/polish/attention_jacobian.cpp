#include "stages/polish/attention_jacobian.hpp"

#include "model/reference.hpp"
#include "numeric/multiprecision.hpp"

namespace mha {

template <class T>
Mat<T> attention_jacobian(const LayerT<T>& layer, const Mat<T>& x) {
  const Eigen::Index k = x.rows(), d = layer.d(), m = layer.m();
  Mat<T> jac = Mat<T>::Zero(k * d, m * d * d);
  for (Eigen::Index i = 0; i < m; ++i) {
    const Mat<T> a = attention<T>(layer.heads[i].theta, x);
    const Mat<T> v = x * layer.heads[i].w;
    const Mat<T> y_head = a * v;
    for (Eigen::Index row = 0; row < k; ++row) {
      // centred(l, c) = A[row,l] (V[l,c] − y_head[row,c]); g = centredᵀ X, row c = g_{i,row,c}
      Mat<T> centred(k, d);
      for (Eigen::Index l = 0; l < k; ++l)
        for (Eigen::Index c = 0; c < d; ++c) centred(l, c) = a(row, l) * (v(l, c) - y_head(row, c));
      const Mat<T> g = centred.transpose() * x;
      for (Eigen::Index c = 0; c < d; ++c)
        for (Eigen::Index p = 0; p < d; ++p)
          jac.block(row * d + c, i * d * d + p * d, 1, d) = x(row, p) * g.row(c);
    }
  }
  return jac;
}

template Mat<double> attention_jacobian<double>(const LayerT<double>&, const Mat<double>&);
template Mat<Mpfr> attention_jacobian<Mpfr>(const LayerT<Mpfr>&, const Mat<Mpfr>&);

}  // namespace mha
