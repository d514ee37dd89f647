// The SQ-hard family: its parameters, exact construction, export, and the bound
// on what rounding its parameters costs. Exact evaluation: sq_exact.cpp;
// rationals: sq_rational.cpp; verification: sq_verify.cpp; the SQ bound:
// sq_bound.cpp. Proofs: proofs/sq_family.md.
#include "hardness/sq_family.hpp"

#include "hardness/sq_rational.hpp"
#include "numeric/precision.hpp"
#include "numeric/tolerance.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace mha {

using namespace sq_detail;

// ---------------------------------------------------------------- parameters

std::vector<int> sq_default_subset(int d, int m, int p) {
  std::vector<int> s;
  for (int j = 0; j < d && static_cast<int>(s.size()) < m; ++j)
    if (j != p) s.push_back(j);
  return s;
}

std::vector<Rational> sq_default_q(int m) {
  // "optimized" rows of `mhalearn hard --study` (docs/hardness.md), m = 1..8.
  static const char* const kFrozen[8] = {
      "1,2",
      "1,7/4,3",
      "1,23/16,171/64,4",
      "1,41/32,2,7/2,5",
      "1,19/16,105/64,159/64,137/32,6",
      "1,73/64,23/16,31/16,47/16,161/32,7",
      "1,71/64,21/16,13/8,141/64,215/64,369/64,8",
      "1,69/64,79/64,93/64,115/64,39/16,15/4,13/2,9",
  };
  if (m < 1 || m > 8) return sq_chebyshev_q(m);
  std::vector<Rational> q;
  std::string list = kFrozen[m - 1];
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    Rational r;
    parse_rational(list.substr(start, comma - start), r);
    q.push_back(r);
    start = comma + 1;
  }
  return q;
}

std::vector<Rational> sq_chebyshev_q(int m) {
  std::vector<Rational> q;
  if (m < 1) return q;
  const double top = std::log(static_cast<double>(m + 1));
  for (int den = 16; den <= (1 << 20); den *= 4) {
    q.clear();
    q.push_back(Rational(1));
    for (int i = 1; i < m; ++i) {
      const double node = std::exp(top * (1.0 - std::cos(i * std::numbers::pi / m)) / 2.0);
      q.push_back(Rational(static_cast<long>(std::llround(node * den))) / Rational(den));
    }
    if (m >= 1) q.push_back(Rational(m + 1));
    bool distinct = true;
    for (size_t i = 1; i < q.size(); ++i) distinct = distinct && q[i] > q[i - 1];
    if (distinct) return q;
  }
  // Unreachable for m ≤ 63 (nodes are at least ~1e-4 apart); fall back to i + 1.
  q.clear();
  for (int i = 0; i <= m; ++i) q.push_back(Rational(i + 1));
  return q;
}

std::string validate_sq_params(const SqFamilyParams& P) {
  if (P.m < 1) return "m must be at least 1, got " + std::to_string(P.m);
  if (P.m > 63) return "m must be at most 63 (the layer has m + 1 ≤ 64 heads), got " + std::to_string(P.m);
  if (P.d > 1024) return "d must be at most 1024, got " + std::to_string(P.d);
  if (P.d < P.m + 1)
    return "d must be at least m + 1 = " + std::to_string(P.m + 1) + " (S ⊂ [d] \\ {p} has m elements), got d = " +
           std::to_string(P.d);
  if (P.p < 0 || P.p >= P.d) return "p = " + std::to_string(P.p) + " is outside 0.." + std::to_string(P.d - 1);
  if (P.q_out < 0 || P.q_out >= P.d) return "q_out = " + std::to_string(P.q_out) + " is outside 0.." + std::to_string(P.d - 1);
  if (P.p == P.q_out) return "p and q_out must differ, both are " + std::to_string(P.p);
  if (static_cast<int>(P.subset.size()) != P.m)
    return "the subset S must have m = " + std::to_string(P.m) + " elements, got " + std::to_string(P.subset.size());
  for (size_t j = 0; j < P.subset.size(); ++j) {
    const int s = P.subset[j];
    if (s < 0 || s >= P.d) return "subset index " + std::to_string(s) + " is outside 0.." + std::to_string(P.d - 1);
    if (s == P.p) return "the subset S must not contain p = " + std::to_string(P.p);
    if (j > 0 && s <= P.subset[j - 1]) return "subset indices must be distinct and sorted ascending";
  }
  if (static_cast<int>(P.q.size()) != P.m + 1)
    return "need m + 1 = " + std::to_string(P.m + 1) + " values q_0..q_m, got " + std::to_string(P.q.size());
  for (size_t i = 0; i < P.q.size(); ++i) {
    if (P.q[i] <= 0) return "q_" + std::to_string(i) + " = " + rational_to_string(P.q[i]) + " is not positive";
    for (size_t j = 0; j < i; ++j)
      if (P.q[i] == P.q[j])
        return "q values must be distinct: q_" + std::to_string(j) + " = q_" + std::to_string(i) + " = " +
               rational_to_string(P.q[i]);
  }
  return "";
}

