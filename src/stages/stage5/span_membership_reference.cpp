#include "stages/stage5/span_membership_reference.hpp"

#include "numeric/multiprecision.hpp"
#include "numeric/precision.hpp"
#include "numeric/tolerance.hpp"
#include "util/format.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/SVD>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace mha {

namespace {

namespace tol = mha::tolerance;
using MatM = Eigen::Matrix<Mpfr, Eigen::Dynamic, Eigen::Dynamic>;
using VecM = Eigen::Matrix<Mpfr, Eigen::Dynamic, 1>;

double to_double(const Mpfr& x) { return x.convert_to<double>(); }

// ⟨a, x⟩ in MPFR (products of doubles exact at ≥ 106 bits; the sum rounds at `bits`).
Mpfr dot(const std::vector<double>& a, const Eigen::VectorXd& x) {
  Mpfr s = 0;
  for (size_t c = 0; c < a.size(); ++c)
    if (a[c] != 0.0) s += Mpfr(a[c]) * Mpfr(x(static_cast<Eigen::Index>(c)));
  return s;
}

// The excesses |⟨a_r, x⟩ − b_r| − η_r of x over every slab, in MPFR.
std::vector<Mpfr> excesses(const ConvexBody& body, const Eigen::VectorXd& x) {
  std::vector<Mpfr> out;
  for (const Slab& s : body.slabs()) out.push_back(abs(dot(s.a, x) - Mpfr(s.b)) - Mpfr(s.eta));
  return out;
}

// U(y) = Σ_r (y_r b_r + |y_r| η_r) + R‖v − Aᵀy‖₁ in MPFR (Lemma 3.2.5).
Mpfr dual_bound(const ConvexBody& body, const Eigen::VectorXd& v, const Eigen::VectorXd& y) {
  const int n = body.dim();
  VecM residual(n);
  for (int c = 0; c < n; ++c) residual(c) = Mpfr(v(c));
  Mpfr sum = 0;
  for (size_t r = 0; r < body.size(); ++r) {
    const double yr = y(static_cast<Eigen::Index>(r));
    if (yr == 0.0) continue;
    const Slab& s = body.slabs()[r];
    sum += Mpfr(yr) * Mpfr(s.b) + Mpfr(std::abs(yr)) * Mpfr(s.eta);
    for (int c = 0; c < n; ++c)
      if (s.a[c] != 0.0) residual(c) -= Mpfr(yr) * Mpfr(s.a[c]);
  }
  Mpfr l1 = 0;
  for (int c = 0; c < n; ++c) l1 += abs(residual(c));
  return sum + Mpfr(body.radius()) * l1;
}

// One side of one direction: max ⟨v, θ⟩, v = ±u.
struct Side {
  Eigen::VectorXd v, x_fast, dual_fast;
  double claimed_upper;  // the fast path's certified bound on max ⟨v, θ⟩
  ConvexBody::LpResult reference;
};

// The bits-dependent rounding of the MPFR sums above: at most N·n + n terms of size ≤ scale.
double mpfr_sum_error(unsigned bits, long long terms, double scale) {
  return tol::reference_relative_error(bits, terms) * scale;
}

ComparisonPart compare_optima(const ConvexBody& body, const std::vector<Side>& sides, unsigned bits,
                              ComparisonPart& certificates) {
  ScopedPrecision precision(bits);
  ComparisonPart part;
  part.name = "optima";
  part.quantity = "|v_f − v_r| per linear optimum (cutting planes against the full LP)";
  certificates.name = "certificates";
  certificates.quantity = "(L_r − U_claimed)₊: the fast path's certified bound below a point of P";
  const long long terms = static_cast<long long>(body.size() + 1) * body.dim();
  int undecided = 0;
  for (const Side& s : sides) {
    const ConvexBody::LpResult& ref = s.reference;
    if (ref.status != ConvexBody::LpResult::optimal || !ref.certified) {
      part.record_undecided();
      certificates.record_undecided();
      ++undecided;
      continue;
    }
    const Mpfr v_f = [&] {
      Mpfr t = 0;
      for (Eigen::Index c = 0; c < s.v.size(); ++c) t += Mpfr(s.v(c)) * Mpfr(s.x_fast(c));
      return t;
    }();
    const Mpfr u_f = dual_bound(body, s.v, s.dual_fast);
    const std::vector<Mpfr> x = excesses(body, s.x_fast);
    Mpfr penalty = 0, scale = abs(u_f) + abs(v_f);
    for (size_t r = 0; r < x.size(); ++r)
      if (x[r] > 0) penalty += abs(Mpfr(ref.dual(static_cast<Eigen::Index>(r)))) * x[r];
    const double rounding = mpfr_sum_error(bits, terms, to_double(scale) + std::abs(ref.value) + 1.0);
    const double e_r = std::max(ref.upper - ref.value, ref.value - ref.lower);
    const double bound = tol::optimum_two_paths_bound(to_double(u_f - v_f), to_double(penalty), e_r) + rounding;
    part.record(std::abs(to_double(v_f) - ref.value), bound);
    // The fast path's own certificate (rigorous on its cuts, hence on P) against a point the reference verified in P.
    certificates.record(std::max(0.0, ref.lower - s.claimed_upper), rounding);
  }
  part.detail = format("%d optima (%d not compared: the reference LP was not certified)", int(sides.size()), undecided);
  certificates.detail = "the fast path's certified bound on each optimum against the reference's verified lower bound";
  return part;
}

// Every optimiser's excess over every slab against the oracle's tolerance and the double test's error.
ComparisonPart compare_membership(const ConvexBody& body, const std::vector<Side>& sides, unsigned bits) {
  ScopedPrecision precision(bits);
  ComparisonPart part;
  part.name = "membership";
  part.quantity = "excess |⟨a_r, x⟩ − b_r| − η_r of each optimiser over each slab";
  const int n = body.dim();
  double worst = -std::numeric_limits<double>::infinity();
  for (const Side& s : sides) {
    const std::vector<Mpfr> x = excesses(body, s.x_fast);
    const double norm = s.x_fast.norm();
    for (size_t r = 0; r < x.size(); ++r) {
      const Slab& slab = body.slabs()[r];
      double abs_dot = 0;
      for (int c = 0; c < n; ++c) abs_dot += std::abs(slab.a[c] * s.x_fast(c));
      const double allowed = active_set_tolerance(slab, norm) * (1 + tol::gamma(n + 4)) +
                             tol::membership_excess_evaluation_error(n, abs_dot, slab.b, slab.eta) +
                             mpfr_sum_error(bits, n + 2, abs_dot + std::abs(slab.b) + slab.eta);
      const double e = to_double(x[r]);
      worst = std::max(worst, e);
      part.record(std::max(e, 0.0), allowed);
    }
  }
  part.detail = format("%d optimisers × %d slabs; largest excess %.3g", int(sides.size()), int(body.size()), worst);
  return part;
}

// The m − 1 leading left singular vectors of D, from DᵀD = V Λ Vᵀ in MPFR: u_j = D v_j/√λ_j.
ComparisonPart compare_span(const MembershipSpan& fast, int m, unsigned bits) {
  ScopedPrecision precision(bits);
  ComparisonPart part;
  part.name = "span";
  part.quantity = "sin θ of the hull directions (SVD of the optimisers' differences); ‖x̂0 − x0‖";
  const Eigen::MatrixXd& d = fast.differences;
  const long long n = d.rows(), r = d.cols();
  const int free = m - 1;
  if (free == 0 || r == 0) {
    part.detail = "m = 1: no hull directions";
    return part;
  }
  const MatM dm = d.cast<Mpfr>();
  const MatM g = dm.transpose() * dm;
  const Eigen::SelfAdjointEigenSolver<MatM> eig(g);
  const VecM lambda = eig.eigenvalues();  // ascending
  const MatM v = eig.eigenvectors();
  std::vector<double> s(static_cast<size_t>(r));  // descending
  for (long long j = 0; j < r; ++j) s[j] = std::sqrt(std::max(0.0, to_double(lambda(r - 1 - j))));
  MatM u(n, free);
  for (int j = 0; j < free; ++j) {
    const Mpfr lj = lambda(r - 1 - j);
    const Mpfr sj = sqrt(lj > 0 ? lj : Mpfr(0));
    u.col(j) = dm * v.col(r - 1 - j) / sj;
  }
  const Eigen::MatrixXd u_ref = u.unaryExpr([](const Mpfr& x) { return to_double(x); }).transpose();
  const double s_max = s[0];
  const double eps = tol::jacobi_singular_value_bound(n, r) * s_max;
  const double gap = s[free - 1] - (free < r ? s[free] : 0.0);
  const double up = tol::mpfr_unit_roundoff(bits);
  const double fro2 = to_double(dm.squaredNorm());
  const double lambda_gap = s[free - 1] * s[free - 1] - (free < r ? s[free] * s[free] : 0.0);
  const double reference_angle = lambda_gap > 0 ? (tol::gamma(n, up) + tol::gamma(16 * r * r, up)) * fro2 / lambda_gap +
                                                      tol::gamma(n + 1) * s_max / s[free - 1]
                                                : std::numeric_limits<double>::infinity();
  const double sin_bound = tol::singular_subspace_sin_bound(eps, gap, free, n) + reference_angle;
  const Eigen::MatrixXd residual = fast.hull_directions.transpose() - u_ref.transpose() * (u_ref * fast.hull_directions.transpose());
  const double sine = Eigen::JacobiSVD<Eigen::MatrixXd>(residual).singularValues()(0);
  if (!(sin_bound < 1)) {
    part.compared = 1;
    part.undecided = 1;
    part.detail = format("the gap s_{m−1} − s_m = %.3g is not above the SVD's error %.3g: the directions are not "
                         "determined at this accuracy (sin θ = %.3g)", gap, eps, sine);
    return part;
  }
  part.record(sine, sin_bound);
  const Eigen::VectorXd x0_ref = fast.base_point - u_ref.transpose() * (u_ref * fast.base_point);
  const double point_bound = tol::membership_hull_point_bound(sin_bound, fast.base_point.norm(), n, free);
  part.record((fast.hull_point - x0_ref).norm(), point_bound);
  part.detail = format("sin θ = %.3g within %.3g (s_{m−1} = %.3g, s_m = %.3g); ‖x̂0 − x0‖ = %.3g within %.3g", sine,
                       sin_bound, s[free - 1], free < r ? s[free] : 0.0, (fast.hull_point - x0_ref).norm(), point_bound);
  return part;
}

}  // namespace

