#include "model/forward_check.hpp"

#include "model/forward_error.hpp"
#include "model/forward_fast.hpp"
#include "model/forward_reference.hpp"
#include "numeric/tolerance.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace mha {

std::vector<double> forward_fast_batch(const Layer& layer, const InputBatch& inputs) {
  const FastForward ff(layer);
  const int64_t per_sample = int64_t{inputs.k} * inputs.d;
  std::vector<double> y(static_cast<size_t>(inputs.count * per_sample));
  std::vector<double> scratch;
  for (int64_t i = 0; i < inputs.count; ++i) {
    double* out = y.data() + i * per_sample;
    const bool answered = inputs.kind == InputKind::boolean
                              ? ff.forward_boolean(inputs.sample_bits(i), inputs.k, out, scratch)
                              : ff.forward_dense(inputs.sample_values(i), inputs.k, out, scratch);
    if (!answered) std::fill(out, out + per_sample, std::numeric_limits<double>::quiet_NaN());
  }
  return y;
}

Comparison check_forward(const Layer& layer, const InputBatch& inputs, const ForwardFast& fast) {
  const std::vector<double> fast_y = fast(layer, inputs);
  const int64_t per_sample = int64_t{inputs.k} * inputs.d;
  return escalate([&](unsigned bits) {
    Comparison c;
    c.stage = "forward";
    c.quantity = "|F_fast − F_ref| per entry";
    for (int64_t i = 0; i < inputs.count; ++i) {
      const MatD x = inputs.sample(i);
      const MatD ref = forward_mpfr(layer, x, bits);
      double z_scale = 0;  // Σ_i max |X W_i|: the reference's own error is 2^{40−p} of it
      for (const auto& h : layer.heads) z_scale += (x * h.w).cwiseAbs().maxCoeff();
      const MatD bound = (forward_error_bound(layer, x) + ref.cwiseAbs() * tolerance::kDoubleUnitRoundoff)
                             .array() + std::ldexp(z_scale, 40 - static_cast<int>(bits));
      const double* f = fast_y.data() + i * per_sample;
      for (Eigen::Index e = 0; e < ref.size(); ++e) {
        // MatD is row-major like the fast output (token, coordinate).
        c.record(std::abs(f[e] - ref.data()[e]), bound.data()[e]);
      }
    }
    c.detail = std::to_string(inputs.count) + " samples";
    return c;
  });
}

}  // namespace mha
