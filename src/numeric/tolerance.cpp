#include "numeric/tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mha::tolerance {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

// Whether every argument is a finite number. A bound of arguments that are not
// (NaN, ±∞) is not a bound: +∞, which the comparisons read as "no bound at this
// accuracy" (undecided), so that a NaN or an infinity never yields a finite bound.
template <class... Doubles>
bool finite(Doubles... x) {
  return (std::isfinite(x) && ...);
}
}

double mpfr_unit_roundoff(unsigned bits) { return std::ldexp(1.0, -static_cast<int>(bits)); }

double gamma(long long n, double u) {
  if (!finite(u)) return kInf;
  const double nu = static_cast<double>(n) * u;
  return nu < 1.0 ? nu / (1.0 - nu) : kInf;
}

double bound_evaluation_factor(long long operations) { return 1.0 + gamma(operations + 1); }

namespace {
// Higham's "small integer" c of the Householder QR backward error γ̃ = γ_{c·rows·cols}
// (see qr_least_squares_relative_bound in the header).
constexpr long long kHouseholderConstant = 16;
}  // namespace

double qr_least_squares_relative_bound(double kappa, long long rows, long long cols, double residual_ratio) {
  if (!finite(kappa, residual_ratio)) return kInf;
  const double eps = std::sqrt(static_cast<double>(cols)) * gamma(kHouseholderConstant * rows * cols);
  const double ke = kappa * eps;
  if (!(ke < 1.0)) return kInf;
  const double bound = ke / (1.0 - ke) * (2.0 + (kappa + 1.0) * residual_ratio);
  return bound * bound_evaluation_factor(8);
}

double normal_equations_relative_bound(double kappa, long long rows, long long cols, unsigned bits) {
  if (!finite(kappa)) return kInf;
  const double u = mpfr_unit_roundoff(bits);
  return 4.0 * kappa * kappa * (gamma(rows, u) + gamma(3 * cols, u)) * bound_evaluation_factor(6);
}

double certification_solution_bound(double b_frobenius, double sigma_min_b, double y_norm, double v_norm, int k,
                                    int d) {
  if (!finite(b_frobenius, sigma_min_b, y_norm, v_norm)) return kInf;
  const double b2 = b_frobenius * b_frobenius;
  const double e = (gamma(d) + gamma(3LL * k + 1)) * b2;
  const double s = sigma_min_b * sigma_min_b;
  if (!(e < s)) return kInf;
  return (e * v_norm + gamma(d) * b_frobenius * y_norm) / (s - e) * bound_evaluation_factor(12);
}

double certification_residual_bound(double b_frobenius, double y_norm, double v_norm, double residual, double v_error,
                                    int k, int d) {
  if (!finite(b_frobenius, y_norm, v_norm, residual, v_error)) return kInf;
  // |ρ(v̂) − ρ(v*)| ≤ ‖B‖₂‖v̂ − v*‖ ≤ ‖B‖_F ‖Δv‖ (triangle inequality).
  const double moved = b_frobenius * v_error;
  // fl(y − v̂ᵀB): each entry a k-term dot product and a subtraction, γ_{k+1}.
  const double evaluation = gamma(k + 1) * (y_norm + (v_norm + v_error) * b_frobenius);
  // ‖·‖ of d entries: sum of squares (γ_d) and a square root (u), relative.
  const double norm = gamma(d + 1) * (residual + moved + evaluation);
  return (moved + evaluation + norm) * bound_evaluation_factor(12);
}

double reference_relative_error(unsigned bits, long long depth) { return gamma(depth, mpfr_unit_roundoff(bits)); }

// ---- verify: stage 3's selection, the body of stages 2 and 4

double logit_margin_bound(double abs_logit_max, double margin, int d) {
  if (!finite(abs_logit_max, margin)) return kInf;
  const double u = kDoubleUnitRoundoff;
  const double logits = 2.0 * gamma(2LL * d) * abs_logit_max;
  return (logits + u * (std::abs(margin) + logits)) * bound_evaluation_factor(2LL * d + 6);
}

double slab_centre_difference_bound(double v_j, double v_a, double centre, double v_error) {
  if (!finite(v_j, v_a, centre, v_error)) return kInf;
  const double u = kDoubleUnitRoundoff;
  if (!(v_error < v_j && v_error < v_a)) return kInf;
  const double moved = v_error / (v_j - v_error) + v_error / (v_a - v_error);
  return ((moved + gamma(1)) * (1.0 + 2.0 * u) + 3.0 * u * std::abs(centre)) * bound_evaluation_factor(12);
}

