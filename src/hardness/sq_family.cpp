// The SQ-hard family: exact construction, exact evaluation, export, and the
// verification driver. All Rational × Eigen code of the hardness module lives
// in this translation unit (compile time). Proofs: proofs/sq_family.md.
#include "hardness/sq_family.hpp"

#include "numeric/tolerance.hpp"

#include "data/enumerate.hpp"
#include "model/inputs.hpp"
#include "model/forward_error.hpp"
#include "model/forward_fast.hpp"
#include "model/reference.hpp"
#include "numeric/precision.hpp"
#include "util/progress.hpp"

#include <nlohmann/json.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

namespace mha {

using boost::multiprecision::mpz_int;

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

// ---------------------------------------------------------------- rationals

namespace {
bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}
}  // namespace

bool parse_rational(const std::string& text, Rational& out) {
  if (text.empty() || text.size() > 4096) return false;
  std::string s = text;
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s = s.substr(1);
  }
  Rational value;
  if (const auto slash = s.find('/'); slash != std::string::npos) {
    const std::string num = s.substr(0, slash), den = s.substr(slash + 1);
    if (!all_digits(num) || !all_digits(den)) return false;
    const mpz_int n(num), dd(den);
    if (dd == 0) return false;
    value = Rational(n, dd);
  } else if (const auto dot = s.find('.'); dot != std::string::npos) {
    const std::string ip = s.substr(0, dot), fp = s.substr(dot + 1);
    if ((ip.empty() && fp.empty()) || (!ip.empty() && !all_digits(ip)) || (!fp.empty() && !all_digits(fp))) return false;
    mpz_int scale(1);
    for (size_t i = 0; i < fp.size(); ++i) scale *= 10;
    const mpz_int n((ip.empty() ? std::string("0") : ip) + fp);
    value = Rational(n, scale);
  } else {
    if (!all_digits(s)) return false;
    value = Rational(mpz_int(s));
  }
  out = negative ? Rational(-value) : value;
  return true;
}

std::string rational_to_string(const Rational& r) { return r.str(); }

namespace {
// Nearest (or upward) double of a rational, through a 53-bit MPFR number
// (correct rounding; our values are far from the subnormal range).
double rational_to_double_mode(const Rational& r, mpfr_rnd_t mode) {
  mpfr_t t;
  mpfr_init2(t, 53);
  mpfr_set_q(t, r.backend().data(), mode);
  const double v = mpfr_get_d(t, mode);
  mpfr_clear(t);
  return v;
}
double mpfr_to_double(const Mpfr& x, mpfr_rnd_t mode) { return mpfr_get_d(x.backend().data(), mode); }
Mpfr rational_to_mpfr(const Rational& r) {
  Mpfr v(0);
  mpfr_set_q(v.backend().data(), r.backend().data(), MPFR_RNDN);
  return v;
}
}  // namespace

double rational_to_double(const Rational& r) { return rational_to_double_mode(r, MPFR_RNDN); }

