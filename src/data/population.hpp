// Population quantities of MATH.md §3.1 (stage 1), computed exactly by
// enumerating {±1}^{k×d}. All require k·d ≤ kMaxEnumerationBits.
//
//   E[Xᵀ A X] = Tr(A) I_d                  (any fixed k×k matrix A)
//   M_S = (1/k) E[Xᵀ J S X] = I_d          (any fixed row-stochastic S)
//   M(Θ) = (1/k) E[Xᵀ J softmax(XΘXᵀ) X]   (≈ I_d; = I_d when Θ = 0)
//   E[(1/k) Xᵀ J F(X)] = Σ_i M(Θ_i) W_i     (the stage-1 population value)
#pragma once

#include "data/enumerate.hpp"
#include "model/layer.hpp"
#include "numeric/multiprecision.hpp"

namespace mha {

// E[Xᵀ A X] over uniform X in {±1}^{k×d}, k = A.rows(). Exact for rationals.
template <class T>
Mat<T> expect_xt_a_x(const Mat<T>& a, int d);

// (1/k) E[Xᵀ J S X] for a fixed k×k matrix S.
template <class T>
Mat<T> population_m_fixed_pattern(const Mat<T>& s, int d);

// M(Θ) with the softmax pattern of Θ (MPFR or double).
template <class T>
Mat<T> population_m(const Mat<T>& theta, int k);

// Σ_i M(Θ_i) W_i, computed as E[(1/k) Xᵀ J F(X)].
template <class T>
Mat<T> population_stage1(const LayerT<T>& layer, int k);

extern template Mat<Rational> expect_xt_a_x<Rational>(const Mat<Rational>&, int);
extern template Mat<Mpfr> expect_xt_a_x<Mpfr>(const Mat<Mpfr>&, int);
extern template Mat<Rational> population_m_fixed_pattern<Rational>(const Mat<Rational>&, int);
extern template Mat<Mpfr> population_m<Mpfr>(const Mat<Mpfr>&, int);
extern template Mat<double> population_m<double>(const Mat<double>&, int);
extern template Mat<Mpfr> population_stage1<Mpfr>(const LayerT<Mpfr>&, int);

// Convenience: Σ_i M(Θ_i) W_i in MPFR at `bits`, rounded to double.
MatD population_stage1_mpfr(const Layer& layer, int k, unsigned bits);

}  // namespace mha