double slab_width_difference_bound(double v_j, double v_a, double delta, double eta, double v_error,
                                   double delta_error) {
  if (!finite(v_j, v_a, delta, eta, v_error, delta_error)) return kInf;
  const double u = kDoubleUnitRoundoff;
  const double d_hi = delta + delta_error;
  double total = 2.0 * u * eta;
  for (double w : {v_j, v_a}) {
    const double w_lo = w - v_error;
    if (!(w_lo > d_hi)) return kInf;
    const double gap = w_lo - d_hi;
    total += delta_error / gap + v_error * d_hi / (w_lo * gap);  // mean value theorem
    total += gamma(2) * d_hi / gap + 2.0 * u * -std::log1p(-d_hi / w_lo);  // evaluation
  }
  return total * bound_evaluation_factor(24);
}

double slab_normal_difference_bound(double a_l1, long long n) {
  if (!finite(a_l1)) return kInf;
  return gamma(3) * a_l1 * bound_evaluation_factor(n + 1);
}

double slab_membership_band(double abs_dot, double abs_centre, double eta, long long n, double centre_error,
                            double width_error, double normal_error_l1, double theta_max) {
  if (!finite(abs_dot, abs_centre, eta, centre_error, width_error, normal_error_l1, theta_max)) return kInf;
  const double u = kDoubleUnitRoundoff;
  const double evaluation = gamma(n + 2) * (abs_dot + abs_centre) + u * (abs_dot + abs_centre + eta);
  return (evaluation + centre_error + width_error + normal_error_l1 * theta_max) * bound_evaluation_factor(n + 8);
}

double ball_membership_band(double theta_norm, double radius, long long n) {
  if (!finite(theta_norm, radius)) return kInf;
  const double u = kDoubleUnitRoundoff;
  return (gamma(n + 1) * theta_norm + u * (theta_norm + radius)) * bound_evaluation_factor(n + 4);
}

double lp_value_difference_bound(double gap_fast, double gap_reference, double shift_fast, double shift_reference) {
  if (!finite(gap_fast, gap_reference, shift_fast, shift_reference)) return kInf;
  return (gap_fast + gap_reference + std::max(shift_fast, shift_reference)) * bound_evaluation_factor(4);
}

// ---- verify: stage 6's net

double least_squares_perturbation_bound(double kappa, double eps, double x_fro, double r_fro, double d_norm2) {
  if (!finite(kappa, eps, x_fro, r_fro, d_norm2)) return kInf;
  const double ke = kappa * eps;
  if (!(ke < 1.0)) return kInf;
  return ke / (1.0 - ke) * (2.0 * x_fro + (kappa + 1.0) * r_fro / d_norm2) * bound_evaluation_factor(10);
}

double min_norm_solution_bound(double kappa, long long rotations, long long active, double theta_norm) {
  if (!finite(kappa, theta_norm)) return kInf;
  const double eps = gamma(16 * rotations + 2 * active);
  const double ke = kappa * eps;
  if (!(ke < 1.0)) return kInf;
  return ke / (1.0 - ke) * 3.0 * theta_norm * bound_evaluation_factor(8);
}

double svd_backward_error(long long rows, long long cols) {
  return (gamma(cols + 5) + gamma(16 * rows * cols) + gamma(16 * cols * cols)) * bound_evaluation_factor(8);
}

double streamed_svd_backward_error(long long rows, long long cols, long long free, double residual) {
  if (!finite(residual)) return kInf;
  const double rho = std::max(kInverseIterationResidual, residual);
  const double inverse_iteration = std::sqrt(static_cast<double>(free)) * rho;
  return (gamma(cols + 5) + gamma(64 * (cols + 1) * rows) + 2 * gamma(16 * cols * cols) + 2 * gamma(1920 * cols) +
          inverse_iteration + gamma(16 * cols * free) + gamma(cols)) *
         bound_evaluation_factor(16);
}

double singular_subspace_sin_bound(double eps, double gap, long long p, long long cols) {
  if (!finite(eps, gap)) return kInf;
  if (!(gap > eps)) return kInf;
  const double orthogonality = std::sqrt(static_cast<double>(p)) * gamma(16 * cols * cols);
  return (eps / (gap - eps) + orthogonality) * bound_evaluation_factor(8);
}

