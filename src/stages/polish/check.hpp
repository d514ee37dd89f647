// Polishing on two paths (proofs/attention_jacobian.md, "The objective in MPFR"):
// the relative training error E = Σ‖F(X) − Y‖²/Σ‖Y‖² that polishing minimises,
// fast (double) against MPFR at a layer on the same samples, within a bound
// derived from forward_error_bound, escalated 128 → 256 bits; the reference
// gradient norm (first-order optimality) is reported beside it.
#pragma once

#include "data/oracle.hpp"
#include "numeric/comparison.hpp"

#include <functional>

namespace mha {

// Σ‖F(X) − Y‖² of one sample on the fast path; +inf when it cannot answer.
using SquaredErrorFast = std::function<double(const Layer&, const MatD& x, const MatD& y)>;
double squared_error_fast(const Layer& layer, const MatD& x, const MatD& y);

// At `layer`, on samples first .. first + samples − 1 of `source`; the gradient
// on the first `gradient_samples` of them (the MPFR Jacobian is costly).
Comparison check_polish(const Layer& layer, const SampleSource& source, uint64_t first, int64_t samples,
                        int64_t gradient_samples, const SquaredErrorFast& fast = squared_error_fast);

}  // namespace mha
