// The convex body of stage 2 (MATH.md §3.2, Lemmas 3.2.5–3.2.7) and its programs, fast path.
//
// The unknown Θ ∈ R^{d×d} is flattened row-major to θ ∈ R^n, n = d². The body is
//
//   K = { θ : |⟨a_r, θ⟩ − b_r| ≤ η_r for every slab r,  ‖θ‖_2 ≤ R }.
//
// Widths and optima are linear programs over the polytope
//
//   P = { θ : |⟨a_r, θ⟩ − b_r| ≤ η_r for every r,  |θ_c| ≤ R for every c } ⊇ K
//
// (the box replaces the ball so that widths are LPs; P ⊇ K, so a width of P
// bounds the width of K from above, and P ⊆ √n·R-ball).
//
// Fast path: double precision, COIN-OR CLP (dual simplex for LPs; barrier and
// primal simplex for the QP). Every optimum comes with an a posteriori bound
// on its error computed from CLP's primal and dual solutions in rigorous
// (upward-bumped) double arithmetic, with `certified` saying whether that bound
// rests on no assumption about the solver; proofs/convex_body_programs.md
// derives them. Failures are reported in `status` and `message`, never as a
// silently wrong value. The exact reference is geometry/exact_programs.hpp.
//
// Contract (in the fplll style of named exactness levels):
//   max_violation / contains   @fast: double arithmetic, rounding not accounted
//                              (exact_contains in exact_programs.hpp is exact)
//   maximise / minimise / width / min_norm_point
//                              @certified when `certified`: the true optimum is
//                              within `error_bound` of the returned value, proved
//                              from the returned certificate; @heuristic otherwise
//                              (the bound then assumes what `message` says)
//   least_squares_centre       @fast: a thin SVD in double (dense), or a streamed QR,
//                              bidiagonal singular values and inverse iteration
//                              (streamed); no guarantee beyond backward stability
#pragma once

#include "util/processes.hpp"

#include <Eigen/Core>

#include <cstddef>
#include <string>
#include <stdexcept>
#include <vector>

namespace mha {

// One slab |⟨a, θ⟩ − b| ≤ eta.
struct Slab {
  std::vector<double> a;
  double b = 0;
  double eta = 0;
};

// least_squares_centre's dense method would need more memory than the machine has:
// a failed run (exit 1) with this one line, not an allocation that thrashes.
class CentreTooLarge : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ConvexBody {
 public:
  // n ≥ 1 unknowns, radius R > 0 (finite) of the ball ‖θ‖_2 ≤ R and of the box |θ_c| ≤ R.
  // Throws std::invalid_argument otherwise.
  ConvexBody(int n, double radius);

  // Throws std::invalid_argument when a.size() != n, when a, b or eta is not finite,
  // or when eta < 0.
  void add(Slab s);

  int dim() const { return n_; }
  double radius() const { return radius_; }
  const std::vector<Slab>& slabs() const { return slabs_; }
  std::size_t size() const { return slabs_.size(); }

  // max( max_r (|⟨a_r,θ⟩ − b_r| − η_r)_+ , (‖θ‖_2 − R)_+ ), evaluated in double.
  // contains(θ) = max_violation(θ) ≤ 0. Throws on a wrong size.
  double max_violation(const Eigen::VectorXd& theta) const;
  bool contains(const Eigen::VectorXd& theta) const;

