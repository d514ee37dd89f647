#include "hardness/sq_study.hpp"

#include <Eigen/LU>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace mha {

const char* to_string(QScheme scheme) {
  switch (scheme) {
    case QScheme::linear: return "linear";
    case QScheme::geometric: return "geometric";
    case QScheme::chebyshev: return "chebyshev";
    case QScheme::optimized: return "optimized";
  }
  return "?";
}

bool parse_q_scheme(const std::string& name, QScheme& out) {
  for (QScheme s : {QScheme::linear, QScheme::geometric, QScheme::chebyshev, QScheme::optimized})
    if (name == to_string(s)) {
      out = s;
      return true;
    }
  return false;
}

namespace {

// Σ|w_i| in double (partial-pivoting LU); +inf when the system is (numerically) singular.
double sum_abs_w_double(const std::vector<double>& q) {
  const int n = static_cast<int>(q.size());
  MatD a(n, n);
  Eigen::VectorXd b(n);
  for (int s = 0; s < n; ++s) {
    b(s) = (s % 2 == 0) ? 1.0 : -1.0;
    for (int i = 0; i < n; ++i) {
      const double qs = std::pow(q[i], s);
      a(s, i) = qs / (1.0 + qs);
    }
  }
  Eigen::PartialPivLU<MatD> lu(a);
  const Eigen::VectorXd w = lu.solve(b);
  if (!w.allFinite() || (a * w - b).norm() > 1e-6 * (1.0 + w.norm())) return std::numeric_limits<double>::infinity();
  return w.cwiseAbs().sum();
}

// Plain Nelder–Mead (reflection 1, expansion 2, contraction 1/2, shrink 1/2).
std::vector<double> nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x0,
                                double step, int iterations) {
  const int n = static_cast<int>(x0.size());
  std::vector<std::vector<double>> pts(n + 1, x0);
  for (int i = 0; i < n; ++i) pts[i + 1][i] += step;
  std::vector<double> val(n + 1);
  for (int i = 0; i <= n; ++i) val[i] = f(pts[i]);
  auto along = [&](const std::vector<double>& c, const std::vector<double>& p, double t) {
    std::vector<double> r(n);
    for (int j = 0; j < n; ++j) r[j] = c[j] + t * (p[j] - c[j]);
    return r;
  };
  for (int it = 0; it < iterations; ++it) {
    std::vector<int> order(n + 1);
    for (int i = 0; i <= n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return val[a] < val[b]; });
    std::vector<std::vector<double>> sp(n + 1);
    std::vector<double> sv(n + 1);
    for (int i = 0; i <= n; ++i) {
      sp[i] = pts[order[i]];
      sv[i] = val[order[i]];
    }
    pts = sp;
    val = sv;
    std::vector<double> c(n, 0.0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) c[j] += pts[i][j] / n;
    const auto xr = along(c, pts[n], -1.0);
    const double fr = f(xr);
    if (fr < val[0]) {
      const auto xe = along(c, pts[n], -2.0);
      const double fe = f(xe);
      if (fe < fr) { pts[n] = xe; val[n] = fe; } else { pts[n] = xr; val[n] = fr; }
    } else if (fr < val[n - 1]) {
      pts[n] = xr;
      val[n] = fr;
    } else {
      const auto xc = along(c, pts[n], 0.5);
      const double fc = f(xc);
      if (fc < val[n]) {
        pts[n] = xc;
        val[n] = fc;
      } else {
        for (int i = 1; i <= n; ++i) {
          pts[i] = along(pts[0], pts[i], 0.5);
          val[i] = f(pts[i]);
        }
      }
    }
  }
  int best = 0;
  for (int i = 1; i <= n; ++i)
    if (val[i] < val[best]) best = i;
  return pts[best];
}

double logistic(double t) { return 1.0 / (1.0 + std::exp(-t)); }
double logit(double p) { return std::log(p / (1.0 - p)); }

