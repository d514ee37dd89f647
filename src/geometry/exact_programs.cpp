// Exact LP/QP over the convex body with CGAL's QP solver (reference path).
#include "geometry/exact_programs.hpp"

#include <CGAL/Gmpzf.h>
#include <CGAL/QP_functions.h>
#include <CGAL/QP_models.h>

#include <gmp.h>

#include <cmath>
#include <stdexcept>

namespace mha {

namespace {

using ET = CGAL::Gmpzf;
using Program = CGAL::Quadratic_program<ET>;
using Solution = CGAL::Quadratic_program_solution<ET>;

// m·2^e exactly.
Rational to_rational(const ET& f) {
  mpq_t q;
  mpq_init(q);
  mpq_set_z(q, f.man());
  const long e = f.exp();
  if (e > 0) mpq_mul_2exp(q, q, static_cast<mp_bitcnt_t>(e));
  if (e < 0) mpq_div_2exp(q, q, static_cast<mp_bitcnt_t>(-e));
  Rational out(q);
  mpq_clear(q);
  return out;
}

Rational to_rational(const CGAL::Quotient<ET>& q) { return to_rational(q.numerator()) / to_rational(q.denominator()); }

// Rows: slab r with η_r > 0 gives two rows, ⟨a_r,θ⟩ ≥ b_r − η_r and ⟨a_r,θ⟩ ≤ b_r + η_r
// (formed exactly in Gmpzf); η_r = 0 gives one equality row.
void add_slab_rows(Program& p, const ConvexBody& body) {
  int row = 0;
  for (const Slab& s : body.slabs()) {
    const ET b(s.b), eta(s.eta);
    const int rows = s.eta > 0 ? 2 : 1;
    for (int k = 0; k < rows; ++k) {
      for (int c = 0; c < body.dim(); ++c)
        if (s.a[c] != 0.0) p.set_a(c, row + k, ET(s.a[c]));
    }
    if (rows == 1) {
      p.set_b(row, b);
      p.set_r(row, CGAL::EQUAL);
    } else {
      p.set_b(row, b - eta);
      p.set_r(row, CGAL::LARGER);
      p.set_b(row + 1, b + eta);
      p.set_r(row + 1, CGAL::SMALLER);
    }
    row += rows;
  }
}

ExactStatus status_of(const Solution& s) {
  if (s.is_optimal()) return ExactStatus::optimal;
  if (s.is_infeasible()) return ExactStatus::infeasible;
  return ExactStatus::unbounded;
}

ExactLpResult exact_lp(const ConvexBody& body, const Eigen::VectorXd& u, int sense) {
  if (u.size() != body.dim() || !u.allFinite())
    throw std::invalid_argument("exact LP: direction must have body.dim() finite entries");
  const int n = body.dim();
  ExactLpResult out;
  out.x.assign(n, Rational(0));
  if (body.size() == 0) {
    // max over the box alone: θ_c = R·sign(v_c); no solver needed.
    out.status = ExactStatus::optimal;
    const Rational r(body.radius());
    out.value = 0;
    for (int c = 0; c < n; ++c) {
      const double vc = sense * u(c);
      out.x[c] = vc > 0 ? r : (vc < 0 ? Rational(-r) : Rational(0));
      out.value += Rational(u(c)) * out.x[c];
    }
    return out;
  }
  // CGAL minimises: min ⟨−sense·u, θ⟩ = −max ⟨sense·u, θ⟩. Variables bounded by the box.
  const ET r(body.radius());
  Program p(CGAL::EQUAL, true, -r, true, r);
  for (int c = 0; c < n; ++c)
    if (u(c) != 0.0) p.set_c(c, ET(-sense * u(c)));
  add_slab_rows(p, body);
  const Solution s = CGAL::solve_linear_program(p, ET());
  out.status = status_of(s);
  if (out.status != ExactStatus::optimal) return out;
  int c = 0;
  for (auto it = s.variable_values_begin(); it != s.variable_values_end(); ++it, ++c) out.x[c] = to_rational(*it);
  out.value = 0;
  for (int k = 0; k < n; ++k) out.value += Rational(u(k)) * out.x[k];
  // Cross-check with CGAL's own objective value (−sense·value): the two are the same rational.
  if (Rational(-sense) * out.value != to_rational(s.objective_value()))
    throw std::logic_error("exact LP: CGAL's objective value disagrees with its solution");
  return out;
}

}  // namespace

const char* to_string(ExactStatus s) {
  switch (s) {
    case ExactStatus::optimal: return "optimal";
    case ExactStatus::infeasible: return "infeasible";
    case ExactStatus::unbounded: return "unbounded";
  }
  return "unknown";
}

ExactLpResult exact_maximise(const ConvexBody& body, const Eigen::VectorXd& u) { return exact_lp(body, u, 1); }
ExactLpResult exact_minimise(const ConvexBody& body, const Eigen::VectorXd& u) { return exact_lp(body, u, -1); }

ExactQpResult exact_min_norm_point(const ConvexBody& body) {
  const int n = body.dim();
  ExactQpResult out;
  out.x.assign(n, Rational(0));
  if (body.size() == 0) {
    out.status = ExactStatus::optimal;
    out.norm_squared = 0;
    out.inside_ball = true;
    return out;
  }
  // Same contract as the fast path: the program is only solved when P = slabs ∩ box
  // is nonempty (otherwise K = ∅ and the result is `infeasible`).
  if (exact_lp(body, Eigen::VectorXd::Zero(n), 1).status == ExactStatus::infeasible) return out;
  // Free variables; objective θᵀDθ with D = I (CGAL takes the entries of 2D).
  Program p(CGAL::EQUAL, false, ET(0), false, ET(0));
  for (int c = 0; c < n; ++c) p.set_d(c, c, ET(2));
  add_slab_rows(p, body);
  const Solution s = CGAL::solve_quadratic_program(p, ET());
  out.status = status_of(s);
  if (out.status != ExactStatus::optimal) return out;
  int c = 0;
  for (auto it = s.variable_values_begin(); it != s.variable_values_end(); ++it, ++c) out.x[c] = to_rational(*it);
  out.norm_squared = 0;
  for (const Rational& v : out.x) out.norm_squared += v * v;
  if (out.norm_squared != to_rational(s.objective_value()))
    throw std::logic_error("exact QP: CGAL's objective value disagrees with its solution");
  const Rational r(body.radius());
  out.inside_ball = out.norm_squared <= r * r;
  return out;
}

Rational exact_slab_violation(const ConvexBody& body, const std::vector<Rational>& theta) {
  if (static_cast<int>(theta.size()) != body.dim())
    throw std::invalid_argument("exact_slab_violation: point has the wrong size");
  Rational worst(0);
  for (const Slab& s : body.slabs()) {
    Rational r = -Rational(s.b);
    for (int c = 0; c < body.dim(); ++c)
      if (s.a[c] != 0.0) r += Rational(s.a[c]) * theta[c];
    const Rational excess = abs(r) - Rational(s.eta);
    if (excess > worst) worst = excess;
  }
  return worst;
}

bool exact_contains(const ConvexBody& body, const std::vector<Rational>& theta) {
  if (exact_slab_violation(body, theta) > 0) return false;
  Rational norm2(0);
  for (const Rational& v : theta) norm2 += v * v;
  const Rational r(body.radius());
  return norm2 <= r * r;
}

bool exact_contains(const ConvexBody& body, const Eigen::VectorXd& theta) {
  if (theta.size() != body.dim()) throw std::invalid_argument("exact_contains: point has the wrong size");
  if (!theta.allFinite()) return false;
  return exact_contains(body, to_rational(theta));
}

std::vector<Rational> to_rational(const Eigen::VectorXd& v) {
  std::vector<Rational> out;
  out.reserve(v.size());
  for (Eigen::Index i = 0; i < v.size(); ++i) out.emplace_back(v(i));
  return out;
}

Rational squared_distance(const std::vector<Rational>& a, const std::vector<Rational>& b) {
  if (a.size() != b.size()) throw std::invalid_argument("squared_distance: sizes differ");
  Rational s(0);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Rational diff = a[i] - b[i];
    s += diff * diff;
  }
  return s;
}

}  // namespace mha
