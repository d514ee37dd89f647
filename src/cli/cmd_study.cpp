// study-wsum: the W-sum lemma's trend (stages/stage1/wsum_study.hpp) as a TSV
// table on stdout, a row as soon as it is computed.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "stages/stage1/wsum_study.hpp"

#include <cstdio>
#include <memory>

namespace mha::cli {

Runner add_study_wsum(CLI::App& app) {
  auto* cmd = app.add_subcommand("study-wsum", "W-sum lemma trend: ‖M(Θ) − I‖ against the stable rank of Θ (TSV on stdout)");
  auto o = std::make_shared<WsumStudyOptions>();
  o->threads = default_threads();
  cmd->add_option("--d", o->dims, "dimensions")->capture_default_str()->delimiter(',');
  cmd->add_option("--k", o->k, "sequence length")->capture_default_str();
  cmd->add_option("--scale", o->scale, "‖Θ‖_F")->capture_default_str();
  cmd->add_option("--points", o->points, "spectra per dimension")->capture_default_str();
  cmd->add_option("--samples", o->samples, "Monte Carlo samples when k·d > 16")->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed")->capture_default_str();
  add_threads_option(cmd, o->threads, "worker threads");
  return [o] {
    if (auto e = wsum_study_problem(*o); !e.empty()) return fail("study-wsum", kExitBadInput, e);
    std::printf("d\tk\talpha\tstable_rank\tm_minus_i_op\tm_minus_i_fro_rel\tstandard_error_op\tmethod\tsamples\n");
    wsum_study(*o, [](const WsumStudyRow& r) {
      std::printf("%d\t%d\t%.3f\t%.4f\t%.6g\t%.6g\t%.3g\t%s\t%lld\n", r.d, r.k, r.alpha, r.stable_rank, r.m_minus_i_op,
                  r.m_minus_i_fro_rel, r.standard_error_op, r.enumerated ? "enumeration" : "monte_carlo", (long long)r.samples);
      std::fflush(stdout);
    });
    return kExitOk;
  };
}

}  // namespace mha::cli
