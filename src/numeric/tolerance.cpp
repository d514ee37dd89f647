#include "numeric/tolerance.hpp"

#include <cmath>
#include <limits>

namespace mha::tolerance {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

double mpfr_unit_roundoff(unsigned bits) { return std::ldexp(1.0, -static_cast<int>(bits)); }

double gamma(long long n, double u) {
  const double nu = static_cast<double>(n) * u;
  return nu < 1.0 ? nu / (1.0 - nu) : kInf;
}

double bound_evaluation_factor(long long operations) { return 1.0 + gamma(operations + 1); }

double qr_least_squares_relative_bound(double kappa, long long rows, long long cols, double residual_ratio) {
  constexpr long long kHouseholderConstant = 16;  // Higham's "small integer" c, see the header
  const double eps = std::sqrt(static_cast<double>(cols)) * gamma(kHouseholderConstant * rows * cols);
  const double ke = kappa * eps;
  if (!(ke < 1.0)) return kInf;
  const double bound = ke / (1.0 - ke) * (2.0 + (kappa + 1.0) * residual_ratio);
  return bound * bound_evaluation_factor(8);
}

double normal_equations_relative_bound(double kappa, long long rows, long long cols, unsigned bits) {
  const double u = mpfr_unit_roundoff(bits);
  return 4.0 * kappa * kappa * (gamma(rows, u) + gamma(3 * cols, u)) * bound_evaluation_factor(6);
}

double certification_solution_bound(double b_frobenius, double sigma_min_b, double y_norm, double v_norm, int k,
                                    int d) {
  const double b2 = b_frobenius * b_frobenius;
  const double e = (gamma(d) + gamma(3LL * k + 1)) * b2;
  const double s = sigma_min_b * sigma_min_b;
  if (!(e < s)) return kInf;
  return (e * v_norm + gamma(d) * b_frobenius * y_norm) / (s - e) * bound_evaluation_factor(12);
}

double certification_residual_bound(double b_frobenius, double y_norm, double v_norm, double residual, double v_error,
                                    int k, int d) {
  // |ρ(v̂) − ρ(v*)| ≤ ‖B‖₂‖v̂ − v*‖ ≤ ‖B‖_F ‖Δv‖ (triangle inequality).
  const double moved = b_frobenius * v_error;
  // fl(y − v̂ᵀB): each entry a k-term dot product and a subtraction, γ_{k+1}.
  const double evaluation = gamma(k + 1) * (y_norm + (v_norm + v_error) * b_frobenius);
  // ‖·‖ of d entries: sum of squares (γ_d) and a square root (u), relative.
  const double norm = gamma(d + 1) * (residual + moved + evaluation);
  return (moved + evaluation + norm) * bound_evaluation_factor(12);
}

double reference_relative_error(unsigned bits, long long depth) { return gamma(depth, mpfr_unit_roundoff(bits)); }

}  // namespace mha::tolerance
