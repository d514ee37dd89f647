// The iterative least-squares centre (ConvexBody::CentreMethod::iterative): the
// centre's quantities from products with the slab matrix M alone
// (geometry/slab_products.hpp), never a factorisation of M. MATH.md §3.2 ("The
// centre by its structure") and proofs/iterative_centre.md state what it computes
// and the bound the reference check derives from its residuals.
//
//   1. s_max by power iteration on A = MᵀM (the rank threshold s_max·n·ε);
//   2. the k = min(n, 2·free + 3) smallest eigenpairs of A (λ = s², the right singular
//      vectors) by LOBPCG (Knyazev 2001) with k + 2 vectors and the preconditioner T
//      below, until every wanted residual ‖A v_j − λ_j v_j‖ ≤ kIterativeCentreResidual·λ_max
//      (or, when rounding stops it earlier, ≤ kIterativeCentreStallLimit·λ_max);
//   3. x0 = argmin{‖M x − c‖ : x ⊥ the free basis} by conjugate gradients on the
//      projected normal equations, preconditioned by P T P, to the same relative level.
//
// T inverts the tokens' population Gram matrix: for uniform ±1 tokens
// E[(x_a x_aᵀ) ⊗ (δ δᵀ)] = 2I + S + vec(I)vec(I)ᵀ − 2·diag-projector (δ = x_j − x_a, S
// transposes Θ), i.e. on Θ: off the diagonal ×3 on the symmetric part and ×1 on the
// antisymmetric one, on the diagonal I + 11ᵀ. T is that operator's inverse over
// Σ_r w_r²: SPD for any body, so it changes the iteration counts, never the answer.
#pragma once

#include "geometry/convex_body.hpp"

#include <optional>

namespace mha::centre_detail {

// Backward error ρ of the iterative centre (stored in Centre::free_basis_residual):
//   max( ‖A V̂ − V̂ Λ̂‖_F / ‖M‖_F²  over the k Ritz pairs,  ‖g‖ / (‖r‖ ‖M‖_F) ),
// g = P(Mᵀc − A x̂0) the projected normal residual, r = M x̂0 − c.
struct IterativeStatistics {
  int eigen_iterations = 0, cg_iterations = 0;
  int first_pass_iterations = 0;  // of eigen_iterations, the pass over all k + 2 vectors
  long long products = 0;
};

std::optional<ConvexBody::Centre> iterative_centre(const ConvexBody& body, int free, int threads,
                                                   const Processes& processes,
                                                   IterativeStatistics* statistics = nullptr);

// T applied to the columns of r (n × b, Θ row-major), over `scale` = Σ_r w_r².
Eigen::MatrixXd population_preconditioner(const Eigen::MatrixXd& r, int d, double scale);

}  // namespace mha::centre_detail