// ---------------------------------------------------------------- construction

namespace {
Rational power(const Rational& base, int e) {
  Rational r(1);
  for (int i = 0; i < e; ++i) r *= base;
  return r;
}

// σ_i(s) = q^s / (1 + q^s): the weight head i puts on the other token.
Rational attention_weight(const Rational& q, int s) {
  const Rational qs = power(q, s);
  return qs / (Rational(1) + qs);
}

// Gauss–Jordan elimination in exact arithmetic with a nonzero pivot search.
// Returns false when the matrix is singular.
bool solve_exact(Mat<Rational> a, std::vector<Rational> b, std::vector<Rational>& x) {
  const int n = static_cast<int>(a.rows());
  for (int col = 0; col < n; ++col) {
    int pivot = -1;
    for (int r = col; r < n && pivot < 0; ++r)
      if (a(r, col) != 0) pivot = r;
    if (pivot < 0) return false;
    if (pivot != col) {
      a.row(pivot).swap(a.row(col));
      std::swap(b[pivot], b[col]);
    }
    for (int r = 0; r < n; ++r) {
      if (r == col || a(r, col) == 0) continue;
      const Rational f = a(r, col) / a(col, col);
      for (int c = col; c < n; ++c) a(r, c) -= f * a(col, c);
      b[r] -= f * b[col];
    }
  }
  x.resize(n);
  for (int i = 0; i < n; ++i) x[i] = b[i] / a(i, i);
  return true;
}

Rational sign_power(int s) { return Rational((s % 2 == 0) ? 1 : -1); }
}  // namespace

bool sq_weights_solve_system(const std::vector<Rational>& q, const std::vector<Rational>& w) {
  if (q.size() != w.size() || q.empty()) return false;
  const int n = static_cast<int>(q.size());
  for (int s = 0; s < n; ++s) {
    Rational lhs(0);
    for (int i = 0; i < n; ++i) lhs += w[i] * attention_weight(q[i], s);
    if (lhs != sign_power(s)) return false;
  }
  return true;
}

SqBuildResult build_sq_family(const SqFamilyParams& params) {
  SqBuildResult out;
  if (auto e = validate_sq_params(params); !e.empty()) {
    out.error = e;
    return out;
  }
  const int n = params.m + 1;
  SqFamily& f = out.family;
  f.params = params;
  f.system.resize(n, n);
  std::vector<Rational> b(n);
  for (int s = 0; s < n; ++s) {
    b[s] = sign_power(s);
    for (int i = 0; i < n; ++i) f.system(s, i) = attention_weight(params.q[i], s);
  }
  if (!solve_exact(f.system, b, f.w)) {
    out.error = "the system Σ_i w_i q_i^s/(1+q_i^s) = (−1)^s (s = 0..m) is singular for these q "
                "(e.g. q, 1/q and 1 together always are; see proofs/sq_family.md §2)";
    return out;
  }
  if (!sq_weights_solve_system(params.q, f.w)) {
    out.error = "internal error: the exact solution fails the residual check A w = b";
    return out;
  }
  f.c = Rational(0);
  for (const auto& wi : f.w) f.c += wi;
  out.ok = true;
  return out;
}

