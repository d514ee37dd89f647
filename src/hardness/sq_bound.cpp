// The SQ lower bound of the family (proofs/sq_family.md §3–4): its members
// (the subsets S), the exact Gram matrix of their centred targets by
// enumeration, and the number of statistical queries a learner needs.
#include "hardness/sq_family.hpp"

#include "data/enumerate.hpp"
#include "numeric/correctly_rounded.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace mha {

using boost::multiprecision::mpz_int;

std::vector<std::vector<int>> sq_subsets(int d, int m, int p, int64_t limit) {
  std::vector<int> pool;
  for (int j = 0; j < d; ++j)
    if (j != p) pool.push_back(j);
  std::vector<std::vector<int>> out;
  const int n = static_cast<int>(pool.size());
  if (m < 1 || m > n || limit <= 0) return out;
  std::vector<int> idx(m);
  for (int i = 0; i < m; ++i) idx[i] = i;
  while (static_cast<int64_t>(out.size()) < limit) {
    std::vector<int> s(m);
    for (int i = 0; i < m; ++i) s[i] = pool[idx[i]];
    out.push_back(std::move(s));
    int i = m - 1;
    while (i >= 0 && idx[i] == n - m + i) --i;
    if (i < 0) break;
    ++idx[i];
    for (int j = i + 1; j < m; ++j) idx[j] = idx[j - 1] + 1;
  }
  return out;
}

SqGram sq_target_gram(const SqFamily& f, int count, bool from_layer, int threads) {
  const SqFamilyParams& P = f.params;
  SqGram g;
  if (2 * P.d > kMaxEnumerationBits) throw std::invalid_argument("sq_target_gram: 2d exceeds the enumeration limit");
  const auto subsets = sq_subsets(P.d, P.m, P.p, count);
  const int n = static_cast<int>(subsets.size());
  g.targets = n;
  g.pairs = static_cast<int64_t>(n) * (n + 1) / 2;
  g.from_layer = from_layer;
  g.inputs = int64_t{1} << (2 * P.d);
  std::vector<SqFamily> members;
  if (from_layer)
    for (const auto& s : subsets) members.push_back(sq_with_subset(f, s));
  std::vector<int64_t> sums(static_cast<size_t>(n) * n, 0);
  bool integral = true;
  const int nthreads = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel num_threads(nthreads)
  {
    std::vector<int64_t> local(static_cast<size_t>(n) * n, 0);
    std::vector<int> gv(n);
    bool local_integral = true;
#pragma omp for schedule(static)
    for (int64_t index = 0; index < g.inputs; ++index) {
      const MatD x = boolean_input<double>(static_cast<uint64_t>(index), 2, P.d);
      for (int t = 0; t < n; ++t) {
        if (from_layer) {
          const Rational v = sq_forward_exact(members[t], x)(0, P.q_out) - f.c * Rational(static_cast<int>(x(0, P.p)));
          if (denominator(v) != 1 || abs(v) > 2) {
            local_integral = false;
            gv[t] = 0;
          } else {
            gv[t] = numerator(v).convert_to<int>();
          }
        } else {
          gv[t] = sq_centred_target(P, subsets[t], x);
        }
      }
      for (int s = 0; s < n; ++s)
        if (gv[s] != 0)
          for (int t = s; t < n; ++t) local[s * n + t] += gv[s] * gv[t];
    }
#pragma omp critical
    {
      for (size_t e = 0; e < sums.size(); ++e) sums[e] += local[e];
      integral = integral && local_integral;
    }
  }
  g.orthogonal = integral;
  g.norms_two = integral;
  g.min_diag_sum = std::numeric_limits<int64_t>::max();
  g.max_diag_sum = std::numeric_limits<int64_t>::min();
  for (int s = 0; s < n; ++s)
    for (int t = s; t < n; ++t) {
      const int64_t v = sums[s * n + t];
      if (s == t) {
        g.min_diag_sum = std::min(g.min_diag_sum, v);
        g.max_diag_sum = std::max(g.max_diag_sum, v);
        if (v != 2 * g.inputs) g.norms_two = false;
      } else {
        g.max_abs_offdiag_sum = std::max(g.max_abs_offdiag_sum, v < 0 ? -v : v);
        if (v != 0) g.orthogonal = false;
      }
    }
  if (n == 0) g.min_diag_sum = g.max_diag_sum = 0;
  return g;
}

namespace {
mpz_int binomial(int n, int k) {
  if (k < 0 || k > n) return mpz_int(0);
  mpz_int r(1);
  for (int i = 1; i <= k; ++i) r = r * (n - k + i) / i;   // exact at every step
  return r;
}
mpz_int ceil_div(const Rational& r) {
  const mpz_int num = numerator(r), den = denominator(r);
  mpz_int q = num / den;   // truncates toward zero
  if (q * den != num && num > 0) q += 1;
  return q;
}
}  // namespace

SqBound sq_query_bound(int d, int m, double tolerance) {
  SqBound b;
  const mpz_int n = binomial(d - 1, m);
  b.members = n.str();
  b.members_double = n.convert_to<double>();
  b.tolerance = tolerance;
  const Rational tau(tolerance);   // exact: a double is a dyadic rational
  const mpz_int h = ceil_div(Rational(1) / (Rational(4) * tau * tau)) - 1;
  b.per_query = h.str();
  b.cube_root = correctly_rounded_cbrt(4.0 * std::max(0.0, b.members_double - 1.0));  // one value on every ISA
  if (h <= 0) {
    b.impossible = true;
    b.queries_deterministic = b.queries_randomized = "infinite";
    b.queries_deterministic_double = b.queries_randomized_double = std::numeric_limits<double>::infinity();
    return b;
  }
  const mpz_int det = ceil_div(Rational(n - 1) / Rational(h));
  mpz_int rnd = ceil_div((Rational(2) * Rational(n) / 3 - 1) / Rational(h));
  if (rnd < 0) rnd = 0;
  b.queries_deterministic = det.str();
  b.queries_randomized = rnd.str();
  b.queries_deterministic_double = det.convert_to<double>();
  b.queries_randomized_double = rnd.convert_to<double>();
  return b;
}

}  // namespace mha
