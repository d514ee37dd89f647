#include "stages/stage1/wsum_study.hpp"

#include "data/oracle.hpp"
#include "data/population.hpp"
#include "numeric/rng.hpp"
#include "stages/stage1/wsum.hpp"

#include <Eigen/QR>
#include <Eigen/SVD>

#include <cmath>

namespace mha {

namespace {
MatD random_orthogonal(uint64_t seed, uint64_t index, int d) {
  const MatD g = gaussian_matrix(seed, Stream::instance, 5000 + index, 0, d);
  return Eigen::HouseholderQR<MatD>(g).householderQ();
}

double op_norm(const MatD& a) { return Eigen::JacobiSVD<MatD>(a).singularValues()(0); }

// Point p of dimension d: Θ with singular values i^{−α} in random bases, scaled to ‖Θ‖_F.
WsumStudyRow study_point(const WsumStudyOptions& o, int d, int p) {
  WsumStudyRow row;
  row.d = d;
  row.k = o.k;
  row.alpha = 3.0 * p / (o.points - 1);  // α = 0 is flat (stable rank d), large α nearly rank one
  Eigen::VectorXd s(d);
  for (int i = 0; i < d; ++i) s(i) = std::pow(i + 1.0, -row.alpha);
  MatD theta = random_orthogonal(o.seed, 2 * p, d) * s.asDiagonal() * random_orthogonal(o.seed, 2 * p + 1, d).transpose();
  theta *= o.scale / theta.norm();
  row.stable_rank = s.squaredNorm() / (s(0) * s(0));
  row.enumerated = o.k * d <= 16;
  MatD m_hat;
  if (row.enumerated) {
    m_hat = population_m<double>(theta, o.k);
  } else {
    Instance inst;
    inst.k = o.k;
    inst.layer.heads.push_back({theta, MatD::Identity(d, d)});
    const SampleOracle oracle(inst, o.seed + p);
    Stage1Options s1;
    s1.samples = o.samples;
    s1.threads = o.threads;
    const Stage1Result r = stage1_estimate_wsum(oracle, s1);
    m_hat = r.w_hat;
    row.standard_error_op = op_norm(r.standard_error);
    row.samples = r.samples;
  }
  const MatD dev = m_hat - MatD::Identity(d, d);
  row.m_minus_i_op = op_norm(dev);
  row.m_minus_i_fro_rel = dev.norm() / std::sqrt(double(d));
  return row;
}
}  // namespace

std::string wsum_study_problem(const WsumStudyOptions& o) {
  for (int d : o.dims)
    if (d < 1 || d > 256 || o.k > d) return "each d must be in k..256";
  return "";
}

std::vector<WsumStudyRow> wsum_study(const WsumStudyOptions& o, const std::function<void(const WsumStudyRow&)>& on_row) {
  std::vector<WsumStudyRow> rows;
  for (int d : o.dims)
    for (int p = 0; p < o.points; ++p) {
      rows.push_back(study_point(o, d, p));
      if (on_row) on_row(rows.back());
    }
  return rows;
}

}  // namespace mha
