#include "stages/polish/reference.hpp"

#include "model/forward_error.hpp"
#include "model/reference.hpp"
#include "numeric/multiprecision.hpp"
#include "numeric/precision.hpp"
#include "numeric/tolerance.hpp"
#include "stages/polish/attention_jacobian.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mha {

namespace tol = mha::tolerance;

Comparison compare_objective(const Layer& layer, const std::vector<MatD>& xs, const std::vector<MatD>& ys,
                             double fast_objective, unsigned bits) {
  ScopedPrecision precision(bits);
  const LayerT<Mpfr> ref_layer = convert_layer<Mpfr>(layer);
  Mpfr ref_sum(0), y_sum(0);
  double spread = 0;  // S = Σ (2|r*| b + b²)
  long long entries = 0;
  for (size_t s = 0; s < xs.size(); ++s) {
    const Mat<Mpfr> r = forward_reference<Mpfr>(ref_layer, cast_matrix<Mpfr>(xs[s])) - cast_matrix<Mpfr>(ys[s]);
    ref_sum += r.squaredNorm();
    y_sum += cast_matrix<Mpfr>(ys[s]).squaredNorm();
    const MatD bf = forward_error_bound(layer, xs[s]);
    const MatD ra = to_double_matrix<Mpfr>(r).cwiseAbs();
    const MatD b = (bf + tol::kDoubleUnitRoundoff * (ra + bf)) * tol::bound_evaluation_factor(4);
    spread += (2.0 * ra.cwiseProduct(b) + b.cwiseProduct(b)).sum();
    entries += ys[s].size();
  }
  const double rs = ref_sum.convert_to<double>(), ys_norm = y_sum.convert_to<double>();
  const double ref_objective = Mpfr(ref_sum / y_sum).convert_to<double>();
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
  const double bound = (std::max(above, below) + u * ref_objective +
                        tol::reference_relative_error(bits, 4 * entries) * ref_objective) *
                       tol::bound_evaluation_factor(entries + 8);
  Comparison c;
  c.stage = "polish";
  c.quantity = "|E_fast − E_ref|, E = Σ‖F(X) − Y‖²/Σ‖Y‖²";
  c.record(std::abs(fast_objective - ref_objective), bound);
  char line[200];
  std::snprintf(line, sizeof line, "E = %.6e (fast) vs %.6e (reference) on %zu samples", fast_objective, ref_objective,
                xs.size());
  c.detail = line;
  return c;
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
