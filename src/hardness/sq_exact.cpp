// The SQ family evaluated exactly: the forward pass F_S(X) in rationals for ±1
// inputs, and the closed form of MATH.md §4 it must equal (proofs/sq_family.md).
#include "hardness/sq_family.hpp"

#include <algorithm>
#include <stdexcept>

namespace mha {

namespace {
std::vector<int> pm1_entries(const MatD& x, int d) {
  if (x.cols() != d || x.rows() < 1) throw std::invalid_argument("sq_forward_exact: input must be k×d");
  std::vector<int> v(static_cast<size_t>(x.size()));
  for (Eigen::Index t = 0; t < x.rows(); ++t)
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      const double e = x(t, j);
      if (e != 1.0 && e != -1.0) throw std::invalid_argument("sq_forward_exact: entries must be ±1");
      v[t * d + j] = e > 0 ? 1 : -1;
    }
  return v;
}
}  // namespace

Mat<Rational> sq_forward_exact(const SqFamily& f, const MatD& x) {
  const SqFamilyParams& P = f.params;
  const int d = P.d, k = static_cast<int>(x.rows()), heads = P.m + 1;
  const std::vector<int> xi = pm1_entries(x, d);
  // n[a][b] = −Σ_{j∈S} x_aj x_bj: the logit L_i[a,b] = n[a][b]·ln(q_i)/2.
  std::vector<int> n(static_cast<size_t>(k) * k, 0);
  for (int a = 0; a < k; ++a)
    for (int b = 0; b < k; ++b)
      for (int j : P.subset) n[a * k + b] -= xi[a * d + j] * xi[b * d + j];
  Mat<Rational> y = Mat<Rational>::Zero(k, d);
  std::vector<int> e(k);
  for (int i = 0; i < heads; ++i) {
    // Powers q_i^0..q_i^m (every exponent below lies in 0..m).
    std::vector<Rational> pw(P.m + 1);
    pw[0] = Rational(1);
    for (int t = 1; t <= P.m; ++t) pw[t] = pw[t - 1] * P.q[i];
    // W_i's nonzero entries: (p, q_out) ↦ w_i.
    const int wr = P.p, wc = P.q_out;
    const Rational& wv = f.w[i];
    for (int a = 0; a < k; ++a) {
      // softmax_b(n_ab ln(q)/2) = q^{e_b} / Σ_b' q^{e_b'}, e_b = (n_ab − min_b' n_ab')/2,
      // an integer: every n_ab ≡ m (mod 2).
      int lo = n[a * k];
      for (int b = 1; b < k; ++b) lo = std::min(lo, n[a * k + b]);
      Rational den(0), num(0);
      for (int b = 0; b < k; ++b) {
        const int twice = n[a * k + b] - lo;
        if (twice % 2 != 0 || twice / 2 > P.m) throw std::logic_error("sq_forward_exact: odd logit difference");
        e[b] = twice / 2;
        den += pw[e[b]];
        // (X W_i)[b, wc] = x_{b,wr} w_i.
        if (xi[b * d + wr] > 0) num += pw[e[b]];
        else num -= pw[e[b]];
      }
      // y[a, wc] += Σ_b A_i[a,b] (X W_i)[b, wc] = w_i · num / den.
      y(a, wc) += wv * num / den;
    }
  }
  return y;
}

int sq_centred_target(const SqFamilyParams& P, const std::vector<int>& subset, const MatD& x) {
  int chi = 1;
  for (int j : subset) chi *= (x(0, j) * x(1, j) > 0) ? 1 : -1;
  const int diff = static_cast<int>(x(1, P.p)) - static_cast<int>(x(0, P.p));
  return diff * chi;
}

Mat<Rational> sq_closed_form(const SqFamily& f, const MatD& x) {
  const SqFamilyParams& P = f.params;
  if (x.rows() != 2 || x.cols() != P.d) throw std::invalid_argument("sq_closed_form: input must be 2×d");
  (void)pm1_entries(x, P.d);
  Mat<Rational> y = Mat<Rational>::Zero(2, P.d);
  const int g = sq_centred_target(P, P.subset, x);   // (x_{1p} − x_{0p})·χ_S
  y(0, P.q_out) = f.c * Rational(static_cast<int>(x(0, P.p))) + Rational(g);
  y(1, P.q_out) = f.c * Rational(static_cast<int>(x(1, P.p))) - Rational(g);
  return y;
}

}  // namespace mha