double hull_point_bound(double eps, double s_max, double s_kept, double s_drop, double sin_kept, double x0_norm,
                        double residual_norm, double c_norm, long long rows, long long cols, long long kept) {
  if (!finite(eps, s_max, s_kept, s_drop, sin_kept, x0_norm, residual_norm, c_norm)) return kInf;
  if (!(sin_kept < 1.0) || !(s_kept > eps)) return kInf;
  const double cos_kept = std::sqrt((1.0 - sin_kept) * (1.0 + sin_kept));
  const double tan_kept = sin_kept / cos_kept;
  const double delta_d = (s_drop * sin_kept + eps) / cos_kept;
  const double kappa = s_max / s_kept;
  const double ls = least_squares_perturbation_bound(kappa, delta_d / s_max, x0_norm, residual_norm, s_max);
  if (!std::isfinite(ls)) return kInf;
  const double delta_c = gamma(cols + 5) * c_norm / (s_kept - eps);
  const double dw = ls + delta_c;
  const double orthogonality = std::sqrt(static_cast<double>(cols)) * gamma(16 * cols * cols);
  const double evaluation = gamma(16 * rows * cols + 2 * cols) * std::sqrt(static_cast<double>(kept)) * c_norm / (s_kept - eps);
  return (tan_kept * (x0_norm + dw) + dw + orthogonality * (x0_norm + dw) + evaluation) * bound_evaluation_factor(24);
}

double span_reference_value_error(long long rows, long long cols, unsigned bits, double frobenius) {
  const double u = mpfr_unit_roundoff(bits);
  return std::sqrt((gamma(rows, u) + gamma(16 * cols * cols, u)) * frobenius * frobenius);
}

double rank_threshold_error(long long cols, double value_error, double threshold) {
  return static_cast<double>(cols) * std::numeric_limits<double>::epsilon() * value_error +
         kDoubleUnitRoundoff * threshold;
}

double span_reference_angle_error(long long cols, unsigned bits, double frobenius, double s_p, double s_p_minus_1) {
  const double u = mpfr_unit_roundoff(bits);
  const double lambda_gap = s_p * s_p - s_p_minus_1 * s_p_minus_1;
  return lambda_gap > 0 ? (gamma(cols, u) + gamma(16 * cols * cols, u)) * frobenius * frobenius / lambda_gap : kInf;
}

double span_reference_point_error(long long rows, long long cols, unsigned bits, double kappa, double x0_norm) {
  return gamma(rows + 16 * cols * cols, mpfr_unit_roundoff(bits)) * kappa * kappa * x0_norm;
}

double design_entry_relative_error(double softmax_relative_error, int k) {
  if (!finite(softmax_relative_error)) return kInf;
  // (1 + ε)(1 + γ) − 1 expanded, so that no cancellation spoils the bound.
  const double g = gamma(k);
  return (softmax_relative_error + g + softmax_relative_error * g) * bound_evaluation_factor(4);
}

double objective_from_residual_bound(double residual_norm, double residual_error, double label_norm2,
                                     long long entries) {
  if (!finite(residual_norm, residual_error, label_norm2)) return kInf;
  // The distance to the upper end, expanded so that no cancellation spoils it:
  // upper − E* = ((2ρδ + δ²) + (ρ + δ)²·(2γ + u + γu)/(1 − γ)) / ‖Y‖².
  // It is never below the distance to the lower end,
  // E* − lower = (t(2ρ − t) + ρ₋²·(2γ + u − γu)/(1 + γ)) / ‖Y‖², ρ₋ = max(0, ρ − δ), t = min(δ, ρ):
  // t(2ρ − t) ≤ 2ρδ + δ² (t = δ: −δ² ≤ δ²; t = ρ < δ: ρ² < 2ρδ), ρ₋ ≤ ρ + δ, and the
  // fraction's numerator is smaller and its denominator larger (proofs/w_least_squares.md, step 6).
  const double u = kDoubleUnitRoundoff, g = gamma(entries);
  const double rho = residual_norm, delta = residual_error, hi = rho + delta;
  const double upper = ((2.0 * rho * delta + delta * delta) + hi * hi * (2.0 * g + u + g * u) / (1.0 - g)) / label_norm2;
  return upper * bound_evaluation_factor(16);
}

double jacobi_singular_value_bound(long long rows, long long cols) {
  const double e = gamma(16 * rows * cols + 30 * 16 * cols * cols);
  return e / (1.0 - e) * (1.0 + gamma(4));  // relative to the computed σ_max (≥ (1 − e)σ_max)
}

