// The body's weighted least-squares centre (a thin SVD in double): stage 5's
// fast path reads the span of the heads from it. No solver, no certificate.
#include "geometry/convex_body.hpp"

#include "numeric/tolerance.hpp"

#include <Eigen/Dense>
#include <Eigen/SVD>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace mha {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The weighted system M θ ≈ c of the header's contract: rows w_r a_rᵀ and targets
// w_r b_r, padded with zero rows up to n.
struct WeightedSystem {
  Eigen::MatrixXd m;
  Eigen::VectorXd c;
};

WeightedSystem weighted_system(const std::vector<Slab>& slabs, int n, double radius) {
  const Eigen::Index N = static_cast<Eigen::Index>(slabs.size());
  const Eigen::Index rows = std::max<Eigen::Index>(N, n);
  WeightedSystem s{Eigen::MatrixXd::Zero(rows, n), Eigen::VectorXd::Zero(rows)};
  const double phi_scale = static_cast<double>(n) * tolerance::kDoubleUnitRoundoff;
  for (Eigen::Index r = 0; r < N; ++r) {
    const auto a = Eigen::Map<const Eigen::RowVectorXd>(slabs[r].a.data(), n);
    const double phi = phi_scale * (std::abs(slabs[r].b) + a.norm() * radius);
    const double w = 1.0 / std::max({slabs[r].eta, phi, std::numeric_limits<double>::min()});
    s.m.row(r) = w * a;
    s.c(r) = w * slabs[r].b;
  }
  return s;
}

// The thin SVD of M as the centre needs it: singular values (descending), the
// right singular vectors and Uᵀc.
struct ThinSvd {
  Eigen::VectorXd s_desc, utc;
  Eigen::MatrixXd v;
};

ThinSvd thin_svd(const WeightedSystem& s, int n) {
  ThinSvd out;
  // When N > n, a Householder QR first (M = QR, SVD of the n×n factor R) halves the
  // cost; the singular values and right singular vectors are those of M, and
  // Uᵀc = U_Rᵀ (Qᵀc)_{1..n}.
  if (s.m.rows() > n) {
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(s.m);
    const Eigen::MatrixXd r_factor = qr.matrixQR().topRows(n).triangularView<Eigen::Upper>();
    const Eigen::VectorXd qtc = (qr.householderQ().transpose() * s.c).head(n);
    Eigen::BDCSVD<Eigen::MatrixXd> svd(r_factor, Eigen::ComputeThinU | Eigen::ComputeThinV);
    out.s_desc = svd.singularValues();
    out.v = svd.matrixV();
    out.utc = svd.matrixU().transpose() * qtc;
  } else {
    Eigen::BDCSVD<Eigen::MatrixXd> svd(s.m, Eigen::ComputeThinU | Eigen::ComputeThinV);
    out.s_desc = svd.singularValues();
    out.v = svd.matrixV();
    out.utc = svd.matrixU().transpose() * s.c;
  }
  return out;
}

// s_free / s_{free−1} over the ascending singular values, with the header's
// conventions at the ends.
double separation_gap(const Eigen::VectorXd& asc, int free, int n) {
  if (free == 0) return kInf;
  if (free == n) return 1.0;  // nothing is constrained: no separation to speak of
  if (asc(free - 1) == 0.0) return asc(free) > 0.0 ? kInf : 1.0;
  return asc(free) / asc(free - 1);
}

}  // namespace

ConvexBody::Centre ConvexBody::least_squares_centre(int free) const {
  if (free < 0 || free > n_)
    throw std::invalid_argument("least_squares_centre: free must be in [0, n], got " + std::to_string(free));
  const WeightedSystem system = weighted_system(slabs_, n_, radius_);
  const ThinSvd svd = thin_svd(system, n_);
  const Eigen::VectorXd& s_desc = svd.s_desc;
  Centre out;
  out.singular_values = s_desc.reverse();
  const double s_max = s_desc.size() > 0 ? s_desc(0) : 0.0;
  out.threshold = s_max * static_cast<double>(n_) * Eigen::NumTraits<double>::epsilon();
  out.rank = static_cast<int>((s_desc.array() > out.threshold).count());
  out.free_basis.resize(free, n_);
  for (int i = 0; i < free; ++i) out.free_basis.row(i) = svd.v.col(n_ - 1 - i).transpose();
  out.x0 = Eigen::VectorXd::Zero(n_);
  for (int j = 0; j < n_ - free; ++j)
    if (s_desc(j) > out.threshold) out.x0 += (svd.utc(j) / s_desc(j)) * svd.v.col(j);
  out.gap = separation_gap(out.singular_values, free, n_);
  out.weighted_residual = (system.m * out.x0 - system.c).norm();
  return out;
}

}  // namespace mha