SqFamily sq_with_subset(const SqFamily& family, std::vector<int> subset) {
  SqFamily f = family;
  f.params.subset = std::move(subset);
  return f;
}

// ---------------------------------------------------------------- export

NegHalfLog sq_neg_half_log(const Rational& q, unsigned bits) {
  ScopedPrecision precision(bits);
  NegHalfLog out{Mpfr(0), Mpfr(0)};
  if (q == 1) return out;   // ln 1 = 0 exactly
  Mpfr qq = rational_to_mpfr(q);                // q(1 + ε1)
  mpfr_log(out.value.backend().data(), qq.backend().data(), MPFR_RNDN);   // (1 + ε2)
  mpfr_div_2ui(out.value.backend().data(), out.value.backend().data(), 1, MPFR_RNDN);   // exact
  mpfr_neg(out.value.backend().data(), out.value.backend().data(), MPFR_RNDN);          // exact
  // |θ̃ − θ| ≤ 2^{1−P}(1 + |θ̃|) (proofs/sq_family.md §5); twice that for the
  // rounding of this expression itself.
  const long p = static_cast<long>(mpfr_get_prec(out.value.backend().data()));
  out.error_bound = ldexp(Mpfr(1) + abs(out.value), static_cast<int>(2 - p));
  return out;
}

Instance sq_export_instance(const SqFamily& f) {
  const SqFamilyParams& P = f.params;
  const unsigned bits = effective_precision_bits(kSqStoredLogBits);
  const int digits = static_cast<int>(std::ceil(bits * 0.30102999566398120)) + 2;
  Instance inst;
  inst.k = 2;
  inst.inputs = InputKind::boolean;
  nlohmann::json q = nlohmann::json::array(), w = nlohmann::json::array(), logs = nlohmann::json::array();
  for (int i = 0; i <= P.m; ++i) {
    const NegHalfLog t = sq_neg_half_log(P.q[i], kSqStoredLogBits);
    MatD theta = MatD::Zero(P.d, P.d), wm = MatD::Zero(P.d, P.d);
    const double th = mpfr_to_double(t.value, MPFR_RNDN);
    for (int j : P.subset) theta(j, j) = th;
    wm(P.p, P.q_out) = rational_to_double(f.w[i]);
    inst.layer.heads.push_back({theta, wm});
    q.push_back(rational_to_string(P.q[i]));
    w.push_back(rational_to_string(f.w[i]));
    logs.push_back(t.value.str(digits, std::ios_base::scientific));
  }
  nlohmann::json ext = {
      {"sq_family",
       {{"description", "SQ-hard family of MATH.md §4: Θ_i = θ_i diag(1_S), θ_i = −ln(q_i)/2; "
                        "W_i = w_i e_p e_q_outᵀ; Σ_i w_i q_i^s/(1+q_i^s) = (−1)^s, s = 0..m"},
        {"proof", "proofs/sq_family.md"},
        {"k", 2}, {"d", P.d}, {"m", P.m}, {"heads", P.m + 1},
        {"p", P.p}, {"q_out", P.q_out}, {"S", P.subset}, {"indices", "0-based"},
        {"q", q}, {"w", w}, {"c", rational_to_string(f.c)},
        {"neg_half_log_q", logs}, {"neg_half_log_q_bits", bits},
        {"rounding", "theta entries and w are the nearest doubles to neg_half_log_q and w"},
        {"closed_form", "F(X)[a,q_out] = c*X[a,p] + (X[1-a,p] - X[a,p]) * prod_{j in S} X[0,j]*X[1,j]; every other entry 0"}}}};
  inst.extensions_json = ext.dump();
  return inst;
}

