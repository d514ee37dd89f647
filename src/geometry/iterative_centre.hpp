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

#include <Eigen/Cholesky>

#include <optional>

namespace mha::centre_detail {

// Backward error ρ of the iterative centre (stored in Centre::free_basis_residual):
//   max( ‖A V̂ − V̂ Λ̂‖_F / ‖M‖_F²  over the k Ritz pairs,  ‖g‖ / (‖r‖ ‖M‖_F) ),
// g = P(Mᵀc − A x̂0) the projected normal residual, r = M x̂0 − c.
struct IterativeStatistics {
  int eigen_iterations = 0, cg_iterations = 0;
  int first_pass_iterations = 0;  // of eigen_iterations, the pass over all k + 2 vectors
  long long products = 0;
  long long heavy_rows = 0;  // the preconditioner's (HeavyRowPreconditioner)
};

std::optional<ConvexBody::Centre> iterative_centre(const ConvexBody& body, int free, int threads,
                                                   const Processes& processes,
                                                   IterativeStatistics* statistics = nullptr);

// T applied to the columns of r (n × b, Θ row-major), over `scale` = Σ_r w_r².
Eigen::MatrixXd population_preconditioner(const Eigen::MatrixXd& r, int d, double scale);

// The preconditioner LOBPCG and CG use: the inverse of
//   P = s_rest·G + M_hᵀ M_h,
// G the tokens' population Gram matrix above (T = (s·G)⁻¹), M_h the rows of M with the
// `heavy` largest weights (ties: the earlier row) and s_rest = Σ w_r² over the others.
// The weights span orders of magnitude (w² over 670× on the benchmark's token bodies),
// so MᵀM is dominated by its heaviest rows, which the population term alone does not
// see: with them LOBPCG took 35–61 iterations instead of 140–251 at d = 32..64 and the
// column products fell 2–3.6× (docs/bench/centre.md). Applied by Woodbury's identity,
//   P⁻¹ = T_r − T_r M_hᵀ (I + M_h T_r M_hᵀ)⁻¹ M_h T_r,   T_r = (s_rest·G)⁻¹,
// where the capacitance matrix's entries are closed forms in the tokens' dot products
// (a_i = u_i ⊗ v_i; heavy_row_capacitance), so its cost is 4·heavy²·d flops to form,
// heavy³/3 to factor (Cholesky) and 4·heavy·d² + 2·heavy² per column to apply. P is
// SPD, so it changes iteration counts, never the answer. Every process builds it
// whole, in one thread: the same bytes on any thread or process count (columns are
// applied in parallel, each in the same arithmetic).
class HeavyRowPreconditioner {
 public:
  HeavyRowPreconditioner(const Eigen::MatrixXd& u, const Eigen::MatrixXd& v, const Eigen::VectorXd& w, Eigen::Index heavy,
                         int threads);
  Eigen::MatrixXd apply(const Eigen::MatrixXd& r) const;
  Eigen::Index heavy() const { return u_.rows(); }
  double rest_scale() const { return rest_; }

 private:
  Eigen::MatrixXd u_, v_;  // the heavy rows' token factors (heavy × d), in row order
  Eigen::VectorXd w_;      // their weights
  double rest_ = 0;
  int d_ = 0, threads_ = 1;
  Eigen::LLT<Eigen::MatrixXd> capacitance_;
};

// How many heavy rows for N rows in n = d² unknowns: min(n, N/2, ⌊(1200·N·d²)^{1/3}⌋),
// the last so that factoring the capacitance (heavy³/3 flops) costs at most about 100
// column products with M (4·N·d² flops each).
Eigen::Index heavy_rows(long long rows, int d);

// I + M_h T_r M_hᵀ for rows u_i ⊗ v_i with weights w_i (heavy × heavy), from
//   s_rest·⟨a_i, T_r a_j⟩ = (2/3)(u_i·u_j)(v_i·v_j) − (1/3)(u_i·v_j)(v_i·u_j)
//                           + (2/3)Σ_p u_ip v_ip u_jp v_jp − (u_i·v_i)(u_j·v_j)/(d + 1)
// (T_r(Θ)·s_rest = (2/3)Θ − (1/3)Θᵀ + (2/3)Diag(Θ) − tr(Θ)·I/(d + 1)).
Eigen::MatrixXd heavy_row_capacitance(const Eigen::MatrixXd& u, const Eigen::MatrixXd& v, const Eigen::VectorXd& w,
                                      double rest);

}  // namespace mha::centre_detail