Rational mpfr_to_rational(const Mpfr& x) {
  mpfr_srcptr v = x.backend().data();
  if (!mpfr_number_p(v)) throw std::invalid_argument("mpfr_to_rational: value is not finite");
  if (mpfr_zero_p(v)) return Rational(0);
  mpz_t z;
  mpz_init(z);
  const mpfr_exp_t e = mpfr_get_z_2exp(z, v);
  Rational r;
  mpq_set_z(r.backend().data(), z);
  mpz_clear(z);
  if (e > 0) mpq_mul_2exp(r.backend().data(), r.backend().data(), static_cast<mp_bitcnt_t>(e));
  if (e < 0) mpq_div_2exp(r.backend().data(), r.backend().data(), static_cast<mp_bitcnt_t>(-e));
  return r;
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

// ---------------------------------------------------------------- exact evaluation

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

// ---------------------------------------------------------------- verification

namespace {
void accumulate_entry(SqAgreement& acc, const Rational* diff, bool finite, double bv) {
  acc.max_bound = std::max(acc.max_bound, bv);
  if (!finite) {
    ++acc.violations;
    acc.max_abs_diff = acc.max_ratio = std::numeric_limits<double>::infinity();
    return;
  }
  if (diff == nullptr) return;   // both zero
  if (*diff > Rational(bv)) ++acc.violations;
  const double dv = rational_to_double(*diff);
  acc.max_abs_diff = std::max(acc.max_abs_diff, dv);
  if (bv > 0) acc.max_ratio = std::max(acc.max_ratio, dv / bv);
  else if (dv > 0) acc.max_ratio = std::numeric_limits<double>::infinity();
}
void merge(SqAgreement& into, const SqAgreement& o) {
  into.inputs += o.inputs;
  into.max_abs_diff = std::max(into.max_abs_diff, o.max_abs_diff);
  into.max_bound = std::max(into.max_bound, o.max_bound);
  into.max_ratio = std::max(into.max_ratio, o.max_ratio);
  into.violations += o.violations;
}
}  // namespace

void sq_accumulate(SqAgreement& acc, const Mat<Rational>& exact, const double* computed, const MatD& bound) {
  ++acc.inputs;
  for (Eigen::Index a = 0; a < exact.rows(); ++a)
    for (Eigen::Index c = 0; c < exact.cols(); ++c) {
      const double yv = computed[a * exact.cols() + c];
      if (yv == 0.0 && exact(a, c) == 0) {
        accumulate_entry(acc, nullptr, true, bound(a, c));
        continue;
      }
      if (!std::isfinite(yv)) {
        accumulate_entry(acc, nullptr, false, bound(a, c));
        continue;
      }
      const Rational diff = abs(Rational(yv) - exact(a, c));
      accumulate_entry(acc, &diff, true, bound(a, c));
    }
}

void sq_accumulate(SqAgreement& acc, const Mat<Rational>& exact, const Mat<Mpfr>& computed, const MatD& bound) {
  ++acc.inputs;
  for (Eigen::Index a = 0; a < exact.rows(); ++a)
    for (Eigen::Index c = 0; c < exact.cols(); ++c) {
      if (!mpfr_number_p(computed(a, c).backend().data())) {
        accumulate_entry(acc, nullptr, false, bound(a, c));
        continue;
      }
      const Rational diff = abs(mpfr_to_rational(computed(a, c)) - exact(a, c));
      accumulate_entry(acc, &diff, true, bound(a, c));
    }
}


namespace {

// Inputs first .. first+count−1 of the enumeration (index bits t*d + j) as a batch.
InputBatch enumeration_batch(uint64_t first, int64_t count, int d) {
  InputBatch batch;
  batch.kind = InputKind::boolean;
  batch.k = 2;
  batch.d = d;
  batch.count = count;
  batch.bits.resize(static_cast<size_t>(count) * 2);   // d ≤ 10: one word per token
  const uint64_t mask = (uint64_t{1} << d) - 1;
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t index = first + static_cast<uint64_t>(i);
    batch.bits[2 * i] = index & mask;
    batch.bits[2 * i + 1] = (index >> d) & mask;
  }
  return batch;
}

// The rigorous total: both parts are upper bounds computed in double; the
// sum's own rounding is covered by the factor.
MatD total_bound(const MatD& forward, double parameter) {
  return (forward.array() + parameter).matrix() * tolerance::kSqBoundEvaluationFactor;
}

}  // namespace

