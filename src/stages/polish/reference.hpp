// Reference path of polishing: the objective polishing minimises,
//   E(layer) = Σ_n ‖F(X_n) − Y_n‖_F² / Σ_n ‖Y_n‖_F²,
// re-evaluated in MPFR at a layer on the same samples (X_n, Y_n as doubles), and
// the first-order optimality measure ‖∇_Θ ½Σ‖F − Y‖²‖ / Σ‖Y‖² from the MPFR
// Jacobian (stages/polish/attention_jacobian.hpp).
//
// Fast against reference (proofs/attention_jacobian.md, "The objective in
// MPFR"): with B(X) the forward pass's entrywise bound (forward_error_bound)
// and r* = F(X) − Y exact, each fast residual entry is within
// b = B + u(|r*| + B), so Σ r̂² is within S = Σ(2|r*|b + b²) of Σ r*², plus γ_{N+1}
// of its size for the sum's rounding; Σ Y² is within γ_{N+1}; one division (u).
// The bound is evaluated from the reference residuals only.
#pragma once

#include "model/layer.hpp"
#include "numeric/comparison.hpp"

#include <vector>

namespace mha {

// `fast_objective` is the fast path's E on these samples.
Comparison compare_objective(const Layer& layer, const std::vector<MatD>& xs, const std::vector<MatD>& ys,
                             double fast_objective, unsigned bits);

// ‖Σ_n J_nᵀ r_n‖ / Σ_n ‖Y_n‖² in MPFR over the first `samples` samples.
double reference_gradient_norm(const Layer& layer, const std::vector<MatD>& xs, const std::vector<MatD>& ys,
                               int64_t samples, unsigned bits);

}  // namespace mha
