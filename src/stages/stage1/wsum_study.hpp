// The W-sum lemma's trend (MATH.md §3.1; docs/wsum.md): for one head
// with W = I, stage 1's population value is M(Θ) = (1/k) E[Xᵀ J softmax(XΘXᵀ) X],
// and the lemma says ‖M(Θ) − I‖ shrinks as the stable rank of Θ grows. The
// study measures ‖M(Θ) − I‖ over spectra s_i = i^{−α} at a fixed ‖Θ‖_F, by
// exact enumeration when k·d ≤ 16 and with stage 1's fast path otherwise.
// `mhalearn study-wsum` prints its rows as TSV; Python's study_wsum returns them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace mha {

struct WsumStudyOptions {
  std::vector<int> dims = {8, 16, 32};
  int k = 2;
  double scale = 3;           // ‖Θ‖_F
  int points = 8;             // spectra per dimension: α = 3p/(points − 1), p = 0..points−1
  int64_t samples = 400000;   // Monte Carlo samples when k·d > 16
  uint64_t seed = 1;
  int threads = 1;
};

struct WsumStudyRow {
  int d = 0, k = 0;
  double alpha = 0, stable_rank = 0;
  double m_minus_i_op = 0;       // ‖M(Θ) − I‖_op
  double m_minus_i_fro_rel = 0;  // ‖M(Θ) − I‖_F / √d
  double standard_error_op = 0;  // ‖SE‖_op of the Monte Carlo estimate (0 when enumerated)
  bool enumerated = false;
  int64_t samples = 0;           // Monte Carlo samples used (0 when enumerated)
};

// "" or the one-line reason the study cannot run (a d outside k..256).
std::string wsum_study_problem(const WsumStudyOptions& options);

// Every row, in order (d, then α); `on_row` sees each as soon as it is computed.
std::vector<WsumStudyRow> wsum_study(const WsumStudyOptions& options,
                                     const std::function<void(const WsumStudyRow&)>& on_row = {});

}  // namespace mha
