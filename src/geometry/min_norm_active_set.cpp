#include "geometry/min_norm_active_set.hpp"

#include "numeric/correctly_rounded.hpp"
#include "numeric/tolerance.hpp"

#include <cmath>
#include <limits>
#include <sstream>

namespace mha {

namespace {

// Solver settings, not tolerances of any check: the relative violation the
// method leaves (the contract in the header), and the relative size below which
// a new normal counts as dependent on the active ones (its component orthogonal
// to them is then rounding).
constexpr double kViolationTolerance = 0x1p-40;
constexpr double kDependentNormal = 0x1p-40;
constexpr double kInf = std::numeric_limits<double>::infinity();

// The half-spaces c_iᵀθ ≥ e_i: i = 2r is ⟨a_r, θ⟩ ≥ b_r − η_r, i = 2r + 1 is
// ⟨−a_r, θ⟩ ≥ −(b_r + η_r).
struct HalfSpaces {
  const std::vector<Slab>& slabs;
  int n;
  Eigen::VectorXd normal(int i) const {
    const Eigen::Map<const Eigen::VectorXd> a(slabs[i / 2].a.data(), n);
    return i % 2 == 0 ? Eigen::VectorXd(a) : Eigen::VectorXd(-a);
  }
  double offset(int i) const {
    const Slab& s = slabs[i / 2];
    return i % 2 == 0 ? s.b - s.eta : -(s.b + s.eta);
  }
};

// Q R of the active normals [c_{i_1} … c_{i_q}] (n × q): J = Q (n × n orthogonal),
// R upper triangular in its leading q × q block, kept by Givens rotations.
class Factorisation {
 public:
  explicit Factorisation(int n) : j_(Eigen::MatrixXd::Identity(n, n)), r_(Eigen::MatrixXd::Zero(n, n)) {}
  int size() const { return q_; }
  const Eigen::MatrixXd& j() const { return j_; }

  // d = Jᵀ c for a normal c.
  Eigen::VectorXd transformed(const Eigen::VectorXd& c) const { return j_.transpose() * c; }

  // Appends the normal with d = Jᵀ c: rotations fold d[q:] into d[q].
  void add(Eigen::VectorXd d) {
    const int n = static_cast<int>(d.size());
    for (int i = n - 1; i > q_; --i) rotate_columns(i - 1, i, d(i - 1), d(i), &d);
    r_.col(q_).head(q_ + 1) = d.head(q_ + 1);
    ++q_;
  }

  // Removes the l-th active normal and restores the triangle.
  void drop(int l) {
    for (int c = l; c + 1 < q_; ++c) r_.col(c).head(q_) = r_.col(c + 1).head(q_);
    r_.col(q_ - 1).setZero();
    --q_;
    for (int c = l; c < q_; ++c) {
      const double a = r_(c, c), b = r_(c + 1, c);
      const double h = correctly_rounded_hypot(a, b);
      if (h == 0) continue;
      const double cs = a / h, sn = b / h;
      for (int k = c; k < q_; ++k) {
        const double top = r_(c, k), bottom = r_(c + 1, k);
        r_(c, k) = cs * top + sn * bottom;
        r_(c + 1, k) = -sn * top + cs * bottom;
      }
      r_(c + 1, c) = 0;
      rotate_j(c, c + 1, cs, sn);
    }
  }

  // R⁻¹ d[:q] (back substitution).
  Eigen::VectorXd dual_step(const Eigen::VectorXd& d) const {
    return r_.topLeftCorner(q_, q_).triangularView<Eigen::Upper>().solve(d.head(q_));
  }
  // J[:, q:] d[q:]: the primal step, orthogonal to the active normals.
  Eigen::VectorXd primal_step(const Eigen::VectorXd& d) const {
    const int n = static_cast<int>(d.size());
    return j_.rightCols(n - q_) * d.tail(n - q_);
  }
  // The minimum-norm solution of the active equalities C θ = e: C = Rᵀ J₁ᵀ, θ = J₁ R⁻ᵀ e.
  Eigen::VectorXd min_norm_solution(const Eigen::VectorXd& e) const {
    const Eigen::VectorXd y = r_.topLeftCorner(q_, q_).transpose().triangularView<Eigen::Lower>().solve(e);
    return j_.leftCols(q_) * y;
  }

 private:
  // The rotation that maps (a, b) to (h, 0), applied to J's columns i, k and to d.
  void rotate_columns(int i, int k, double a, double b, Eigen::VectorXd* d) {
    const double h = correctly_rounded_hypot(a, b);
    if (h == 0) return;
    const double cs = a / h, sn = b / h;
    rotate_j(i, k, cs, sn);
    (*d)(i) = h;
    (*d)(k) = 0;
  }
  void rotate_j(int i, int k, double cs, double sn) {
    const Eigen::VectorXd ji = j_.col(i), jk = j_.col(k);
    j_.col(i) = cs * ji + sn * jk;
    j_.col(k) = -sn * ji + cs * jk;
  }