SqVerifyReport sq_verify(const SqFamily& f, const Layer& exported, const SqVerifyOptions& opt) {
  const auto start = std::chrono::steady_clock::now();
  const SqFamilyParams& P = f.params;
  SqVerifyReport rep;
  const double e_double = sq_exported_parameter_error(f, exported, rep.error);
  if (!rep.error.empty()) return rep;
  rep.enumerated = opt.enumerate;
  if (opt.enumerate && 2 * P.d > kMaxEnumerationBits) {
    rep.error = "enumeration needs 2d ≤ " + std::to_string(kMaxEnumerationBits) + ", got d = " + std::to_string(P.d);
    return rep;
  }
  const int64_t total = opt.enumerate ? (int64_t{1} << (2 * P.d)) : opt.samples;
  rep.inputs = total;
  const int threads = std::max(1, opt.threads);
  const FastForward fast(exported);
  const int kd = 2 * P.d;

  // 1. Exact check and the fast path, every input.
  SqAgreement fast_acc;
  int64_t mismatches = 0, first_mismatch = -1;
  constexpr int64_t kChunk = 8192;
  Progress progress("hard: verify", total);
  for (int64_t first = 0; first < total; first += kChunk) {
    const int64_t count = std::min(kChunk, total - first);
    const InputBatch batch = opt.enumerate ? enumeration_batch(static_cast<uint64_t>(first), count, P.d)
                                           : draw_inputs(opt.seed, Stream::inputs, InputKind::boolean, 2, P.d,
                                                         static_cast<uint64_t>(first), count, threads);
    const FastForwardResult fr = fast.run(batch, threads);
    if (!fr.status.ok()) {
      rep.error = "the fast path cannot answer input " + std::to_string(first + fr.status.first_unanswered) +
                  " (its logits or outputs overflow double)";
      return rep;
    }
    const std::vector<double>& y = fr.y;
#pragma omp parallel num_threads(threads)
    {
      SqAgreement local;
      int64_t local_mismatches = 0, local_first = -1;
#pragma omp for schedule(static)
      for (int64_t i = 0; i < count; ++i) {
        const MatD x = batch.sample(i);
        const Mat<Rational> exact = sq_forward_exact(f, x);
        if (exact != sq_closed_form(f, x)) {
          ++local_mismatches;
          if (local_first < 0) local_first = first + i;
        }
        sq_accumulate(local, exact, y.data() + i * kd, total_bound(forward_error_bound(exported, x), e_double));
      }
#pragma omp critical
      {
        merge(fast_acc, local);
        mismatches += local_mismatches;
        if (local_first >= 0 && (first_mismatch < 0 || local_first < first_mismatch)) first_mismatch = local_first;
      }
    }
    progress.update(first + count);
  }
  rep.exact_mismatches = mismatches;
  rep.first_mismatch = first_mismatch;
  rep.fast = fast_acc;
  rep.fast.parameter_error = e_double;

  // 2. Both MPFR passes on evenly spread inputs (single thread: the MPFR
  //    default precision is process-wide).
  const int64_t checks = std::min<int64_t>(std::max<int64_t>(opt.mpfr_checks, 0), total);
  rep.precision_bits = effective_precision_bits(opt.precision);
  if (checks > 0) {
    const double e_full = sq_mpfr_parameter_error(f, opt.precision);
    ScopedPrecision precision(opt.precision);
    const double u = std::ldexp(1.0, -static_cast<int>(rep.precision_bits));
    const LayerT<Mpfr> ref_exported = convert_layer<Mpfr>(exported);
    const LayerT<Mpfr> ref_full = sq_layer_mpfr(f);
    // The full layer's parameters rounded away from zero: its bound is monotone
    // in |θ_i| and |w_i| for this family (proofs/sq_family.md §5).
    Layer up;
    for (const auto& h : ref_full.heads) {
      MatD th(P.d, P.d), w(P.d, P.d);
      for (int r = 0; r < P.d; ++r)
        for (int c = 0; c < P.d; ++c) {
          th(r, c) = mpfr_get_d(h.theta(r, c).backend().data(), MPFR_RNDA);
          w(r, c) = mpfr_get_d(h.w(r, c).backend().data(), MPFR_RNDA);
        }
      up.heads.push_back({th, w});
    }
    SqAgreement acc_exported, acc_full;
    Progress mp("hard: MPFR passes", checks);
    for (int64_t j = 0; j < checks; ++j) {
      const int64_t index = static_cast<int64_t>((static_cast<__int128>(j) * total) / checks);
      const MatD x = opt.enumerate ? boolean_input<double>(static_cast<uint64_t>(index), 2, P.d)
                                   : draw_inputs(opt.seed, Stream::inputs, InputKind::boolean, 2, P.d,
                                                 static_cast<uint64_t>(index), 1, 1).sample(0);
      const Mat<Rational> exact = sq_forward_exact(f, x);
      const Mat<Mpfr> xm = cast_matrix<Mpfr>(x);
      for (int pass = 0; pass < 2; ++pass) {
        const Mat<Mpfr> ym = forward_reference<Mpfr>(pass == 0 ? ref_exported : ref_full, xm);
        // Exact comparison: every MPFR entry converted to its exact rational value.
        const MatD bound = total_bound(forward_error_bound(pass == 0 ? exported : up, x, u), pass == 0 ? e_double : e_full);
        sq_accumulate(pass == 0 ? acc_exported : acc_full, exact, ym, bound);
      }
      mp.update(j + 1);
    }
    rep.mpfr_exported = acc_exported;
    rep.mpfr_exported.parameter_error = e_double;
    rep.mpfr_full = acc_full;
    rep.mpfr_full.parameter_error = e_full;
  }
  rep.ok = rep.exact_mismatches == 0 && rep.fast.ok() && rep.mpfr_exported.ok() && rep.mpfr_full.ok();
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return rep;
}

// ---------------------------------------------------------------- SQ numbers

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
  b.cube_root = std::cbrt(4.0 * std::max(0.0, b.members_double - 1.0));
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
