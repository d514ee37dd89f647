#include "numeric/tolerance.hpp"

#include <cmath>

namespace mha::tolerance {

// ---- Property tests

namespace {
double property_gamma(long long n) {
  const double nu = static_cast<double>(n) * 0x1p-53;
  return nu < 1.0 ? nu / (1.0 - nu) : INFINITY;
}
}  // namespace

double head_reorder_bound(int m, int k, int d, double abs_z_sum) {
  const long long terms = static_cast<long long>(m) * k;
  // (1 + γ_{d+k+3})(1 + γ_{d+m}) ≤ 1 + γ_{2d+k+m+3}; 4 more roundings in this expression.
  return 2.0 * property_gamma(terms - 1) * abs_z_sum * (1.0 + property_gamma(2LL * d + k + m + 8));
}

double squared_loss_from_forward_bound(double b_dot_r, double b_sq, double loss, long long entries) {
  // b_dot_r and b_sq are sums of `entries` nonnegative terms (γ_{entries+1} each), then 4 roundings here.
  return (b_dot_r + 0.5 * b_sq + property_gamma(entries + 2) * loss) * (1.0 + property_gamma(entries + 6));
}

double mpfr_softmax_l1_rounding_units(int k) { return 2.0 * (k + 4) + 2.0 * k; }


double least_squares_fit_bound(double kappa, long long rows, long long cols, double x_fro, double r_fro,
                               double t_norm2) {
  const double eps = std::sqrt(static_cast<double>(cols)) * property_gamma(16 * rows * cols);
  const double ke = kappa * eps;
  if (!(ke < 1.0)) return INFINITY;
  return ke / (1.0 - ke) * (2.0 * x_fro + (kappa + 1.0) * r_fro / t_norm2) * (1.0 + property_gamma(12));
}

double jacobi_singular_value_bound(long long rows, long long cols) {
  const double e = property_gamma(16 * rows * cols + 30 * 16 * cols * cols);
  return e / (1.0 - e) * (1.0 + property_gamma(4));  // relative to the computed σ_max (≥ (1 − e)σ_max)
}

}  // namespace mha::tolerance
