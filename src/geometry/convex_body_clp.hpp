// What the convex body's LP (convex_body_lp.cpp) and minimum-norm point
// (convex_body_min_norm.cpp) share about driving COIN-OR CLP: the solver
// settings, the sparse matrix, the row bounds and their tightening, duals fitted
// to CLP's active set, the active-set polish of CLP's point and the Farkas
// certificate of an empty body. Internal to geometry/.
#pragma once

#include "geometry/convex_body_certificates.hpp"

#include <ClpSimplex.hpp>

#include <string>
#include <vector>

namespace mha::convex_body_detail {

// Rounds of "tighten the violated rows and re-solve" before giving up on a
// certified primal point (each round is a warm-started re-solve).
constexpr int kTighteningRounds = 6;
// CLP stops when every reduced cost is within its dual tolerance (default 10⁻⁷) of
// the right sign, i.e. possibly at a vertex that is suboptimal by ~tolerance × η.
// The certificate reports that honestly; a smaller tolerance makes it rarer. This is
// a solver setting, not a tolerance of any check here.
constexpr double kClpDualTolerance = 1e-10;
// Floor for CLP's primal tolerance (default 10⁻⁷) when thin slabs force it down.
constexpr double kMinClpPrimalTolerance = 1e-13;

// CLP's primal tolerance (default 10⁻⁷) is an absolute slack on row activities
// after CLP's row scaling (which brings each row's largest entry near 1), so a slab
// of half-width η_r measures about η_r/‖a_r‖_∞ in CLP's units. Slabs thinner than the
// tolerance are invisible to CLP; start with 1% of the thinnest, within [10⁻¹³, 10⁻⁷].
// A solver setting, not a tolerance of any check here.
double clp_primal_tolerance(const SlabData& d);

// Column-major sparse copy of A for CLP (exact zeros skipped).
struct ClpMatrix {
  std::vector<CoinBigIndex> start;
  std::vector<int> index;
  std::vector<double> value;
};
ClpMatrix clp_matrix(const SlabData& d);

std::string clp_status_text(int status, int secondary);

// Row bounds b_r − η_r + t_r and b_r + η_r − t_r (the rounding of these bounds
// does not matter: only the certificates, evaluated against the exact data, do).
void set_row_bounds(ClpSimplex& model, const SlabData& d, const Eigen::VectorXd& tighten);

// Prepares the warm re-solve after x violated some slabs (viol), and returns false
// when nothing can change. Slabs thinner than CLP's primal tolerance (which lets
// rows sit outside their band, beyond what a margin can absorb) get a tighter
// tolerance and margins started afresh; otherwise the margins grow (tighten_rows).
// The new row bounds are set on `model`.
bool prepare_resolve(ClpSimplex& model, const SlabData& d, const Eigen::VectorXd& viol, int round, double& tau,
                     Eigen::VectorXd& tighten);

// Dual vectors fitted to the active set CLP reports. CLP's own row duals carry
// noise up to its dual tolerance (10⁻⁷), including tiny duals of the wrong sign,
// which cost 2η_r|y_r| in the bounds. A fitted y is supported on the rows CLP has
// at a bound and solves min ‖t_F − (A_Sᵀ y_S)_F‖₂ over the columns F (complete
// orthogonal decomposition: the minimum-norm solution when degenerate). Returns
// that fit and, when some fitted duals have the wrong sign for the side their row
// is on (`sign` = +1 when y_r > 0 belongs to the upper side), a second fit without
// those rows. Any y gives a valid certificate; the caller keeps the best one.
std::vector<Eigen::VectorXd> fitted_duals(const SlabData& d, const Eigen::VectorXd& target, std::vector<int> rows,
                                          const std::vector<int>& cols, const Eigen::VectorXd& residual,
                                          double sign);

// The rows CLP has at a bound (or fixed).
std::vector<int> rows_at_bound(const ClpSimplex& model, int N);

// Recomputes CLP's point from its active set with a dense solve: rows CLP has at a
// bound are put on the nearer (tightened) bound, columns at a box bound on ±R (LP
// only), and the remaining coordinates solve those equations in the minimum-norm
// sense (complete orthogonal decomposition plus one step of iterative refinement).
// For the LP this is the vertex of CLP's final basis; for the QP it is the
// minimum-norm point of the active equalities, which is the QP's solution when the
// active set is right. CLP's own point can be off by up to its primal tolerance
// (10⁻⁷), which matters for slabs thinner than that; the polished point is only a
// candidate and is verified like any other.
Eigen::VectorXd polish(const ClpSimplex& model, const SlabData& d, const Eigen::VectorXd& x,
                       const Eigen::VectorXd& tighten, const Eigen::VectorXd& residual, double radius, bool box);

struct Infeasibility {
  bool certified = false;
  double margin = 0;  // V(y) (rounded down) of the best certificate found
  double phase1 = 0;  // CLP's minimal uniform violation s*
  std::string message;
};

// Phase-1 LP  min s  s.t.  b_r − η_r − s ≤ ⟨a_r,θ⟩ ≤ b_r + η_r + s, |θ_c| ≤ R, s ≥ 0,
// solved by CLP; its row duals give a candidate Farkas vector y, checked by
// farkas_lower_bound (both signs tried: the certificate does not depend on CLP's
// sign conventions).
Infeasibility certify_empty(const SlabData& d, double radius);

}  // namespace mha::convex_body_detail
