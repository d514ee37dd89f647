#include "model/import_attention.hpp"

#include <cmath>
#include <utility>

namespace mha {

// Derivation. PyTorch's nn.MultiheadAttention (no biases, no masks, dropout 0)
// maps a sequence X in R^{k×d} (rows are tokens, as in MATH.md) to
//
//   Q = X W_Qᵀ,  K = X W_Kᵀ,  V = X W_Vᵀ                       (k×d each)
//   head h (h = 0..H-1) takes the columns B_h = [h d_h, (h+1) d_h) of Q, K, V:
//     Q_h = X W_Q,hᵀ,  K_h = X W_K,hᵀ,  V_h = X W_V,hᵀ,
//   where W_Q,h = W_Q[B_h, :] is the d_h×d row block (same for K and V);
//     O_h = softmax_rows(Q_h K_hᵀ / sqrt(d_h)) V_h               (k×d_h)
//   out = [O_0 | O_1 | ... | O_{H-1}] W_Oᵀ = Σ_h O_h (W_O[:, B_h])ᵀ.
//
// The logits of head h are
//   Q_h K_hᵀ / sqrt(d_h) = X (W_Q,hᵀ W_K,h / sqrt(d_h)) Xᵀ,
// so Θ_h = W_Q,hᵀ W_K,h / sqrt(d_h) (d×d, rank <= d_h). Its contribution is
//   A_h V_h (W_O[:, B_h])ᵀ = A_h X (W_V,hᵀ (W_O[:, B_h])ᵀ),
// so W_h = W_V,hᵀ (W_O[:, B_h])ᵀ (d×d_h times d_h×d = d×d). Summing over h
// gives out = Σ_h softmax_rows(X Θ_h Xᵀ) X W_h = F(X).

namespace {

std::string shape_of(const MatD& a) { return std::to_string(a.rows()) + "x" + std::to_string(a.cols()); }

std::string non_finite(const MatD& a, const char* name) {
  for (Eigen::Index r = 0; r < a.rows(); ++r)
    for (Eigen::Index c = 0; c < a.cols(); ++c)
      if (!std::isfinite(a(r, c)))
        return std::string(name) + " has a non-finite entry (" + (std::isnan(a(r, c)) ? "NaN" : "Inf") + ") at (" +
               std::to_string(r) + ", " + std::to_string(c) + ")";
  return "";
}

ImportResult failure(const std::string& what) {
  ImportResult r;
  r.ok = false;
  r.error = "cannot import attention weights: " + what;
  return r;
}

}  // namespace

ImportResult import_attention(const MatD& wq, const MatD& wk, const MatD& wv, const MatD& wo, int heads) {
  if (heads < 1) return failure("the number of heads must be at least 1, got " + std::to_string(heads));
  if (wq.rows() < 1 || wq.rows() != wq.cols())
    return failure("W_Q must be a non-empty square (d x d) matrix, got " + shape_of(wq));
  const Eigen::Index d = wq.rows();
  const std::pair<const MatD*, const char*> all[] = {{&wq, "W_Q"}, {&wk, "W_K"}, {&wv, "W_V"}, {&wo, "W_O"}};
  for (const auto& [m, name] : all)
    if (m->rows() != d || m->cols() != d)
      return failure(std::string(name) + " has shape " + shape_of(*m) + ", expected " + shape_of(wq) + " like W_Q");
  if (d % heads != 0)
    return failure("d = " + std::to_string(d) + " is not divisible by the number of heads " + std::to_string(heads));
  for (const auto& [m, name] : all)
    if (auto e = non_finite(*m, name); !e.empty()) return failure(e);

  const Eigen::Index dh = d / heads;
  const double sqrt_dh = std::sqrt(static_cast<double>(dh));
  ImportResult result;
  for (int h = 0; h < heads; ++h) {
    const Eigen::Index b = h * dh;
    Head head;
    head.theta = (wq.middleRows(b, dh).transpose() * wk.middleRows(b, dh)) / sqrt_dh;
    head.w = wv.middleRows(b, dh).transpose() * wo.middleCols(b, dh).transpose();
    const std::string where = "head " + std::to_string(h);
    if (auto e = non_finite(head.theta, (where + " theta").c_str()); !e.empty())
      return failure(e + " (the weights are too large: the product overflows)");
    if (auto e = non_finite(head.w, (where + " W").c_str()); !e.empty())
      return failure(e + " (the weights are too large: the product overflows)");
    result.layer.heads.push_back(std::move(head));
  }
  result.ok = true;
  return result;
}

}  // namespace mha
