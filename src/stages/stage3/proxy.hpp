// The paper variant's stage-3 proxy (MATH.md §3.3) is "the minimum norm point in
// this convex body" — the body of stage 2. Round 0's slabs have heuristic widths (the
// crude Ŵ makes the certification lemma's vacuous; MATH.md §3.2), and such slabs can
// contradict each other: K is then empty and has no minimum-norm point. How far from
// consistent they are is one number: the smallest t for which the slabs
// |⟨a_r, θ⟩ − b_r| ≤ t·η_r meet inside the box |θ_c| ≤ R (a linear program in (θ, t),
// CLP), which the learner reports when K is empty; `widened` gives that body.
#pragma once

#include "geometry/convex_body.hpp"

#include <string>

namespace mha {

// t* by CLP: min t over (θ, t) with ⟨a_r, θ⟩ + η_r t ≥ b_r, ⟨a_r, θ⟩ − η_r t ≤ b_r,
// |θ_c| ≤ R, t ≥ 0. NaN (with `message`) when CLP finds no optimum or a slab has η_r = 0.
double least_consistent_factor(const ConvexBody& body, std::string& message);

// The slabs of `body` with every η_r multiplied by `factor`.
ConvexBody widened(const ConvexBody& body, double factor);

}  // namespace mha
