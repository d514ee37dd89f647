// Reference forward pass, written to be obviously correct, templated on the
// scalar type (double for comparison, MPFR for the reference path) and
// explicitly instantiated in forward_reference.cpp.
//
//   A_i(X) = softmax_rows(X Θ_i Xᵀ),   F(X) = Σ_i A_i(X) X W_i.
#pragma once

#include "model/layer.hpp"
#include "numeric/multiprecision.hpp"

namespace mha {

template <class T>
Mat<T> attention(const Mat<T>& theta, const Mat<T>& x);

template <class T>
Mat<T> forward_reference(const LayerT<T>& layer, const Mat<T>& x);

extern template Mat<double> attention<double>(const Mat<double>&, const Mat<double>&);
extern template Mat<Mpfr> attention<Mpfr>(const Mat<Mpfr>&, const Mat<Mpfr>&);
extern template Mat<double> forward_reference<double>(const LayerT<double>&, const Mat<double>&);
extern template Mat<Mpfr> forward_reference<Mpfr>(const LayerT<Mpfr>&, const Mat<Mpfr>&);

}  // namespace mha
