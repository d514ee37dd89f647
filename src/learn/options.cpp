// The learner's options as each round uses them, and the parsing of its inputs.
#include "learn/learner.hpp"

#include <algorithm>
#include <limits>
#include <sstream>

namespace mha {

namespace {

// The least-squares centre costs O(N·d⁴) time and N·d² doubles: at d = 64, 8·d² slabs
// would take 1 GB and a 32768 × 4096 QR; 2¹⁴ slabs (4 per unknown there) keep most of
// the gain (at d = 32, 4·d² slabs gave 1.4e−4 against 1.2e−4 for 8·d²: docs/variants.md).
// Beyond d = 90 the cap is 2 slabs per unknown instead: at one per unknown (2¹⁴ at
// d = 128) M is square, and the smallest singular value of the constrained bulk falls
// towards 0 (as √N − √n for random rows), where the hull direction's gap must stand
// (36–956 at d = 64 with 4 per unknown: docs/bench/memory.md's run).
constexpr int64_t kMaxExtendedSlabs = int64_t{1} << 14;
constexpr int64_t kMinExtendedSlabsPerUnknown = 2;

int64_t extended_slab_cap(int d) { return std::max<int64_t>(kMaxExtendedSlabs, kMinExtendedSlabsPerUnknown * int64_t{d} * d); }

}  // namespace

ResculptOptions sculpt_round_options(const LearnOptions& o, int round, int d, int k, double w_error) {
  ResculptOptions ro = o.sculpt;
  ro.sculpt.threads = o.threads;
  ro.sculpt.processes = o.processes;
  ro.sculpt.certify.sigma_min = round == 0 ? o.crude_sigma_min : default_sigma_min(d, k, o.m);
  ro.sculpt.certify.w_error = round == 0 ? 0 : w_error;
  ro.sculpt.certify.label_noise = o.label_noise;
  ro.sculpt.certify.float32_labels = o.float32_labels;
  if (round == 0 && o.crude_sculpt_samples > 0) ro.sculpt.max_samples = std::min(ro.sculpt.max_samples, o.crude_sculpt_samples);
  // Round 0's body only has to yield a proxy for stage 3: its 3·d² slabs (sculpt's
  // default) within the later rounds' cap (49152 → 32768 at d = 128; unchanged for d ≤ 73).
  if (round == 0 && ro.sculpt.target_constraints == 0)
    ro.sculpt.target_constraints = std::min<int64_t>(constraints_target(ro.sculpt, d), extended_slab_cap(d));
  if (o.variant == LearnVariant::paper) {
    ro.sculpt.all_rows = false;
    ro.sculpt.certify.v_min = 0;
    ro.sculpt.selection = SculptOptions::Selection::threshold;
    // Stage 4 with the fixed τ, over its whole budget. Stage 2's residuals cannot go
    // below the crude Ŵ's error (10–20%, which the W-sum lemma does not bound), so
    // there τ is the pilot's quantile, as in the extended variant's round 0.
    if (round > 0) {
      ro.sculpt.certify.tau = o.paper_tau;
      ro.fixed_tau = true;
      if (ro.sculpt.target_constraints == 0) ro.sculpt.target_constraints = std::numeric_limits<int64_t>::max();
    }
  } else {
    // Every round counts distinct slabs: at d = 8 round 0's 205 slabs had rank 6 of 64, and
    // stage 3 then found events of rank 3 < d (docs/diagnosis.md).
    ro.sculpt.distinct_constraints = true;
  }
  if (o.variant == LearnVariant::extended && round > 0) {
    ro.sculpt.certify.v_min_rule = CertifyOptions::VMinRule::pairwise;
    ro.sculpt.selection = SculptOptions::Selection::best_rows;
    if (ro.sculpt.target_constraints == 0)
      ro.sculpt.target_constraints = std::min<int64_t>(o.extended_constraints_per_unknown * int64_t{d} * d, extended_slab_cap(d));
  }
  return ro;
}



std::string check_learn_input(int k, int d, int m) {
  if (m < 1) return "the number of heads m must be at least 1, got " + std::to_string(m);
  // The words of the CLI's input contract (src/commands/file_kinds.hpp, kLearnerLengthContract).
  if (k < 2) return "k = 1: the learners need k >= 2 (at k = 1 every attention row is trivial)";
  return "";
}

std::string parse_oracle_stages(const std::string& list, OracleStages& out) {
  OracleStages o;
  std::string item;
  std::istringstream in(list);
  while (std::getline(in, item, ',')) {
    if (item == "stage1") o.stage1 = true;
    else if (item == "hull" || item == "stage2" || item == "stage4" || item == "stage5") o.hull = true;
    else if (item == "stage3") o.stage3 = true;
    else if (item == "stage6") o.stage6 = true;
    else return "unknown oracle stage '" + item + "' (stage1, stage2, stage3, stage4, stage5, stage6 or hull)";
  }
  out = o;
  return "";
}

std::vector<std::string> oracle_stage_names(const OracleStages& o) {
  std::vector<std::string> names;
  if (o.stage1) names.push_back("stage1");
  if (o.hull) names.push_back("hull");
  if (o.stage3) names.push_back("stage3");
  if (o.stage6) names.push_back("stage6");
  return names;
}

}  // namespace mha
