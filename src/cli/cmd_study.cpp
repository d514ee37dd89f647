// study-wsum: the W-sum lemma's trend. M(Θ) = (1/k) E[Xᵀ J softmax(XΘXᵀ) X]
// against the stable rank of Θ. M(Θ) is stage 1's population value for a
// single head with W = I, so it is estimated with the stage-1 fast path (or
// computed by exhaustive enumeration when k·d ≤ 16). Prints a TSV table.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "data/oracle.hpp"
#include "data/population.hpp"
#include "numeric/rng.hpp"
#include "stages/stage1/wsum.hpp"

#include <Eigen/QR>
#include <Eigen/SVD>

#include <cmath>
#include <cstdio>
#include <memory>

namespace mha::cli {

namespace {
MatD random_orthogonal(uint64_t seed, uint64_t index, int d) {
  const MatD g = gaussian_matrix(seed, Stream::instance, 5000 + index, 0, d);
  return Eigen::HouseholderQR<MatD>(g).householderQ();
}

double op_norm(const MatD& a) { return Eigen::JacobiSVD<MatD>(a).singularValues()(0); }
}  // namespace

Runner add_study_wsum(CLI::App& app) {
  auto* cmd = app.add_subcommand("study-wsum", "W-sum lemma trend: ‖M(Θ) − I‖ against the stable rank of Θ (TSV on stdout)");
  struct Args { std::vector<int> dims = {8, 16, 32}; int k = 2; double scale = 3; int points = 8; int64_t samples = 400000;
                uint64_t seed = 1; int threads = default_threads(); };
  auto a = std::make_shared<Args>();
  cmd->add_option("--d", a->dims, "dimensions")->capture_default_str()->delimiter(',');
  cmd->add_option("--k", a->k, "sequence length")->capture_default_str();
  cmd->add_option("--scale", a->scale, "‖Θ‖_F")->capture_default_str();
  cmd->add_option("--points", a->points, "spectra per dimension")->capture_default_str();
  cmd->add_option("--samples", a->samples, "Monte Carlo samples when k·d > 16")->capture_default_str();
  cmd->add_option("--seed", a->seed, "seed")->capture_default_str();
  cmd->add_option("--threads", a->threads, "worker threads")->capture_default_str();
  return [a] {
    for (int d : a->dims)
      if (d < 1 || d > 256 || a->k > d) return fail("study-wsum", kExitBadInput, "each d must be in k..256");
    std::printf("d\tk\talpha\tstable_rank\tm_minus_i_op\tm_minus_i_fro_rel\tstandard_error_op\tmethod\tsamples\n");
    for (int d : a->dims) {
      for (int p = 0; p < a->points; ++p) {
        // Singular values s_i = i^{-α}: α = 0 is flat (stable rank d), large α is nearly rank one.
        const double alpha = 3.0 * p / (a->points - 1);
        Eigen::VectorXd s(d);
        for (int i = 0; i < d; ++i) s(i) = std::pow(i + 1.0, -alpha);
        MatD theta = random_orthogonal(a->seed, 2 * p, d) * s.asDiagonal() * random_orthogonal(a->seed, 2 * p + 1, d).transpose();
        theta *= a->scale / theta.norm();
        const double stable_rank = s.squaredNorm() / (s(0) * s(0));
        MatD m_hat;
        double se = 0;
        int64_t used = 0;
        const bool exact = a->k * d <= 16;
        if (exact) {
          m_hat = population_m<double>(theta, a->k);
        } else {
          Instance inst;
          inst.k = a->k;
          inst.layer.heads.push_back({theta, MatD::Identity(d, d)});
          const SampleOracle oracle(inst, a->seed + p);
          const Stage1Result r = stage1_estimate_wsum(oracle, {a->samples, a->threads});
          m_hat = r.w_hat;
          se = op_norm(r.standard_error);
          used = r.samples;
        }
        const MatD dev = m_hat - MatD::Identity(d, d);
        std::printf("%d\t%d\t%.3f\t%.4f\t%.6g\t%.6g\t%.3g\t%s\t%lld\n", d, a->k, alpha, stable_rank, op_norm(dev),
                    dev.norm() / std::sqrt(double(d)), se, exact ? "enumeration" : "monte_carlo", (long long)used);
        std::fflush(stdout);
      }
    }
    return kExitOk;
  };
}

}  // namespace mha::cli
