// The rigorous arithmetic behind the convex body's certificates (internal to
// geometry/: the LP and the minimum-norm point share it; defined in convex_body.cpp).
// proofs/convex_body_programs.md derives every bound.
//
// Rigorous arithmetic used for the certificates (IEEE double, round to nearest,
// no overflow or underflow — the assumptions of Higham's standard model):
//   up(t)      the next double above t. When t = fl(a ∘ b) for one operation ∘,
//              up(t) ≥ a ∘ b exactly (and t = 0 is exact: without underflow, a sum
//              or product rounds to 0 only when it is 0); every upper bound below is
//              assembled with one up() per operation, lower bounds with down().
//   Dot2       dot products in twice the working precision (Ogita, Rump & Oishi,
//              "Accurate sum and dot product", SIAM J. Sci. Comput. 26 (2005),
//              Algorithm 5.3 with FMA-based TwoProduct), whose result satisfies
//              |res − xᵀy| ≤ u|xᵀy| + γ_k²·Σ|x_i y_i|  (their Theorem 5.3), k terms.
//              Dot2::error() returns 1.01·(u|res| + (k·u)²·S) with S the computed
//              Σ|fl(x_i y_i)|: the factor 1.01 covers 1/(1 − u), γ_k ≤ 1.001·k·u for
//              k·u ≤ 10⁻³, the rounding of S and of the expression itself.
#pragma once

#include "geometry/convex_body.hpp"
#include "numeric/tolerance.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace mha::convex_body_detail {

constexpr double kInf = std::numeric_limits<double>::infinity();

inline double up(double t) { return t == 0.0 ? 0.0 : std::nextafter(t, kInf); }
inline double down(double t) { return t == 0.0 ? 0.0 : std::nextafter(t, -kInf); }

// Σ x_i y_i accumulated in twice the working precision, with a rigorous error bound.
class Dot2 {
 public:
  void add(double a, double b) {
    const double h = a * b;
    const double r = std::fma(a, b, -h);  // TwoProduct: a·b = h + r exactly
    const double x = p_ + h;               // TwoSum: p + h = x + q exactly
    const double z = x - p_;
    const double q = (p_ - (x - z)) + (h - z);
    p_ = x;
    s_ += q + r;
    abs_ += std::abs(h);
    ++k_;
  }
  double value() const { return p_ + s_; }
  // ≥ |value() − Σ x_i y_i|.
  double error() const {
    const double ku = static_cast<double>(std::max(k_, 1)) * tolerance::kDoubleUnitRoundoff;
    return up(1.01 * (tolerance::kDoubleUnitRoundoff * std::abs(value()) + ku * ku * abs_));
  }

 private:
  double p_ = 0, s_ = 0, abs_ = 0;
  int k_ = 0;
};

using RowMajorMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The slab data as dense arrays.
struct SlabData {
  RowMajorMatrix a;  // N×n
  Eigen::VectorXd b, eta;
};

SlabData gather(const std::vector<Slab>& slabs, int n);

// Rigorous residuals r_r = ⟨a_r, x⟩ − b_r: computed value and a bound on its error.
struct Residuals {
  Eigen::VectorXd value, error;
};

Residuals residuals(const SlabData& d, const Eigen::VectorXd& x);

// w = Aᵀy (+ v when v is not empty), each entry with a rigorous error bound.
Residuals transpose_times(const SlabData& d, const Eigen::VectorXd& y, const Eigen::VectorXd& v);

// v_r ≥ (|r_r| − η_r)_+ rigorously (0 means: x provably satisfies slab r).
Eigen::VectorXd violations(const SlabData& d, const Residuals& res);

// U(y) = Σ_r (y_r b_r + |y_r| η_r) + R‖v − Aᵀy‖₁ ≥ max{⟨v,θ⟩ : θ ∈ P}, rounded up.
double dual_upper_bound(const SlabData& d, double radius, const Eigen::VectorXd& v, const Eigen::VectorXd& y);

// V(y) = Σ_r (y_r b_r − |y_r| η_r) − R‖Aᵀy‖₁, rounded down. V(y) > 0 proves P = ∅.
double farkas_lower_bound(const SlabData& d, double radius, const Eigen::VectorXd& y);

}  // namespace mha::convex_body_detail