  // Weighted least-squares centre. With weights w_r = 1/max(η_r, φ_r), where
  // φ_r = n·u·(|b_r| + ‖a_r‖_2·R) (u = 2⁻⁵³: the rounding level of evaluating the
  // residual at a point of the ball, so an exact constraint η_r = 0 gets a finite
  // weight), let M be the N×n matrix with rows w_r a_rᵀ and c the vector w_r b_r:
  // the centre minimises ‖Mθ − c‖² = Σ_r ((⟨a_r,θ⟩ − b_r)/max(η_r, φ_r))².
  // From a thin SVD M = U S Vᵀ (rows padded with zeros when N < n):
  //   singular_values  all n singular values of M, ascending (zeros when N < n);
  //   free_basis       free × n, rows = right singular vectors of the `free`
  //                    smallest singular values (orthonormal);
  //   x0               Σ over the n − free largest singular values s_i > threshold of
  //                    (u_iᵀc / s_i) v_i: the minimum-norm least-squares solution
  //                    restricted to the constrained directions;
  //   gap              s_free / s_{free−1} in ascending order (smallest constrained
  //                    over largest free); +inf when free = 0 or s_{free−1} = 0 < s_free,
  //                    1 when both are 0 (no separation);
  //   rank             #{ s_i > threshold }, threshold = s_max·n·ε (Eigen's SVD
  //                    convention, ε = 2⁻⁵²);
  //   weighted_residual ‖M x0 − c‖_2.
  // Requires 0 ≤ free ≤ n (throws otherwise).
  //
  // Three methods compute it (tolerance.hpp derives the error of each):
  //   dense     M whole, Householder QR in place, BDCSVD of R: working memory about
  //             8·(max(N,n)·n + 12n²) bytes (dense_centre_bytes; 2.1 GB at N = 16384,
  //             n = 4096), the slabs aside;
  //   streamed  [M | c] folded row block by row block into its (n+1)×(n+1) triangular
  //             factor (Householder, as a blocked triangle-on-rectangle QR), R
  //             bidiagonalised, all singular values from the Golub–Kahan tridiagonal,
  //             the `free` smallest right singular vectors by inverse iteration on it,
  //             x0 by least squares over their orthogonal complement (QR of R H, H the
  //             reflectors of the free basis), R kept packed while its square copy is
  //             bidiagonalised: about 8·((n+1)² + max(1024, n/2)·(n+1)) bytes
  //             (streamed_centre_bytes; 0.2 GB there). It needs the constrained values
  //             above the threshold (rank ≥ n − free) and free ≤ kStreamedMaxFree, and
  //             otherwise computes the dense centre.
  //   iterative the body's normals kept by their structure (a_r = u_r ⊗ v_r, found exactly
  //             when slabs are added: rank_one_normals) and M applied by it
  //             (geometry/slab_products.hpp, 2N·d² flops a product, shared by threads and
  //             processes): the k = min(n, 2·free + 3) smallest singular values and their
  //             right vectors by LOBPCG on MᵀM preconditioned by the tokens' population
  //             structure corrected by the heaviest rows (HeavyRowPreconditioner), x0 by
  //             preconditioned conjugate gradients across the free basis
  //             (geometry/iterative_centre.hpp). `singular_values` then holds
  //             those k values only, `free_basis_residual` and `value_residual` its
  //             residuals (tolerance::iterative_eigen_residual_bound). Working memory
  //             O((N + n)·k) doubles plus the preconditioner's heavy² (≤ n²). Needs
  //             rank_one_normals(), n ≥ 8(k + 2) and convergence; otherwise the streamed
  //             (then dense) method.
  // `automatic` is dense while dense_centre_bytes ≤ kDenseCentreMaxBytes (d ≤ 35 at the
  // learner's 8·d² slabs: docs/bench/memory.md); beyond, iterative when the normals are
  // rank one (the learner's token slabs), streamed otherwise. On token bodies around a
  // hull the dense method was faster than the iterative one at d = 32 and the iterative
  // faster than the streamed one at d = 40, 48 and 64 (docs/bench/centre.md).
  enum class CentreMethod { automatic, dense, streamed, iterative };
  static constexpr double kDenseCentreMaxBytes = 256.0 * 1024 * 1024;
  static constexpr int kStreamedMaxFree = 32;
  static double dense_centre_bytes(long long slabs, long long n);
  static double streamed_centre_bytes(long long n);
  // The method `automatic` takes for this many slabs, unknowns and free directions, on a
  // body whose normals are (or are not) rank one (before the iterative and streamed
  // methods' own fallbacks).
  static CentreMethod automatic_centre_method(long long slabs, long long n, int free, bool rank_one_normals);
  CentreMethod automatic_centre_method(int free) const;  // the same for this body
  struct Centre {
    Eigen::VectorXd x0;
    Eigen::MatrixXd free_basis;
    Eigen::VectorXd singular_values;
    double gap = 0;
    int rank = 0;
    double threshold = 0;
    double weighted_residual = 0;
    CentreMethod method = CentreMethod::dense;  // the method that computed it (never automatic)
    double largest_singular_value = 0;  // s_max (the iterative method's from LOBPCG on MᵀM)
    // The streamed method's ρ: the largest singular-pair residual of the free basis's
    // inverse-iteration vectors over the bidiagonal's largest entry (0 for dense);
    // tolerance::streamed_svd_backward_error takes it.
    double free_basis_residual = 0;
    // The iterative method's residual of its other computed values (the gap rule's,
    // beyond the free ones): ‖A V̂ − V̂Λ̂‖_F/‖M‖_F² over them (0 for the other methods).
    double value_residual = 0;
  };
  // `threads` share the streamed method's fold, bidiagonalisation and QR, with the
  // same bytes on any number.
  // The dense method is refused with CentreTooLarge when dense_centre_bytes exceeds
  // memory_bytes (where the streamed method's conditions fail at large n: 30 GB at
  // d = 128 with 2·d² slabs would only thrash and end in the kernel's OOM kill).
  // `processes` share the iterative method's products (each its blocks of slabs; the
  // same bytes for any number); the other methods run on every process.
  Centre least_squares_centre(int free, CentreMethod method = CentreMethod::automatic, int threads = 1,
                              double memory_bytes = physical_memory_bytes(), const Processes& processes = {}) const;
  static double physical_memory_bytes();  // this machine's RAM (sysconf), +inf when unknown