Comparison check_span_membership(const ConvexBody& body, const MembershipSpan& fast, int m) {
  const auto start = std::chrono::steady_clock::now();
  Comparison c;
  c.stage = std::string("5");
  c.quantity = "stage 5 by membership queries";
  if (!fast.ok()) {
    c.detail = "not compared: " + fast.failure;
    return c;
  }
  std::vector<Side> sides;
  for (const MembershipOptimum& o : fast.optima) {
    sides.push_back({o.direction, o.x_max, o.dual_max, o.upper_max, body.maximise(o.direction)});
    sides.push_back({-o.direction, o.x_min, o.dual_min, -o.lower_min, body.maximise(-o.direction)});
  }
  // The row's own items: the optima; its parts: the certificates, membership, the span.
  ComparisonPart certificates;
  const ComparisonPart optima = escalate_part([&](unsigned bits) {
    certificates = ComparisonPart{};
    ComparisonPart p = compare_optima(body, sides, bits, certificates);
    p.precision = certificates.precision = bits;
    return p;
  });
  static_cast<ComparisonItems&>(c) = optima;
  c.quantity = optima.quantity;
  c.detail = format("%d directions, %lld oracle queries, reference LPs over all %d slabs: ", int(fast.optima.size()),
                    (long long)fast.oracle_queries, int(body.size())) + optima.detail;
  add_part(c, certificates);
  add_part(c, escalate_part([&](unsigned bits) {
             ComparisonPart p = compare_membership(body, sides, bits);
             p.precision = bits;
             return p;
           }));
  add_part(c, escalate_part([&](unsigned bits) {
             ComparisonPart p = compare_span(fast, m, bits);
             p.precision = bits;
             return p;
           }));
  c.stage = std::string("5");
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return c;
}

}  // namespace mha
