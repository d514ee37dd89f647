// The body's weighted least-squares centre: stage 5's fast path reads the span of
// the heads from it. No solver, no certificate. Two methods (convex_body.hpp):
// dense here, streamed in convex_body_centre_streamed.cpp.
#include "geometry/centre_streamed.hpp"
#include "geometry/convex_body.hpp"
#include "geometry/iterative_centre.hpp"

#include "numeric/tolerance.hpp"
#include "util/format.hpp"

#include <Eigen/Dense>
#include <Eigen/SVD>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <unistd.h>

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
  for (Eigen::Index r = 0; r < N; ++r) {
    const auto a = Eigen::Map<const Eigen::RowVectorXd>(slabs[r].a.data(), n);
    const double w = centre_detail::slab_weight(slabs[r], n, radius);
    s.m.row(r) = w * a;
    s.c(r) = w * slabs[r].b;
  }
  return s;
}

// The thin SVD of M as the centre needs it: singular values (descending), the
// right singular vectors and Uᵀc; and what ‖M x − c‖ needs once M is gone: the
// R factor, Qᵀc's first n entries and the squared norm of the rest.
struct ThinSvd {
  Eigen::VectorXd s_desc, utc;
  Eigen::MatrixXd v;
  Eigen::MatrixXd r_factor;
  Eigen::VectorXd qtc;
  double rest2 = 0;
};

ThinSvd thin_svd(WeightedSystem& s, int n) {
  ThinSvd out;
  // When N > n, a Householder QR first (M = QR, SVD of the n×n factor R) halves the
  // cost; the singular values and right singular vectors are those of M, and
  // Uᵀc = U_Rᵀ (Qᵀc)_{1..n}. The QR works in M's own storage (the same arithmetic
  // as on a copy), and M is released before the SVD.
  if (s.m.rows() > n) {
    const Eigen::VectorXd full_qtc = [&] {
      Eigen::HouseholderQR<Eigen::Ref<Eigen::MatrixXd>> qr(s.m);
      out.r_factor = qr.matrixQR().topRows(n).triangularView<Eigen::Upper>();
      return Eigen::VectorXd(qr.householderQ().transpose() * s.c);
    }();
    out.qtc = full_qtc.head(n);
    out.rest2 = full_qtc.tail(full_qtc.size() - n).squaredNorm();
    s.m.resize(0, 0);
    Eigen::BDCSVD<Eigen::MatrixXd> svd(out.r_factor, Eigen::ComputeThinU | Eigen::ComputeThinV);
    out.s_desc = svd.singularValues();
    out.v = svd.matrixV();
    out.utc = svd.matrixU().transpose() * out.qtc;
  } else {
    Eigen::BDCSVD<Eigen::MatrixXd> svd(s.m, Eigen::ComputeThinU | Eigen::ComputeThinV);
    out.s_desc = svd.singularValues();
    out.v = svd.matrixV();
    out.utc = svd.matrixU().transpose() * s.c;
  }
  return out;
}

ConvexBody::Centre dense_centre(const std::vector<Slab>& slabs, int n, double radius, int free) {
  WeightedSystem system = weighted_system(slabs, n, radius);
  const ThinSvd svd = thin_svd(system, n);
  const Eigen::VectorXd& s_desc = svd.s_desc;
  ConvexBody::Centre out;
  out.singular_values = s_desc.reverse();
  const double s_max = s_desc.size() > 0 ? s_desc(0) : 0.0;
  out.threshold = s_max * static_cast<double>(n) * Eigen::NumTraits<double>::epsilon();
  out.rank = static_cast<int>((s_desc.array() > out.threshold).count());
  out.free_basis.resize(free, n);
  for (int i = 0; i < free; ++i) out.free_basis.row(i) = svd.v.col(n - 1 - i).transpose();
  out.x0 = Eigen::VectorXd::Zero(n);
  for (int j = 0; j < n - free; ++j)
    if (s_desc(j) > out.threshold) out.x0 += (svd.utc(j) / s_desc(j)) * svd.v.col(j);
  out.gap = centre_detail::separation_gap(out.singular_values, free, n);
  // ‖M x0 − c‖² = ‖R x0 − (Qᵀc)_{1..n}‖² + ‖(Qᵀc)_{n+1..}‖² when M was factored.
  out.largest_singular_value = s_max;
  out.weighted_residual = system.m.size() > 0
                              ? (system.m * out.x0 - system.c).norm()
                              : std::sqrt((svd.r_factor * out.x0 - svd.qtc).squaredNorm() + svd.rest2);
  return out;
}

}  // namespace

