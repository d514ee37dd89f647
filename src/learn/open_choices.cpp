#include "learn/open_choices.hpp"

namespace mha {

// One entry per row of MATH.md §3.9's open-choices table; a row added there is added here.
std::vector<std::pair<std::string, std::string>> paper_open_choices() {
  return {
      {"open 01: all, the bound R on the heads", "R = 20, never grown (--radius)"},
      {"open 02: stage 1, samples", "2·10⁵ (--stage1-samples)"},
      {"open 03: stage 2, budget and slabs", "4·10⁵ samples, 3·d² slabs"},
      {"open 04: stage 2, tau", "the quantile of a 2·10⁴-sample pilot's residuals that fills the target from half the budget"},
      {"open 05: stage 2, slab widths", "the lemma's with σ_min = 10³ and no W error, marked heuristic"},
      {"open 06: stage 3, proxy when K is empty", "the least-squares centre x0; the least common widening that makes the slabs meet is reported"},
      {"open 07: stage 3, Lemma 3.3.1's accuracy", "10⁻² in ℓ1: M = ln(2(k−1)/10⁻²)"},
      {"open 08: stage 3, the proxy's threshold", "the largest margins of the whole budget, at least M: the shortest prefix with 16·d rows whose tokens have rank d, from a pool of 256·d, growing by 4·d"},
      {"open 09: stage 3, budget", "2·10⁷ samples, examined whole"},
      {"open 10: stage 3, outlier events", "residual > 5 × the median dropped, the fit repeated"},
      {"open 11: stage 4, tau", "max(10⁻³, 2·w_error·√d/‖Ŵ‖_F), over the whole budget"},
      {"open 12: stage 4, assumed W error and σ_min(C)", "w_error = 3 × stage 3's standard error; σ_min = max(0.05, (√d − √(km))/2)"},
      {"open 13: stage 4, budget", "2·10⁶ samples, every certified row kept"},
      {"open 14: stage 5, which membership queries", "cutting planes through K's separation oracle along m Gaussian directions (seed 1)"},
      {"open 15: stage 5, the oracle's answer", "at most max(16, n/8) slabs a query, most violated first, violations beyond 2⁻⁴⁰(‖a‖‖θ‖ + |b| + η)"},
      {"open 16: stage 5, when to stop querying", "when the oracle answers none; at most N + 10 queries an optimisation, else no span"},
      {"open 17: stage 5, the point of K", "K's minimum-norm point"},
      {"open 18: stage 6, ε of the net", "as fine as 2·10⁴ tuples afford (--net-tuples): cell centres of [−R, R]^m meeting the ball"},
      {"open 19: stage 6, samples", "max(64, 8·m·d/k) for W's least squares and as many for validation"},
  };
}

}  // namespace mha