  Eigen::MatrixXd j_, r_;
  int q_ = 0;
};

// The most violated half-space (violation over ‖a_r‖), or −1 when none exceeds its tolerance.
int most_violated(const HalfSpaces& h, const Eigen::VectorXd& x, const std::vector<bool>& is_active) {
  const double x_norm = x.norm();
  int best = -1;
  double worst = 0;
  for (size_t r = 0; r < h.slabs.size(); ++r) {
    const Slab& s = h.slabs[r];
    const Eigen::Map<const Eigen::VectorXd> a(s.a.data(), h.n);
    const double a_norm = a.norm();
    if (a_norm == 0) continue;
    const double ax = a.dot(x), tol = active_set_tolerance(s, x_norm);
    for (int side = 0; side < 2; ++side) {
      const int i = static_cast<int>(2 * r) + side;
      if (is_active[i]) continue;
      const double slack = side == 0 ? ax - (s.b - s.eta) : (s.b + s.eta) - ax;
      if (slack < -tol && -slack / a_norm > worst) {
        worst = -slack / a_norm;
        best = i;
      }
    }
  }
  return best;
}

double max_violation(const std::vector<Slab>& slabs, const Eigen::VectorXd& x, int n) {
  double v = 0;
  for (const Slab& s : slabs) {
    const double ax = Eigen::Map<const Eigen::VectorXd>(s.a.data(), n).dot(x);
    v = std::max(v, std::abs(ax - s.b) - s.eta);
  }
  return v;
}

}  // namespace

double active_set_tolerance(const Slab& slab, double x_norm) {
  double a2 = 0;
  for (double v : slab.a) a2 += v * v;
  return kViolationTolerance * (std::sqrt(a2) * x_norm + std::abs(slab.b) + slab.eta);
}

ActiveSetResult min_norm_point_active_set(const ConvexBody& body) {
  const int n = body.dim();
  const HalfSpaces h{body.slabs(), n};
  const int halfspaces = static_cast<int>(2 * body.size());
  ActiveSetResult out;
  for (const Slab& s : body.slabs()) {
    bool zero = true;
    for (double v : s.a) zero = zero && v == 0.0;
    if (zero && std::abs(s.b) > s.eta) {
      out.status = ActiveSetResult::infeasible;
      out.message = "a slab with a zero normal has |b| > eta: the slabs are empty";
      return out;
    }
  }
  Factorisation f(n);
  std::vector<int> active;
  std::vector<double> u;  // multipliers of `active`
  std::vector<bool> is_active(halfspaces, false);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
  const int cap = 20 * (n + halfspaces) + 100;
  for (;;) {
    const int p = most_violated(h, x, is_active);
    if (p < 0) break;
    const Eigen::VectorXd c = h.normal(p);
    const double e = h.offset(p);
    double u_p = 0;
    for (;;) {  // add p, dropping active half-spaces whose multiplier reaches 0 on the way
      if (++out.iterations > cap) {
        out.status = ActiveSetResult::failed;
        out.message = "no convergence after " + std::to_string(cap) + " additions and drops";
        return out;
      }
      const Eigen::VectorXd d = f.transformed(c);
      const Eigen::VectorXd z = f.primal_step(d);
      const Eigen::VectorXd r = f.dual_step(d);
      double t1 = kInf;
      int l = -1;
      for (int k = 0; k < f.size(); ++k)
        if (r(k) > 0 && u[k] / r(k) < t1) {
          t1 = u[k] / r(k);
          l = k;
        }
      const double z2 = d.tail(n - f.size()).squaredNorm();
      const bool dependent = !(std::sqrt(z2) > kDependentNormal * c.norm());
      const double t2 = dependent ? kInf : -(c.dot(x) - e) / z2;
      if (t1 == kInf && t2 == kInf) {
        out.status = ActiveSetResult::infeasible;
        out.message = "half-space " + std::to_string(p) + " cannot be added: the slabs are empty";
        return out;
      }
      const double t = std::min(t1, t2);
      if (!dependent) x += t * z;
      for (int k = 0; k < f.size(); ++k) u[k] -= t * r(k);
      u_p += t;
      if (t2 <= t1) {
        f.add(d);
        active.push_back(p);
        u.push_back(u_p);
        is_active[p] = true;
        break;
      }
      is_active[active[l]] = false;
      active.erase(active.begin() + l);
      u.erase(u.begin() + l);
      f.drop(l);
    }
    // θ from the factorisation, free of the steps' accumulated rounding.
    Eigen::VectorXd offsets(active.size());
    for (size_t k = 0; k < active.size(); ++k) offsets(static_cast<Eigen::Index>(k)) = h.offset(active[k]);
    x = f.min_norm_solution(offsets);
  }
  out.status = ActiveSetResult::optimal;
  out.x = x;
  out.active = active;
  out.multipliers = Eigen::Map<const Eigen::VectorXd>(u.data(), static_cast<Eigen::Index>(u.size()));
  out.max_violation = max_violation(body.slabs(), x, n);
  // ‖x‖ is computed within (n/2 + 2)u; inflated before comparing with R, as ConvexBody does.
  out.inside_ball = x.norm() * (1 + (n + 4) * tolerance::kDoubleUnitRoundoff) <= body.radius();
  std::ostringstream msg;
  msg << active.size() << " active half-spaces after " << out.iterations << " additions and drops";
  out.message = msg.str();
  return out;
}

}  // namespace mha