double double_softmax_relative_error(double logit_error, double span, int k) {
  if (!finite(logit_error, span)) return kInf;
  const double u = kDoubleUnitRoundoff;
  const double exponent_error = (2.0 * logit_error + u * (span + 2.0 * logit_error)) * bound_evaluation_factor(4);
  return ((1.0 + std::expm1(2.0 * exponent_error)) * (1.0 + gamma(k + 5)) - 1.0) * bound_evaluation_factor(4);
}

double polish_operator_relative(long long roundings, double logit_bound) {
  if (!finite(logit_bound)) return kInf;
  return gamma(roundings) * (1 + 4 * logit_bound);
}

double attention_jacobian_relative(int k, int d, double logit_bound, double u) {
  if (!finite(logit_bound, u)) return kInf;
  return gamma(2LL * d + 2LL * k + 8, u) * (1 + 4 * logit_bound);
}

double projection_distance(double design_error, double sigma_min) {
  if (!finite(design_error, sigma_min)) return kInf;
  if (!(design_error < sigma_min)) return kInf;
  return design_error / (sigma_min - design_error) * bound_evaluation_factor(2);
}

double householder_projection_distance(long long rows, long long cols, double design_error, double design_frobenius,
                                       double sigma_min) {
  if (!finite(design_error, design_frobenius, sigma_min)) return kInf;
  const double g = gamma(kHouseholderConstant * rows * cols);
  const double eps_q = std::sqrt(static_cast<double>(cols)) * g;
  const double moved = projection_distance(design_error + g * (design_frobenius + design_error), sigma_min);
  return (2 * eps_q + eps_q * eps_q + moved) * bound_evaluation_factor(8);
}

double householder_projection_rounding(long long rows, long long cols, long long out_cols) {
  const double g = gamma(kHouseholderConstant * rows * cols);
  const double eps_q = std::sqrt(static_cast<double>(cols)) * g;
  const double n = static_cast<double>(cols);
  return (gamma(rows + cols + 1) * (1 + n * (1 + g) * (1 + g)) + gamma(rows * out_cols) * (1 + 2 * eps_q + eps_q * eps_q)) *
         bound_evaluation_factor(12);
}

double projected_residual_error(double residual_frobenius, double residual_error, double projection) {
  if (!finite(residual_frobenius, residual_error, projection)) return kInf;
  return ((1 + projection) * residual_error + projection * residual_frobenius) * bound_evaluation_factor(4);
}

double normal_equations_projection_error(unsigned bits, long long rows, long long cols, double design_frobenius,
                                         double sigma_min, double solution_frobenius, double residual_frobenius) {
  if (!finite(design_frobenius, sigma_min, solution_frobenius, residual_frobenius)) return kInf;
  if (!(sigma_min > 0)) return kInf;
  const double kappa = design_frobenius / sigma_min;
  const double solve = normal_equations_relative_bound(kappa, rows, cols, bits) * solution_frobenius;
  const double apply = gamma(cols + 1, mpfr_unit_roundoff(bits)) * (residual_frobenius + design_frobenius * solution_frobenius);
  return (design_frobenius * solve + apply) * bound_evaluation_factor(8);
}

double polish_gradient_bound(double jacobian_term, double jacobian_relative_max, double jacobian_frobenius,
                             double majorant_frobenius, double residual_frobenius, double projected_residual_error,
                             double projection_rounding) {
  if (!finite(jacobian_term, jacobian_relative_max, jacobian_frobenius, majorant_frobenius, residual_frobenius,
              projected_residual_error, projection_rounding))
    return kInf;
  const double e = projected_residual_error;
  return (jacobian_term + (jacobian_relative_max * majorant_frobenius + jacobian_frobenius) * e +
          projection_rounding * (1 + jacobian_relative_max) * majorant_frobenius * (residual_frobenius + e)) *
         bound_evaluation_factor(12);
}


double chi_square_tail_quantile(long long n, double t) {
  if (!finite(t)) return kInf;
  const double nd = static_cast<double>(n);
  return (nd + 2.0 * std::sqrt(nd * t) + 2.0 * t) * bound_evaluation_factor(8);
}