std::vector<Rational> optimized_q(int m) {
  const double top = m;   // q ∈ [1, m + 1]: q = 1 + m·logistic(y)
  if (m < 2) return sq_chebyshev_q(m);
  auto to_q = [&](const std::vector<double>& y) {
    std::vector<double> q{1.0};
    for (double t : y) q.push_back(1.0 + top * logistic(t));
    q.push_back(1.0 + top);
    std::sort(q.begin(), q.end());
    return q;
  };
  auto objective = [&](const std::vector<double>& y) {
    const auto q = to_q(y);
    for (size_t i = 1; i < q.size(); ++i)
      if (!(q[i] > q[i - 1] * (1 + 1e-9))) return std::numeric_limits<double>::infinity();
    return sum_abs_w_double(q);
  };
  // Starts: the Chebyshev nodes, q_i = i + 1, and q_i = (m+1)^{i/m} (geometric on the same range).
  std::vector<std::vector<double>> starts(3, std::vector<double>(m - 1));
  const auto cheb = sq_chebyshev_q(m);
  for (int i = 1; i < m; ++i) {
    const double qc = rational_to_double(cheb[i]);
    const double ql = i + 1.0;
    const double qg = std::pow(m + 1.0, static_cast<double>(i) / m);
    starts[0][i - 1] = logit(std::clamp((qc - 1.0) / top, 1e-6, 1 - 1e-6));
    starts[1][i - 1] = logit(std::clamp((ql - 1.0) / top, 1e-6, 1 - 1e-6));
    starts[2][i - 1] = logit(std::clamp((qg - 1.0) / top, 1e-6, 1 - 1e-6));
  }
  std::vector<double> best;
  double best_value = std::numeric_limits<double>::infinity();
  for (const auto& s : starts) {
    auto y = nelder_mead(objective, s, 0.5, 400 * m);
    y = nelder_mead(objective, y, 0.05, 400 * m);
    const double v = objective(y);
    if (v < best_value) {
      best_value = v;
      best = y;
    }
  }
  const auto qd = to_q(best);
  for (int den = 64; den <= (1 << 20); den *= 4) {
    std::vector<Rational> q;
    for (double v : qd) q.push_back(Rational(static_cast<long>(std::llround(v * den))) / Rational(den));
    q.front() = Rational(1);
    q.back() = Rational(m + 1);
    bool distinct = true;
    for (size_t i = 1; i < q.size(); ++i) distinct = distinct && q[i] > q[i - 1];
    if (distinct) return q;
  }
  return cheb;
}

}  // namespace

std::vector<Rational> sq_q_scheme(QScheme scheme, int m) {
  std::vector<Rational> q;
  switch (scheme) {
    case QScheme::linear:
      for (int i = 0; i <= m; ++i) q.push_back(Rational(i + 1));
      return q;
    case QScheme::geometric: {
      Rational v(1);
      for (int i = 0; i <= m; ++i, v *= 2) q.push_back(v);
      return q;
    }
    case QScheme::chebyshev: return sq_chebyshev_q(m);
    case QScheme::optimized: return optimized_q(m);
  }
  return q;
}

SqStudyRow sq_study_row(QScheme scheme, const std::vector<Rational>& q, int d, int64_t samples, uint64_t seed, int threads) {
  SqStudyRow row;
  row.scheme = scheme;
  row.m = static_cast<int>(q.size()) - 1;
  row.q = q;
  SqFamilyParams params;
  params.d = d;
  params.m = row.m;
  params.p = 0;
  params.q_out = 1;
  params.subset = sq_default_subset(d, row.m, 0);
  params.q = q;
  const SqBuildResult built = build_sq_family(params);
  if (!built.ok) {
    row.error = built.error;
    return row;
  }
  const SqFamily& f = built.family;
  row.w = f.w;
  Rational min_att(1);
  for (size_t i = 0; i < q.size(); ++i) {
    const double wi = std::abs(rational_to_double(f.w[i]));
    row.max_abs_w = std::max(row.max_abs_w, wi);
    row.sum_abs_w += wi;
    row.max_theta_norm = std::max(row.max_theta_norm, std::abs(std::log(rational_to_double(q[i]))) * std::sqrt(row.m) / 2.0);
    Rational qs(1);
    for (int s = 0; s <= row.m; ++s, qs *= q[i]) {
      const Rational sigma = qs / (Rational(1) + qs);
      min_att = std::min(min_att, std::min(sigma, Rational(1) - sigma));
    }
  }
  row.min_attention = rational_to_double(min_att);
  const Instance inst = sq_export_instance(f);
  SqVerifyOptions opt;
  opt.enumerate = false;
  opt.samples = samples;
  opt.seed = seed;
  opt.mpfr_checks = 0;
  opt.threads = threads;
  const SqVerifyReport rep = sq_verify(f, inst.layer, opt);
  if (!rep.ok) {
    row.error = rep.error.empty() ? "verification failed" : rep.error;
    return row;
  }
  row.forward_max_diff = rep.fast.max_abs_diff;
  row.forward_max_bound = rep.fast.max_bound;
  row.ok = true;
  return row;
}

std::vector<SqStudyRow> sq_conditioning_study(int max_m, int d, int64_t samples, uint64_t seed, int threads) {
  std::vector<SqStudyRow> rows;
  for (QScheme scheme : {QScheme::linear, QScheme::geometric, QScheme::chebyshev, QScheme::optimized})
    for (int m = 1; m <= max_m; ++m) rows.push_back(sq_study_row(scheme, sq_q_scheme(scheme, m), d, samples, seed, threads));
  return rows;
}

}  // namespace mha
