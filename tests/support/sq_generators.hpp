// Generators for the SQ-hard family (src/hardness/sq_family.hpp). They are
// called inside a RapidCheck property (they draw with `*gen`), so every value
// is shrinkable and shown in a counterexample.
#pragma once

#include "hardness/sq_family.hpp"

#include <rapidcheck.h>

#include <string>

namespace mha::test {

// Where the q_i come from. `at_least_one` draws q_i = 1 + a/b, the regime in
// which the system is proved (m ≤ 2) or conjectured (m ≥ 3) nonsingular;
// `any_positive` starts at a/b ∈ (0, 16] and may produce a singular system.
enum class SqQKind { default_q, linear, at_least_one, any_positive };
std::string to_string(SqQKind kind);

// m + 1 distinct rationals of the given kind (drawn inside a property).
std::vector<Rational> draw_sq_q(SqQKind kind, int m);
// d ∈ [m + 1, max_d], m ∈ [1, max_m], p, q_out ≠ p, S ⊂ [d] \ {p} with |S| = m.
// q of a random kind among `kinds` (default: all but any_positive).
SqFamilyParams draw_sq_params(int max_d, int max_m, std::vector<SqQKind> kinds = {SqQKind::default_q, SqQKind::linear, SqQKind::at_least_one});

std::string describe(const SqFamilyParams& p);

}  // namespace mha::test
