#include "stages/polish/reference.hpp"

#include "model/forward_error.hpp"
#include "model/reference.hpp"
#include "numeric/multiprecision.hpp"
#include "numeric/precision.hpp"
#include "numeric/tolerance.hpp"
#include "stages/polish/attention_jacobian.hpp"
#include "stages/stage6/w_least_squares.hpp"

#include <Eigen/SVD>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

namespace mha {

namespace tol = mha::tolerance;

MatD forward_route_bound(const Layer& layer, const MatD& x) { return forward_error_bound(layer, x); }
MatD design_route_bound(const Layer& layer, const MatD& x) { return design_route_error_bound(layer, x); }

ObjectiveReference objective_reference(const Layer& layer, const std::vector<MatD>& xs, const std::vector<MatD>& ys,
                                       unsigned bits, const EntryErrorBound& entry_bound) {
  ScopedPrecision precision(bits);
  const LayerT<Mpfr> ref_layer = convert_layer<Mpfr>(layer);
  Mpfr ref_sum(0), y_sum(0);
  double spread = 0;  // S = Σ (2|r*| b + b²)
  long long entries = 0;
  for (size_t s = 0; s < xs.size(); ++s) {
    const Mat<Mpfr> r = forward_reference<Mpfr>(ref_layer, cast_matrix<Mpfr>(xs[s])) - cast_matrix<Mpfr>(ys[s]);
    ref_sum += r.squaredNorm();
    y_sum += cast_matrix<Mpfr>(ys[s]).squaredNorm();
    const MatD bf = entry_bound(layer, xs[s]);
    const MatD ra = to_double_matrix<Mpfr>(r).cwiseAbs();
    const MatD b = (bf + tol::kDoubleUnitRoundoff * (ra + bf)) * tol::bound_evaluation_factor(4);
    spread += (2.0 * ra.cwiseProduct(b) + b.cwiseProduct(b)).sum();
    entries += ys[s].size();
  }
  const double rs = ref_sum.convert_to<double>(), ys_norm = y_sum.convert_to<double>();
  ObjectiveReference out;
  out.objective = Mpfr(ref_sum / y_sum).convert_to<double>();
  // The fast E lies in [lower, upper], upper = (rs + S)(1 + g)(1 + u)/(ys(1 − g)) and
  // lower = max(0, rs − S − g(rs + S))(1 − u)/(ys(1 + g)). Their distances to E* = rs/ys,
  // expanded so that no subtraction of nearly equal numbers occurs (evaluated as
  // upper − E they lose ~u·E, which is not small against the bound at a good fit):
  //   upper − E* = (S(1 + g)(1 + u) + rs(2g + u + gu)) / (ys(1 − g)),
  //   E* − lower = (rs(2g + u − gu) + S(1 + g)(1 − u)) / (ys(1 + g))   (E* when lower = 0);
  // plus the reference's own error and its rounding to double (u·E).
  const double u = tol::kDoubleUnitRoundoff, g = tol::gamma(entries + 1);
  const double above = (spread * (1 + g) * (1 + u) + rs * (2 * g + u + g * u)) / (ys_norm * (1 - g));
  const double below = rs - spread - g * (rs + spread) > 0
                           ? (rs * (2 * g + u - g * u) + spread * (1 + g) * (1 - u)) / (ys_norm * (1 + g))
                           : rs / ys_norm;
  out.bound = (std::max(above, below) + u * out.objective +
               tol::reference_relative_error(bits, 4 * entries) * out.objective) *
              tol::bound_evaluation_factor(entries + 8);
  return out;
}

Comparison compare_objective(const Layer& layer, const std::vector<MatD>& xs, const std::vector<MatD>& ys,
                             double fast_objective, unsigned bits, const EntryErrorBound& entry_bound) {
  const ObjectiveReference ref = objective_reference(layer, xs, ys, bits, entry_bound);
  Comparison c;
  c.stage = "polish";
  c.quantity = "|E_fast − E_ref|, E = Σ‖F(X) − Y‖²/Σ‖Y‖²";
  c.record(std::abs(fast_objective - ref.objective), ref.bound);
  char line[200];
  std::snprintf(line, sizeof line, "E = %.6e (fast) vs %.6e (reference) on %zu samples", fast_objective,
                ref.objective, xs.size());
  c.detail = line;
  return c;
}

namespace {

using MatM = Mat<Mpfr>;

// The reference's design and residual on all samples, and the squared
// Frobenius norms of the entrywise error bounds the gradient's bound needs:
// of the fast path (design route at u) and of the reference itself (at 2⁻ᵖ;
// forward_reference computes (A X) W, the design route's order).
struct ReferenceData {
  MatM design, residual;                  // D (N·k × m·d), r = F(X) − Y (N·k × d)
  double residual_error_sq = 0;           // Σ b², b = B_D + u(|r| + B_D)
  double reference_residual_error_sq = 0; // the same at 2⁻ᵖ
  double design_error_sq = 0;             // ‖e_G‖_F², the fast design's entrywise bound
  double reference_design_error_sq = 0;   // the same at 2⁻ᵖ
};

ReferenceData reference_data(const Layer& layer, const LayerT<Mpfr>& ref_layer, const std::vector<MatD>& xs,
                             const std::vector<MatD>& ys, unsigned bits) {
  const Eigen::Index k = xs.front().rows(), d = layer.d(), m = layer.m(), n = static_cast<Eigen::Index>(xs.size());
  const double u = tol::kDoubleUnitRoundoff, up = tol::mpfr_unit_roundoff(bits);
  ReferenceData out;
  out.design.resize(n * k, m * d);
  out.residual.resize(n * k, d);
  for (Eigen::Index s = 0; s < n; ++s) {
    const MatM xm = cast_matrix<Mpfr>(xs[s]);
    std::vector<MatM> attentions;
    for (const auto& h : ref_layer.heads) attentions.push_back(attention<Mpfr>(h.theta, xm));
    out.design.middleRows(s * k, k) = w_design_rows<Mpfr>(attentions, xm);
    const MatM r = forward_reference<Mpfr>(ref_layer, xm) - cast_matrix<Mpfr>(ys[s]);
    out.residual.middleRows(s * k, k) = r;
    const MatD ra = to_double_matrix<Mpfr>(r).cwiseAbs();
    const MatD b = design_route_error_bound(layer, xs[s]), bp = design_route_error_bound(layer, xs[s], up);
    out.residual_error_sq += (b + u * (ra + b)).squaredNorm();
    out.reference_residual_error_sq += (bp + up * (ra + bp)).squaredNorm();
    out.design_error_sq += design_error_bound(layer, xs[s]).squaredNorm();
    out.reference_design_error_sq += design_error_bound(layer, xs[s], up).squaredNorm();
  }
  return out;
}

// σ_min(D) from below and ‖D‖_F from above, independently of the fast path:
// Jacobi SVD of the reference design rounded to double (u‖D‖_F away, Weyl),
// lowered by its own error (jacobi_singular_value_bound), as stage 6's net check.
struct DesignSpectrum {
  double sigma_min = 0, frobenius = 0;
};

DesignSpectrum design_spectrum(const MatM& design) {
  const MatD dd = to_double_matrix<Mpfr>(design);
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd{Eigen::MatrixXd(dd)};
  const Eigen::Index rows = dd.rows(), cols = dd.cols();
  const double s_hi = svd.singularValues()(0), s_lo = svd.singularValues()(cols - 1);
  DesignSpectrum out;
  out.frobenius = dd.norm() * (1.0 + tol::gamma(rows * cols + 2));
  out.sigma_min = s_lo - (tol::jacobi_singular_value_bound(rows, cols) * s_hi + tol::kDoubleUnitRoundoff * out.frobenius);
  return out;
}

// What the Jacobian loop accumulates: g = Σ_n J_nᵀ s_n and ‖J‖_F² in MPFR, and in
// double ‖M_J‖_F² and the Jacobian terms ‖Σ ρ_J M_Jᵀ|s|‖ for the fast and the
// reference Jacobian, with the largest ρ_J of each.
struct JacobianSums {
  MatM gradient;
  Mpfr jacobian_sq = 0;
  double majorant_sq = 0;
  Eigen::VectorXd fast_term, reference_term;
  double fast_rho = 0, reference_rho = 0;
};

// Head i's majorant M_J (|J| ≤ M_J entrywise) at one sample, from the
// attention A and |V| ≤ |X||W_i|: M_J[(a,c),(p,q)] = |x_a[p]| H_a[c,q],
// H_a[c,q] = Σ_l A[a,l](|V|[l,c] + ȳ[a,c])|x_l[q]|, ȳ = A|V|. Adds ‖M_J‖_F² to
// `frobenius_sq` and returns M_Jᵀ|s| = |X|ᵀ T |X| (d × d), T[a,l] = A[a,l](P[a,l] + P̄[a]),
// P = |s||V|ᵀ, P̄ = Σ_l A[a,l]P[a,l] (proofs/attention_jacobian.md, "Matrix-free products").
MatD head_majorant(const MatD& a, const MatD& x, const MatD& w, const MatD& s_abs, double& frobenius_sq) {
  const Eigen::Index k = x.rows();
  const MatD ax = x.cwiseAbs(), v = ax * w.cwiseAbs(), ybar = a * v;
  for (Eigen::Index row = 0; row < k; ++row) {
    const MatD h = v.transpose() * (a.row(row).transpose().asDiagonal() * ax) +
                   ybar.row(row).transpose() * (a.row(row) * ax);
    frobenius_sq += ax.row(row).squaredNorm() * h.squaredNorm();
  }
  const MatD p = s_abs * v.transpose();
  const Eigen::VectorXd p_bar = a.cwiseProduct(p).rowwise().sum();
  const MatD t = a.cwiseProduct(p + p_bar.replicate(1, k));
  return ax.transpose() * t * ax;
}

JacobianSums jacobian_sums(const Layer& layer, const LayerT<Mpfr>& ref_layer, const std::vector<MatD>& xs,
                           const MatM& projected, bool dense, unsigned bits) {
  const int k = static_cast<int>(xs.front().rows()), d = layer.d(), m = layer.m();
  const long long n = static_cast<long long>(xs.size()), dd = static_cast<long long>(d) * d;
  JacobianSums out;
  out.gradient = MatM::Zero(1, m * dd);
  out.fast_term = out.reference_term = Eigen::VectorXd::Zero(m * dd);
  for (long long s = 0; s < n; ++s) {
    const MatM xm = cast_matrix<Mpfr>(xs[s]);
    const MatM sn = projected.middleRows(s * k, k);
    const MatM j = attention_jacobian<Mpfr>(ref_layer, xm);  // rows a·d + c, columns i·d² + p·d + q
    out.gradient += Eigen::Map<const MatM>(sn.data(), 1, sn.size()) * j;
    out.jacobian_sq += j.squaredNorm();
    const MatD s_abs = to_double_matrix<Mpfr>(sn).cwiseAbs();
    for (int i = 0; i < m; ++i) {
      const MatD a = to_double_matrix<Mpfr>(attention<Mpfr>(ref_layer.heads[i].theta, xm));
      const double lambda =
          (xs[s].cwiseAbs() * layer.heads[i].theta.cwiseAbs() * xs[s].cwiseAbs().transpose()).maxCoeff();
      // The dense model's Ĵ (attention_jacobian<double>) or the matrix-free Jᵀ·R
      // (2d + 3k + 10 + N roundings, proofs/attention_jacobian.md "Matrix-free products").
      const double rho = dense ? tol::attention_jacobian_relative(k, d, lambda)
                               : tol::polish_operator_relative(2LL * d + 3LL * k + 10 + n, lambda);
      const double rho_p = tol::attention_jacobian_relative(k, d, lambda, tol::mpfr_unit_roundoff(bits));
      const MatD g = head_majorant(a, xs[s], layer.heads[i].w, s_abs, out.majorant_sq);
      const Eigen::Map<const Eigen::VectorXd> flat(g.data(), dd);  // row-major: p·d + q
      out.fast_term.segment(i * dd, dd) += rho * flat;
      out.reference_term.segment(i * dd, dd) += rho_p * flat;
      out.fast_rho = std::max(out.fast_rho, rho);
      out.reference_rho = std::max(out.reference_rho, rho_p);
    }
  }
  return out;
}

// The bound on ‖ĝ − g‖ (fast path) plus the reference's own error.
double gradient_bound(const ReferenceData& data, const DesignSpectrum& spectrum, const JacobianSums& sums,
                      double solution_fro, unsigned bits, double& projection) {
  const long long rows = data.design.rows(), cols = data.design.cols(), out_cols = data.residual.cols();
  const double evaluation = tol::bound_evaluation_factor(rows * cols + 4);  // the Frobenius norms below
  const double r_fro = Mpfr(data.residual.norm()).convert_to<double>();
  const double majorant = std::sqrt(sums.majorant_sq) * evaluation;
  const double jacobian = Mpfr(sqrt(sums.jacobian_sq)).convert_to<double>() * (1 + tol::kDoubleUnitRoundoff) +
                          sums.reference_rho * majorant;  // ‖J‖_F ≤ ‖J_ref‖_F + ‖J_ref − J‖_F
  projection = tol::householder_projection_distance(rows, cols, std::sqrt(data.design_error_sq) * evaluation,
                                                    spectrum.frobenius, spectrum.sigma_min);
  const double e_fast = tol::projected_residual_error(r_fro, std::sqrt(data.residual_error_sq) * evaluation, projection);
  const double fast = tol::polish_gradient_bound(sums.fast_term.norm() * evaluation, sums.fast_rho, jacobian, majorant,
                                                 r_fro, e_fast, tol::householder_projection_rounding(rows, cols, out_cols));
  const double pi_p = tol::projection_distance(std::sqrt(data.reference_design_error_sq) * evaluation, spectrum.sigma_min);
  const double e_ref =
      tol::projected_residual_error(r_fro, std::sqrt(data.reference_residual_error_sq) * evaluation, pi_p) +
      tol::normal_equations_projection_error(bits, rows, cols, spectrum.frobenius, spectrum.sigma_min, solution_fro, r_fro);
  const double reference =
      tol::polish_gradient_bound(sums.reference_term.norm() * evaluation, sums.reference_rho, jacobian, majorant, r_fro,
                                 e_ref, tol::reference_relative_error(bits, rows * out_cols));
  // The difference is rounded to double once (u): one more factor.
  return (fast + reference) * tol::bound_evaluation_factor(4);
}

}  // namespace

GradientReference gradient_reference(const Layer& layer, const std::vector<MatD>& xs, const std::vector<MatD>& ys,
                                     const Eigen::VectorXd& fast_gradient, bool dense, unsigned bits) {
  ScopedPrecision precision(bits);
  GradientReference out;
  if (xs.empty()) return out;
  const LayerT<Mpfr> ref_layer = convert_layer<Mpfr>(layer);
  const ReferenceData data = reference_data(layer, ref_layer, xs, ys, bits);
  // P⊥ r = r − D c, c = D⁺ r by the normal equations at `bits`.
  const std::optional<MatM> solution = solve_w_stack_reference<Mpfr>(data.design, data.residual);
  if (!solution) return out;
  const MatM projected = data.residual - data.design * *solution;
  const JacobianSums sums = jacobian_sums(layer, ref_layer, xs, projected, dense, bits);
  const DesignSpectrum spectrum = design_spectrum(data.design);
  out.compared = true;
  out.sigma_min = spectrum.sigma_min;
  const double solution_fro = Mpfr(solution->norm()).convert_to<double>();
  out.bound = gradient_bound(data, spectrum, sums, solution_fro, bits, out.projection);
  out.norm = Mpfr(sums.gradient.norm()).convert_to<double>();
  if (fast_gradient.size() != sums.gradient.size()) {
    out.difference = std::numeric_limits<double>::infinity();  // a fast gradient of the wrong shape differs
    return out;
  }
  const MatM fast = cast_matrix<Mpfr>(Eigen::Map<const MatD>(fast_gradient.data(), 1, fast_gradient.size()));
  out.difference = Mpfr((fast - sums.gradient).norm()).convert_to<double>();
  return out;
}

double reference_gradient_norm(const Layer& layer, const std::vector<MatD>& xs, const std::vector<MatD>& ys,
                               int64_t samples, unsigned bits) {
  ScopedPrecision precision(bits);
  const LayerT<Mpfr> ref_layer = convert_layer<Mpfr>(layer);
  const int d = layer.d();
  Mat<Mpfr> grad = Mat<Mpfr>::Zero(1, static_cast<Eigen::Index>(layer.m()) * d * d);
  Mpfr y_sum(0);
  const int64_t n = std::min<int64_t>(samples, static_cast<int64_t>(xs.size()));
  for (int64_t s = 0; s < n; ++s) {
    const Mat<Mpfr> xm = cast_matrix<Mpfr>(xs[s]);
    const Mat<Mpfr> r = forward_reference<Mpfr>(ref_layer, xm) - cast_matrix<Mpfr>(ys[s]);
    grad += Eigen::Map<const Mat<Mpfr>>(r.data(), 1, r.size()) * attention_jacobian<Mpfr>(ref_layer, xm);
    y_sum += cast_matrix<Mpfr>(ys[s]).squaredNorm();
  }
  return n > 0 ? Mpfr(grad.norm() / y_sum).convert_to<double>() : 0.0;
}

}  // namespace mha
