#include "test_tolerances.hpp"

#include <cmath>
#include <limits>

namespace mha::tolerance {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

double head_reorder_bound(int m, int k, int d, double abs_z_sum) {
  const long long terms = static_cast<long long>(m) * k;
  // (1 + γ_{d+k+3})(1 + γ_{d+m}) ≤ 1 + γ_{2d+k+m+3}; 4 more roundings in this expression.
  return 2.0 * gamma(terms - 1) * abs_z_sum * (1.0 + gamma(2LL * d + k + m + 8));
}

double squared_loss_from_forward_bound(double b_dot_r, double b_sq, double loss, long long entries) {
  // b_dot_r and b_sq are sums of `entries` nonnegative terms (γ_{entries+1} each), then 4 roundings here.
  return (b_dot_r + 0.5 * b_sq + gamma(entries + 2) * loss) * (1.0 + gamma(entries + 6));
}

double mpfr_softmax_l1_rounding_units(int k) { return 2.0 * (k + 4) + 2.0 * k; }

double least_squares_fit_bound(double kappa, long long rows, long long cols, double x_fro, double r_fro,
                               double t_norm2) {
  // The same Householder/Wedin bound in absolute form, column norms summed in Frobenius norm.
  if (x_fro == 0) return r_fro == 0 ? 0.0 : kInf;
  return x_fro * qr_least_squares_relative_bound(kappa, rows, cols, r_fro / (t_norm2 * x_fro));
}

double reference_in_double_relative(unsigned bits, long long depth) {
  const double u = kDoubleUnitRoundoff;
  return (2.0 * u + (1.0 + u) * reference_relative_error(bits, depth)) * (1.0 + u) * bound_evaluation_factor(5);
}

double dot_product_reorder(long long n) { return 2.0 * gamma(n); }

double reference_reorder(unsigned bits, long long depth) { return 2.0 * reference_relative_error(bits, depth); }

double scaled_copy_relative_error(double eps, long long entries) {
  const double u = kDoubleUnitRoundoff;
  return (3.0 * u * (1.0 + eps) + eps * (2.0 * gamma(entries + 1) + u)) * bound_evaluation_factor(8);
}

double rescaled_norm_relative(long long entries) { return gamma(2 * entries + 4); }

double monte_carlo_frequency_margin(double p, long long draws) {
  return 5.0 * std::sqrt(p * (1.0 - p) / static_cast<double>(draws));
}

double label_noise_power_band(long long samples, long long entries, double max_ratio) {
  return 6.0 * std::sqrt(2.0 / static_cast<double>(entries) * max_ratio / static_cast<double>(samples));
}

double principal_angle_error(long long rows, long long entries) {
  const double e = static_cast<double>(rows) * gamma(entries) + jacobi_singular_value_bound(rows, rows) +
                   kDoubleUnitRoundoff;
  return M_PI / std::sqrt(2.0) * std::sqrt(2.0 * e);
}

double learner_stages_target() { return 1e-2; }

double learner_net_on_true_hull_target() { return 1e-5; }

double learner_polished_target() { return 1e-10; }

double learner_polished_test_error_target() { return 1e-20; }

double learner_budget_limited_target() { return 1e-8; }

double cli_learn_polished_target() { return 1e-6; }

double cli_stages_only_target() { return 0.5; }

double polish_recovery_target() { return 1e-12; }

double polish_validation_target() { return 1e-24; }

double polish_train_floor_target() { return 1e-28; }

double final_fit_improvement_target() { return 2.0; }

double net_recovery_target() { return 1e-5; }

double net_validation_target() { return 1e-9; }

double single_head_w_target() { return 1e-12; }

double sculpt_hull_error_target() { return 1e-2; }

double hull_distance_rounding(long long rows, long long n, double m_frobenius, double smallest_constrained, double theta_norm,
                              double x0_norm) {
  const double backward = gamma(rows * n) * m_frobenius;
  return (backward * theta_norm / smallest_constrained + gamma(2 * n) * (theta_norm + x0_norm)) * bound_evaluation_factor(8);
}

double span_angle_target() { return 1e-2; }

double synthetic_span_angle_target() { return 1e-3; }

double synthetic_span_residual_target() { return 1e-3; }

double synthetic_thin_width_target() { return 0.1; }

double adam_baseline_target() { return 0.1; }

double random_polish_recovery_target() { return learner_polished_target(); }

}  // namespace mha::tolerance
