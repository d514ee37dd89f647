// Reference path of polishing: the objective polishing minimises,
//   E(layer) = Σ_n ‖F(X_n) − Y_n‖_F² / Σ_n ‖Y_n‖_F²,
// and its Kaufman gradient in Θ at W held fixed,
//   g = Jᵀ P⊥ r,   r = F(X) − Y,   P⊥ = I − D D⁺ on each output column,
// re-evaluated in MPFR at a layer on the same samples (X_n, Y_n as doubles):
// J from attention_jacobian<Mpfr> (stages/polish/attention_jacobian.hpp), D the
// MPFR design (w_design_rows<Mpfr>), D⁺r by solve_w_stack_reference<Mpfr>.
//
// Fast against reference, objective (proofs/attention_jacobian.md, "The
// objective in MPFR"): with B(X) the fast evaluation's entrywise bound
// (forward_error_bound for the forward pass, design_route_error_bound for
// polishing's design route) and r* = F(X) − Y exact, each fast residual entry
// is within b = B + u(|r*| + B), so Σ r̂² is within S = Σ(2|r*|b + b²) of Σ r*²,
// plus γ_{N+1} of its size for the sum's rounding; Σ Y² is within γ_{N+1}; one
// division (u). The bound is evaluated from the reference residuals only.
//
// Gradient (proofs/attention_jacobian.md, "polish.cpp's gradient on two
// paths"): the Jacobian's rounding, the residual's (design_route_error_bound),
// the Householder projection's (Higham Thm 19.4 and Wedin's sin θ with σ_min
// from the reference design) and the products', first order; every factor is a
// named function of numeric/tolerance.hpp.
#pragma once

#include "model/layer.hpp"
#include "numeric/comparison.hpp"

#include <functional>
#include <limits>
#include <vector>

namespace mha {

// Entrywise bound on a fast evaluation of F(X) at a layer.
using EntryErrorBound = std::function<MatD(const Layer&, const MatD& x)>;
// forward_error_bound at double's unit roundoff (the forward pass).
MatD forward_route_bound(const Layer& layer, const MatD& x);
// design_route_error_bound at double's unit roundoff (polishing's `evaluate`).
MatD design_route_bound(const Layer& layer, const MatD& x);

// E in MPFR at `bits`, and the bound on a fast E's distance from it when the
// fast path evaluates F within `entry_bound`.
struct ObjectiveReference {
  double objective = 0;
  double bound = std::numeric_limits<double>::infinity();
};
ObjectiveReference objective_reference(const Layer& layer, const std::vector<MatD>& xs, const std::vector<MatD>& ys,
                                       unsigned bits, const EntryErrorBound& entry_bound = forward_route_bound);

// `fast_objective` is the fast path's E on these samples.
Comparison compare_objective(const Layer& layer, const std::vector<MatD>& xs, const std::vector<MatD>& ys,
                             double fast_objective, unsigned bits,
                             const EntryErrorBound& entry_bound = forward_route_bound);

// g in MPFR at `bits` against a fast gradient of polish.cpp's linear model
// (dense: attention_jacobian<double>; else the matrix-free Jᵀ·R), at `layer`
// = (Θ, Ŵ) with Ŵ the fast least-squares W. `compared` is false when the
// reference design is rank-deficient; the bound is +inf when the design is too
// close to singular for Wedin's bound at the fast design's accuracy.
struct GradientReference {
  bool compared = false;
  double difference = 0;   // ‖ĝ − g‖₂ (in MPFR, rounded to double)
  double norm = 0;         // ‖g‖₂
  double bound = std::numeric_limits<double>::infinity();
  double sigma_min = 0;    // σ_min(D), a lower bound from the reference design
  double projection = 0;   // π, the bound on ‖Q̂Q̂ᵀ − P_D‖₂
};
GradientReference gradient_reference(const Layer& layer, const std::vector<MatD>& xs, const std::vector<MatD>& ys,
                                     const Eigen::VectorXd& fast_gradient, bool dense, unsigned bits);

// ‖Σ_n J_nᵀ r_n‖ / Σ_n ‖Y_n‖² in MPFR over the first `samples` samples (W
// held fixed, no projection): the first-order optimality of a layer.
double reference_gradient_norm(const Layer& layer, const std::vector<MatD>& xs, const std::vector<MatD>& ys,
                               int64_t samples, unsigned bits);

}  // namespace mha
