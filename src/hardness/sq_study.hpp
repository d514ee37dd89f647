// Conditioning study of the SQ-hard family (docs/hardness.md): how the choice
// of q_0..q_m drives max|w_i|, Σ|w_i| (which scale every floating-point error
// of the layer), the smallest attention weight and the logit scale.
#pragma once

#include "hardness/sq_family.hpp"

#include <string>
#include <vector>

namespace mha {

// linear:    q_i = i + 1                         (MATH.md's example)
// geometric: q_i = 2^i
// chebyshev: sq_chebyshev_q (Chebyshev nodes in ln q on [0, ln(m+1)], step 1/16)
// optimized: q_0 = 1, q_m = m + 1 fixed, interior nodes minimise Σ|w_i| (double
//            Nelder–Mead from three deterministic starts), then rounded to the
//            nearest multiple of 1/64 and solved exactly. sq_default_q is a
//            frozen copy of these rows for m ≤ 8.
enum class QScheme { linear, geometric, chebyshev, optimized };
const char* to_string(QScheme scheme);
bool parse_q_scheme(const std::string& name, QScheme& out);
std::vector<Rational> sq_q_scheme(QScheme scheme, int m);

struct SqStudyRow {
  QScheme scheme = QScheme::linear;
  int m = 0;
  bool ok = false;
  std::string error;                 // e.g. a singular system
  std::vector<Rational> q, w;
  double max_abs_w = 0, sum_abs_w = 0;
  double min_attention = 0;          // min over heads i and s = 0..m of min(σ_i(s), 1 − σ_i(s))
  double max_theta_norm = 0;         // max_i ‖Θ_i‖_F = max_i |ln q_i|·√m / 2
  // Fast (double) forward pass of the exported instance at dimension d on
  // `samples` Boolean inputs: largest |F_fast − F_S| and largest derived bound.
  double forward_max_diff = 0, forward_max_bound = 0;
};

// Conditioning numbers of one choice of q (with S, p, q_out defaults at dimension d).
SqStudyRow sq_study_row(QScheme scheme, const std::vector<Rational>& q, int d, int64_t samples, uint64_t seed, int threads);
// Every scheme for m = 1..max_m.
std::vector<SqStudyRow> sq_conditioning_study(int max_m, int d, int64_t samples, uint64_t seed, int threads);

}  // namespace mha