  // max / min ⟨u, θ⟩ over P. `value` = fl(⟨u, x⟩) for the returned x ∈ box;
  // `error_bound` ≥ |value − true optimum over P|; `lower`/`upper` bracket the
  // true optimum (upper from a dual certificate, lower from x when x is verified
  // to lie in P). `certified`: the bracket is rigorous (x verified in P with
  // rounding accounted); when false, the side of the bracket on x's side assumes
  // the optimal dual is no larger than CLP's on the rows x violates (message says).
  // For `infeasible`, `certified` means a Farkas certificate proved P empty.
  // `unbounded` cannot happen (the box bounds P) and is reported as failed.
  struct LpResult {
    enum Status { optimal, infeasible, unbounded, failed } status = failed;
    double value = 0;
    Eigen::VectorXd x;
    double error_bound = 0;
    double lower = 0, upper = 0;
    bool certified = false;
    int iterations = 0;
    std::string message;
    // The slab multipliers y of the dual certificate behind the upper side of the
    // bracket (of max ⟨sense·u, θ⟩): U(y) = Σ_r (y_r b_r + |y_r| η_r) + R‖sense·u − Aᵀy‖₁.
    Eigen::VectorXd dual;
  };
  // Whether every normal is an outer product a = vec(u vᵀ) (n = d², found exactly in
  // double when the slab is added: the stage-2 slabs' x_aᵀ(x_j − x_a)), and the factors:
  // row r of normal_factor_u / _v is u_r / v_r (N × d).
  bool rank_one_normals() const { return rank_one_ && !slabs_.empty(); }
  int side() const { return side_; }
  Eigen::MatrixXd normal_factor_u() const;
  Eigen::MatrixXd normal_factor_v() const;

  LpResult maximise(const Eigen::VectorXd& u) const;
  LpResult minimise(const Eigen::VectorXd& u) const;

  // width = max.value − min.value, error_bound ≥ |width − true width of P along u|.
  // When either LP is not optimal, width = NaN and the statuses say why.
  struct Width {
    LpResult max, min;
    double width = 0;
    double error_bound = 0;
  };
  Width width(const Eigen::VectorXd& u) const;

  // The minimum-Euclidean-norm point of the slabs alone (no ball, no box):
  //   min ½‖θ‖²  s.t.  b_r − η_r ≤ ⟨a_r, θ⟩ ≤ b_r + η_r.
  // If it lies in the ball it is the minimum-norm point of K; if it does not, K is
  // empty (every point of the slabs is at least as long). `error_bound` ≥ ‖x − x*‖
  // (a duality-gap bound: ≈ √(u)·scale at best, see the proof file); `norm` = ‖x‖_2;
  // `inside_ball` = ‖x‖_2 ≤ R (upward-rounded), which with `certified` proves x ∈ K.
  // `infeasible`: P = slabs ∩ box was found empty first (an LP with the box; with
  // `certified`, by a Farkas certificate), hence K = ∅; the slabs themselves may
  // still meet far outside the box, where this function does not look.
  // Method: that feasibility LP, then CLP's barrier (only once P is certified
  // nonempty: the barrier aborts the process on infeasible problems) and a primal
  // simplex crossover; the best certified of CLP's point, its active-set polish and
  // the barrier point is returned.
  struct QpResult {
    enum Status { optimal, infeasible, failed } status = failed;
    Eigen::VectorXd x;
    double norm = 0;
    double error_bound = 0;
    bool inside_ball = false;
    bool certified = false;
    std::string message;
  };
  QpResult min_norm_point() const;

 private:
  LpResult optimise(const Eigen::VectorXd& u, double sense) const;
  void check_vector(const Eigen::VectorXd& v, const char* what) const;

  int n_;
  double radius_;
  std::vector<Slab> slabs_;
  int side_ = 0;            // d with d² = n, else 0
  bool rank_one_ = false;   // every normal so far is u ⊗ v
  std::vector<double> u_, v_;  // the factors, slab by slab (d each)
};

const char* to_string(ConvexBody::LpResult::Status s);
const char* to_string(ConvexBody::QpResult::Status s);

}  // namespace mha