namespace centre_detail {

double slab_weight(const Slab& s, int n, double radius) {
  const double phi_scale = static_cast<double>(n) * tolerance::kDoubleUnitRoundoff;
  const double a_norm = Eigen::Map<const Eigen::RowVectorXd>(s.a.data(), n).norm();
  const double phi = phi_scale * (std::abs(s.b) + a_norm * radius);
  return 1.0 / std::max({s.eta, phi, std::numeric_limits<double>::min()});
}

double separation_gap(const Eigen::VectorXd& asc, int free, int n) {
  if (free == 0) return kInf;
  if (free == n) return 1.0;  // nothing is constrained: no separation to speak of
  if (asc(free - 1) == 0.0) return asc(free) > 0.0 ? kInf : 1.0;
  return asc(free) / asc(free - 1);
}

}  // namespace centre_detail

double ConvexBody::dense_centre_bytes(long long slabs, long long n) {
  // M (max(N, n) × n), R and BDCSVD's own matrices (about 11 n² measured at n = 1024
  // with thin U and V: docs/bench/memory.md).
  return 8.0 * (static_cast<double>(std::max(slabs, n)) * static_cast<double>(n) + 12.0 * double(n) * double(n));
}

double ConvexBody::streamed_centre_bytes(long long n) {
  // The (n+1)² triangular factor beside a block of 1024 rows (the fold), then beside
  // its packed upper triangle (n(n+1)/2); after it the packed triangle beside the
  // n×n bidiagonalised (then least-squares) copy, which is less.
  const double n1 = double(n + 1);
  return 8.0 * (n1 * n1 + std::max(1024.0, double(n) / 2.0) * n1);
}

ConvexBody::CentreMethod ConvexBody::automatic_centre_method(long long slabs, long long n, int free,
                                                              bool rank_one_normals) {
  if (free > kStreamedMaxFree || dense_centre_bytes(slabs, n) <= kDenseCentreMaxBytes) return CentreMethod::dense;
  return rank_one_normals ? CentreMethod::iterative : CentreMethod::streamed;
}

double ConvexBody::physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? double(pages) * double(page) : kInf;
}

ConvexBody::CentreMethod ConvexBody::automatic_centre_method(int free) const {
  return automatic_centre_method(static_cast<long long>(slabs_.size()), n_, free, rank_one_normals());
}

ConvexBody::Centre ConvexBody::least_squares_centre(int free, CentreMethod method, int threads, double memory_bytes,
                                                    const Processes& processes) const {
  if (free < 0 || free > n_)
    throw std::invalid_argument("least_squares_centre: free must be in [0, n], got " + std::to_string(free));
  const long long slabs = static_cast<long long>(slabs_.size());
  if (method == CentreMethod::automatic) method = automatic_centre_method(free);
  if (method == CentreMethod::iterative) {
    if (auto c = centre_detail::iterative_centre(*this, free, threads, processes)) return std::move(*c);
    method = CentreMethod::streamed;  // its conditions failed: the streamed method (then the dense one)
  }
  const bool streamed = method == CentreMethod::streamed;
  if (streamed)
    if (auto c = centre_detail::streamed_centre(slabs_, n_, radius_, free, threads)) return std::move(*c);
  const double bytes = dense_centre_bytes(slabs, n_);
  if (bytes > memory_bytes)
    throw CentreTooLarge(format("the least-squares centre of %lld slabs in %d unknowns: %sthe dense method would need "
                                "%.1f GB, more than this machine's %.1f GB of memory",
                                slabs, n_,
                                streamed ? format("the streamed method's conditions fail (rank below n − free, more than "
                                                  "%d free directions, or no convergence), and ",
                                                  kStreamedMaxFree).c_str()
                                         : "",
                                bytes / 1e9, memory_bytes / 1e9));
  return dense_centre(slabs_, n_, radius_, free);
}

}  // namespace mha
