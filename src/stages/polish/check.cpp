#include "stages/polish/check.hpp"

#include "numeric/tolerance.hpp"
#include "stages/polish/reference.hpp"
#include "util/format.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mha {

double accepted_step_band(double start_bound, double next_bound) {
  return (start_bound + next_bound) * tolerance::bound_evaluation_factor(1);  // one addition
}

int64_t polish_check_samples(int d, int k, int m) {
  const int64_t rank = (2 * int64_t{m} * d + k - 1) / k;
  return std::max<int64_t>(32, rank);
}

namespace {

// The row: the fast objective at the start (and at the accepted step) against
// MPFR at the same layer, with the design route's bound (what `evaluate`
// computes). `refs` receives the reference values for the step's decision.
Comparison objective_row(const PolishIteration& it, unsigned bits, ObjectiveReference refs[2]) {
  Comparison c;
  c.stage = "polish";
  c.quantity = "|E_fast − E_ref| at the start and the accepted step, E = Σ‖F(X) − Y‖²/Σ‖Y‖²";
  refs[0] = objective_reference(it.start, it.xs, it.ys, bits, design_route_bound);
  c.record(std::abs(it.objective - refs[0].objective), refs[0].bound);
  c.detail = format("E = %.6e (fast) vs %.6e (reference) on %zu samples", it.objective, refs[0].objective,
                    it.xs.size());
  if (!it.accepted) return c;
  refs[1] = objective_reference(it.next, it.xs, it.ys, bits, design_route_bound);
  c.record(std::abs(it.next_objective - refs[1].objective), refs[1].bound);
  c.detail += format("; after the step %.6e (fast) vs %.6e (reference)", it.next_objective, refs[1].objective);
  return c;
}

ComparisonPart gradient_part(const PolishIteration& it, unsigned bits) {
  ComparisonPart part;
  part.name = "gradient";
  part.quantity = "‖ĝ − g‖₂, g = Jᵀ P⊥ r (Kaufman) at (Θ, Ŵ)";
  const GradientReference g = gradient_reference(it.start, it.xs, it.ys, it.gradient, it.dense, bits);
  const char* model = it.dense ? "dense" : "matrix-free";
  if (!g.compared) {
    part.detail = "the reference design is rank-deficient";
    return part;
  }
  if (!std::isfinite(g.bound)) {
    part.record_undecided();
    part.detail = format("no finite bound: σ_min(D) ≥ %.3g is not above the fast design's error (%s model); "
                         "‖ĝ − g‖ = %.3g, ‖g‖ = %.3g", g.sigma_min, model, g.difference, g.norm);
    return part;
  }
  part.record(g.difference, g.bound);
  part.detail = format("‖ĝ − g‖ = %.3g within %.3g, ‖g‖ = %.3g (%s model; σ_min(D) ≥ %.3g, ‖Q̂Q̂ᵀ − P_D‖ ≤ %.3g)",
                       g.difference, g.bound, g.norm, model, g.sigma_min, g.projection);
  return part;
}

// The fast decision E(next) < E(start) against the reference values: the fast
// objectives are within their bounds, so the decision can differ only when
// E_ref(next) − E_ref(start) lies beyond the two bounds' sum.
ComparisonPart step_part(const PolishIteration& it, const ObjectiveReference refs[2]) {
  ComparisonPart part;
  part.name = "accepted step";
  part.quantity = "the step's decision E(next) < E(start)";
  if (!it.accepted) {
    part.detail = "no damped step lowered the objective: nothing to re-decide";
    return part;
  }
  const double band = accepted_step_band(refs[0].bound, refs[1].bound);
  switch (side_of(refs[1].objective, refs[0].objective, band)) {
    case BandSide::below: part.record_decision(true); break;
    case BandSide::above: part.record_decision(false); break;
    case BandSide::undecided: part.record_undecided(); break;
  }
  part.detail = format("E_ref: %.6e → %.6e (band %.3g)", refs[0].objective, refs[1].objective, band);
  return part;
}

}  // namespace

Comparison check_polish_iteration(const PolishIteration& it) {
  return escalate([&](unsigned bits) {
    if (it.objective == std::numeric_limits<double>::infinity() || it.xs.empty()) {
      Comparison c;
      c.stage = "polish";
      c.quantity = "|E_fast − E_ref|, E = Σ‖F(X) − Y‖²/Σ‖Y‖²";
      c.detail = it.xs.empty() ? "no samples" : "the fast design is rank-deficient: no iteration to compare";
      return c;
    }
    ObjectiveReference refs[2];
    Comparison c = objective_row(it, bits, refs);
    ComparisonPart gradient = gradient_part(it, bits), step = step_part(it, refs);
    gradient.precision = step.precision = bits;
    add_part(c, gradient);
    add_part(c, step);
    return c;
  });
}

Comparison check_polish(const Layer& layer, const SampleSource& source, uint64_t first, int64_t samples,
                        const PolishIterationFast& fast) {
  const int64_t n = samples > 0 ? samples : polish_check_samples(source.d(), source.k(), layer.m());
  const LabelledBatch batch = source.draw(first, n, 1);
  PolishOptions options;
  options.threads = 1;
  return check_polish_iteration(fast(batch, layer, options));
}

}  // namespace mha
