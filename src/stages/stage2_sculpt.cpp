#include "stages/stage2_sculpt.hpp"

#include "util/progress.hpp"

#include <Eigen/SVD>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace mha {

double default_sigma_min(int d, int k, int m) {
  return std::max(0.05, 0.5 * (std::sqrt(double(d)) - std::sqrt(double(k) * m)));
}

namespace {
struct SampleOutcome {
  std::vector<SlabConstraint> slabs;
  std::array<int64_t, 6> verdicts{};
  int64_t certified_first_row = 0;
  int64_t sigma_violated = 0;
};

double smallest_singular_value_c(const Layer& layer, const MatD& x) {
  const int k = static_cast<int>(x.rows()), d = layer.d(), m = layer.m();
  MatD c(k * m, d);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < k; ++j) c.row(i * k + j) = x.row(j) * layer.heads[i].w;
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(c);
  return svd.singularValues().minCoeff();
}

SculptTruth measure_truth(const ConvexBody& body, const ConvexBody::Centre& centre, const Layer& truth) {
  SculptTruth t;
  const int d = truth.d();
  std::vector<Eigen::VectorXd> thetas;
  for (const auto& h : truth.heads) {
    Eigen::VectorXd th = Eigen::Map<const Eigen::VectorXd>(h.theta.data(), d * d);
    thetas.push_back(th);
    t.theta_violation.push_back(body.max_violation(th));
    t.theta_in_ball.push_back(th.norm() <= body.radius());
    const Eigen::VectorXd rel = th - centre.x0;
    const Eigen::VectorXd proj = centre.x0 + centre.free_basis.transpose() * (centre.free_basis * rel);
    t.hull_error = std::max(t.hull_error, (proj - th).norm() / th.norm());
  }
  // Principal angles between span{Θ_i − Θ_0} and the estimated free directions.
  if (thetas.size() >= 2 && centre.free_basis.rows() == static_cast<Eigen::Index>(thetas.size()) - 1) {
    Eigen::MatrixXd dirs(d * d, thetas.size() - 1);
    for (size_t i = 1; i < thetas.size(); ++i) dirs.col(i - 1) = thetas[i] - thetas[0];
    const Eigen::MatrixXd q = Eigen::HouseholderQR<Eigen::MatrixXd>(dirs).householderQ() *
                              Eigen::MatrixXd::Identity(d * d, thetas.size() - 1);
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(centre.free_basis * q);
    const double cos_min = std::clamp(svd.singularValues().minCoeff(), 0.0, 1.0);
    t.hull_angle = std::acos(cos_min);
  }
  return t;
}
}  // namespace

SculptResult sculpt_body(const SampleSource& source, const MatD& w_hat, int m, const SculptOptions& o, const Layer* truth) {
  const auto start = std::chrono::steady_clock::now();
  const int k = source.k(), d = source.d();
  const int64_t target = o.target_constraints > 0 ? o.target_constraints : 3 * int64_t{d} * d;
  SculptResult result{ConvexBody(d * d, o.radius), {}, {}};
  SculptReport& rep = result.report;
  const int64_t limit = std::min<int64_t>(o.max_samples, samples_from(source, o.first_sample));
  const int64_t batch_size = 65536;
  Progress progress("stage 2: sculpt", limit);
  int64_t drawn = 0;
  while (drawn < limit && rep.constraints < target) {
    const int64_t count = std::min(batch_size, limit - drawn);
    const LabelledBatch batch = source.draw(o.first_sample + drawn, count, o.threads);
    std::vector<SampleOutcome> outcomes(count);
#pragma omp parallel for schedule(dynamic, 256) num_threads(o.threads)
    for (int64_t s = 0; s < count; ++s) {
      const MatD x = batch.x.sample(s);
      const MatD y = Eigen::Map<const MatD>(batch.y.data() + s * k * d, k, d);
      const MatD b = x * w_hat;
      SampleOutcome& out = outcomes[s];
      for (int a = 0; a < (o.all_rows ? k : 1); ++a) {
        const RowCertificate cert = certify_row_fast(x, y, b, a, o.certify);
        ++out.verdicts[static_cast<int>(cert.verdict)];
        if (cert.verdict != RowVerdict::certified) continue;
        if (a == 0) ++out.certified_first_row;
        if (truth && smallest_singular_value_c(*truth, x) < o.certify.sigma_min) ++out.sigma_violated;
        for (auto& slab : slabs_of_row(x, a, cert)) out.slabs.push_back(std::move(slab));
      }
    }
    // Merge in sample order: the body does not depend on the thread count.
    int64_t sigma_violated = 0;
    for (auto& out : outcomes) {
      for (int v = 0; v < 6; ++v) rep.verdicts[v] += out.verdicts[v];
      rep.rows_certified_first_row += out.certified_first_row;
      sigma_violated += out.sigma_violated;
      for (auto& s : out.slabs) result.body.add(Slab{std::move(s.a), s.b, s.eta});
    }
    if (truth) {
      if (!rep.truth) rep.truth.emplace();
      rep.truth->sigma_assumption_violated += sigma_violated;
    }
    drawn += count;
    rep.constraints = static_cast<int64_t>(result.body.size());
    progress.update(drawn);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (o.max_seconds > 0 && elapsed > o.max_seconds) break;
  }
  rep.samples = drawn;
  rep.rows_certified = rep.verdicts[static_cast<int>(RowVerdict::certified)];
  for (auto v : rep.verdicts) rep.rows_examined += v;
  rep.budget_exhausted = rep.constraints < target;
  const double certify_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rep.rows_per_second = rep.rows_examined / std::max(certify_seconds, 1e-9);
  if (result.body.size() > 0) {
    result.centre = result.body.least_squares_centre(m - 1);
    rep.numerical_rank = result.centre.rank;
    rep.gap = result.centre.gap;
    const Eigen::VectorXd& sv = result.centre.singular_values;
    for (Eigen::Index i = 0; i < std::min<Eigen::Index>(sv.size(), 2 * m); ++i) rep.smallest_singular_values.push_back(sv(i));
    if (truth) {
      const int64_t violated = rep.truth ? rep.truth->sigma_assumption_violated : 0;
      rep.truth = measure_truth(result.body, result.centre, *truth);
      rep.truth->sigma_assumption_violated = violated;
    }
  }
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace mha