double label_noise_row_bound(double relative, double sample_label_norm, int k, int d, double failure_probability) {
  if (!finite(relative, sample_label_norm, failure_probability)) return kInf;
  if (relative == 0) return 0.0;
  const double t = std::log(2.0 / failure_probability);
  const double entries = static_cast<double>(k) * d;
  const double spread = relative * std::sqrt(chi_square_tail_quantile(static_cast<long long>(k) * d, t));
  if (!(spread <= 0.5 * std::sqrt(entries))) return kInf;
  return relative * sample_label_norm * std::sqrt(chi_square_tail_quantile(d, t)) / (std::sqrt(entries) - spread) *
         bound_evaluation_factor(24);
}

double float32_label_rounding_row_bound(double row_norm, int d) {
  if (!finite(row_norm)) return kInf;
  const double u32 = 0x1p-24;
  return (u32 * row_norm + std::sqrt(static_cast<double>(d)) * 0x1p-150) / (1.0 - u32) * bound_evaluation_factor(6);
}

double residual_rounding_level(double rounding_sq_sum, double label_sq_sum) {
  if (!finite(rounding_sq_sum, label_sq_sum)) return kInf;
  if (!(label_sq_sum > 0)) return kInf;
  return std::sqrt(rounding_sq_sum / label_sq_sum) * bound_evaluation_factor(4);
}

double rounding_floor_factor() { return 8.0; }

double noise_estimate_band(long long entries, long long parameters, double max_ratio) {
  if (!finite(max_ratio)) return kInf;
  if (entries <= parameters) return kInf;
  return 6.0 * std::sqrt(2.0 * max_ratio / static_cast<double>(entries - parameters));
}


// ---- The iterative centre (Lemma 3.2.9)

double iterative_eigen_residual_bound(double rho, long long rows, int d, long long cols, long long k, double frobenius) {
  if (!finite(rho, frobenius)) return kInf;
  const double root_k = std::sqrt(static_cast<double>(k));
  const double relative = rho + root_k * (gamma(rows + 2LL * d + 8) + gamma(16 * cols * k)) + 3.0 * gamma(cols + 5);
  return relative * frobenius * frobenius * bound_evaluation_factor(12);
}

double iterative_point_backward_error(double rho, long long rows, int d, long long cols, double frobenius,
                                      double c_norm, double x_norm, double residual_min) {
  if (!finite(rho, frobenius, c_norm, x_norm, residual_min) || !(residual_min > 0)) return kInf;
  const double evaluation = gamma(rows + 2LL * d + 8) * (frobenius * c_norm + frobenius * frobenius * x_norm);
  return ((rho + gamma(cols + 5)) * frobenius + evaluation / residual_min) * bound_evaluation_factor(12);
}

// ---- Stage 5 by membership queries (the paper variant)

double membership_excess_evaluation_error(long long n, double abs_dot, double b, double eta) {
  if (!finite(abs_dot, b, eta)) return kInf;
  return (gamma(n + 2) * (abs_dot + std::abs(b)) + kDoubleUnitRoundoff * eta) * bound_evaluation_factor(8);
}

double optimum_two_paths_bound(double gap_fast, double penalty, double reference_error) {
  if (!finite(gap_fast, penalty, reference_error)) return kInf;
  return (std::max(gap_fast, 0.0) + penalty + reference_error) * bound_evaluation_factor(4);
}

double membership_hull_point_bound(double sin_bound, double point_norm, long long n, long long free) {
  if (!finite(sin_bound, point_norm)) return kInf;
  return (sin_bound + gamma(2 * n * free + 1) * static_cast<double>(1 + free)) * point_norm * bound_evaluation_factor(6);
}

// ---- Polishing's samples (tolerance.hpp: the held-out residual a fit at its optimum leaves)

double heldout_residual_limit(double noise_train, double rounding_level, long long entries, long long parameters,
                              long long heldout_entries) {
  if (!finite(noise_train, rounding_level) || !(noise_train >= 0) || !(rounding_level >= 0)) return kInf;
  if (entries <= 0 || parameters < 0 || heldout_entries <= 0) return kInf;
  const double b_train = noise_estimate_band(entries, parameters, 4.0);
  const double b_heldout = noise_estimate_band(heldout_entries, 0, 4.0);
  if (!(b_train < 1) || !std::isfinite(b_heldout)) return kInf;
  const double sigma = std::max(noise_train, rounding_level);
  const double share = static_cast<double>(parameters) / static_cast<double>(entries);
  return sigma * std::sqrt((1 + share) * (1 + b_heldout) / (1 - b_train));
}

}  // namespace mha::tolerance