LayerT<Mpfr> sq_layer_mpfr(const SqFamily& f) {
  const SqFamilyParams& P = f.params;
  const unsigned bits = current_precision_bits();
  LayerT<Mpfr> layer;
  for (int i = 0; i <= P.m; ++i) {
    Mat<Mpfr> theta = Mat<Mpfr>::Zero(P.d, P.d), w = Mat<Mpfr>::Zero(P.d, P.d);
    const NegHalfLog t = sq_neg_half_log(P.q[i], bits);
    for (int j : P.subset) theta(j, j) = t.value;
    w(P.p, P.q_out) = rational_to_mpfr(f.w[i]);
    layer.heads.push_back({theta, w});
  }
  return layer;
}

// ---------------------------------------------------------------- parameter rounding

double sq_parameter_error_bound(int m, const std::vector<double>& d_theta, const std::vector<double>& w_abs,
                                const std::vector<double>& d_w) {
  double e = 0;
  for (size_t i = 0; i < d_theta.size(); ++i) e += std::expm1(2.0 * m * d_theta[i]) * w_abs[i] + d_w[i];
  return e * tolerance::kSqBoundEvaluationFactor;
}

namespace {
// Upper bound, as a double, of |a − θ| where a is a double and θ̃ (with error
// bound) approximates θ.
double theta_distance_up(double a, const NegHalfLog& t) {
  ScopedPrecision precision(static_cast<unsigned>(mpfr_get_prec(t.value.backend().data())));
  Mpfr diff = abs(Mpfr(a) - t.value);
  // The subtraction rounds by at most 2^{-P}|diff|: add twice that.
  const long p = static_cast<long>(mpfr_get_prec(diff.backend().data()));
  Mpfr total = diff + ldexp(diff, static_cast<int>(1 - p)) + t.error_bound;
  return mpfr_to_double(total, MPFR_RNDU);
}
}  // namespace

double sq_exported_parameter_error(const SqFamily& f, const Layer& exported, std::string& error) {
  const SqFamilyParams& P = f.params;
  error.clear();
  if (exported.m() != P.m + 1 || exported.d() != P.d) {
    error = "exported layer has " + std::to_string(exported.m()) + " heads of size " + std::to_string(exported.d()) +
            ", expected " + std::to_string(P.m + 1) + " of size " + std::to_string(P.d);
    return 0;
  }
  std::vector<double> d_theta, w_abs, d_w;
  for (int i = 0; i <= P.m; ++i) {
    const Head& h = exported.heads[i];
    const double th = h.theta(P.subset[0], P.subset[0]);
    MatD expect_theta = MatD::Zero(P.d, P.d), expect_w = MatD::Zero(P.d, P.d);
    for (int j : P.subset) expect_theta(j, j) = th;
    const double wv = h.w(P.p, P.q_out);
    expect_w(P.p, P.q_out) = wv;
    if (h.theta != expect_theta || h.w != expect_w) {
      error = "head " + std::to_string(i) + " of the exported layer does not have the family's structure";
      return 0;
    }
    d_theta.push_back(theta_distance_up(th, sq_neg_half_log(P.q[i], kSqStoredLogBits)));
    w_abs.push_back(std::abs(wv));
    d_w.push_back(rational_to_double_mode(abs(Rational(wv) - f.w[i]), MPFR_RNDU));
  }
  return sq_parameter_error_bound(P.m, d_theta, w_abs, d_w);
}

double sq_mpfr_parameter_error(const SqFamily& f, unsigned bits) {
  const SqFamilyParams& P = f.params;
  ScopedPrecision precision(bits);
  std::vector<double> d_theta, w_abs, d_w;
  for (int i = 0; i <= P.m; ++i) {
    const NegHalfLog t = sq_neg_half_log(P.q[i], current_precision_bits());
    d_theta.push_back(mpfr_to_double(t.error_bound, MPFR_RNDU));
    const Mpfr wm = rational_to_mpfr(f.w[i]);
    w_abs.push_back(mpfr_to_double(abs(wm), MPFR_RNDU));
    d_w.push_back(rational_to_double_mode(abs(mpfr_to_rational(wm) - f.w[i]), MPFR_RNDU));
  }
  return sq_parameter_error_bound(P.m, d_theta, w_abs, d_w);
}

}  // namespace mha
