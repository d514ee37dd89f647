// Polishing's matrix-free products (stages/polish/operator.hpp) against the
// dense Jacobian: J·v and Jᵀ·R from AttentionLinearization (double) equal
// Σ_n J_n v and Σ_n J_nᵀ r_n with J_n = attention_jacobian<Mpfr> at 256 bits,
// within the first-order rounding bound γ_n (1 + 4Λ) · majorant
// (tolerance::polish_operator_relative; proofs/attention_jacobian.md,
// "Matrix-free products"). Tests of the tester: J·v without the centring
// term (dA = A∘δL, the x̄ / ȳ term dropped), J·v with each v_i transposed, and
// Jᵀ·R with each head's block transposed are rejected.
#include "numeric/tolerance.hpp"
#include "generators.hpp"
#include "model/reference.hpp"
#include "numeric/multiprecision.hpp"
#include "numeric/precision.hpp"
#include "property.hpp"
#include "stages/polish/attention_jacobian.hpp"
#include "stages/polish/operator.hpp"

#include <functional>
#include <random>

using namespace mha;

namespace {

using JacobianTimes = std::function<MatD(const Layer&, const std::vector<MatD>&, const Eigen::VectorXd&)>;
using JacobianTransposeTimes = std::function<Eigen::VectorXd(const Layer&, const std::vector<MatD>&, const MatD&)>;

MatD jacobian_times(const Layer& layer, const std::vector<MatD>& xs, const Eigen::VectorXd& v) {
  return AttentionLinearization(layer, xs, 1).apply(v);
}

Eigen::VectorXd jacobian_transpose_times(const Layer& layer, const std::vector<MatD>& xs, const MatD& r) {
  return AttentionLinearization(layer, xs, 1).apply_transpose(r);
}

// Every head's d×d block of a parameter vector transposed.
Eigen::VectorXd transposed_blocks(const Eigen::VectorXd& v, int d) {
  Eigen::VectorXd out(v.size());
  for (Eigen::Index i = 0; i * d * d < v.size(); ++i)
    Eigen::Map<MatD>(out.data() + i * d * d, d, d) = Eigen::Map<const MatD>(v.data() + i * d * d, d, d).transpose();
  return out;
}

// Per sample and head: A, |V| ≤ |X||W|, Δ = |X||v_i||X|ᵀ, and Λ.
double logit_bound(const Layer& layer, const std::vector<MatD>& xs) {
  double lambda = 0;
  for (const auto& x : xs)
    for (const auto& h : layer.heads)
      lambda = std::max(lambda, (x.cwiseAbs() * h.theta.cwiseAbs() * x.cwiseAbs().transpose()).maxCoeff());
  return lambda;
}

auto products_agree(const JacobianTimes& times, const JacobianTransposeTimes& transpose_times) {
  return [times, transpose_times] {
    const test::LayerCase c = *test::gen_layer_case(3, 4, 2).as("layer");
    const InputKind kind = *rc::gen::element(InputKind::boolean, InputKind::gaussian).as("inputs");
    const int samples = *rc::gen::inRange(1, 4).as("samples");
    const uint64_t seed = *rc::gen::inRange<uint64_t>(0, 1u << 30).as("direction seed");
    const Layer layer = test::make_layer(c);
    const int k = c.shape.k, d = c.shape.d, m = c.shape.m;
    const int64_t dd = int64_t{d} * d;
    std::vector<MatD> xs;
    for (int n = 0; n < samples; ++n) xs.push_back(test::make_input(c, kind, n));
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal;
    const Eigen::VectorXd v = Eigen::VectorXd::NullaryExpr(m * dd, [&] { return normal(rng); });
    const MatD r = MatD::NullaryExpr(samples * k, d, [&] { return normal(rng); });

    const MatD fast_jv = times(layer, xs, v);
    const Eigen::VectorXd fast_jtr = transpose_times(layer, xs, r);
    RC_ASSERT(fast_jv.rows() == samples * k && fast_jv.cols() == d && fast_jtr.size() == m * dd);

    const unsigned bits = 256;
    ScopedPrecision precision(bits);
    const LayerT<Mpfr> lm = convert_layer<Mpfr>(layer);
    const Mat<Mpfr> vm = cast_matrix<Mpfr>(MatD(Eigen::Map<const MatD>(v.data(), m * dd, 1)));
    Mat<Mpfr> ref_jtr = Mat<Mpfr>::Zero(1, m * dd);
    const double lambda = logit_bound(layer, xs);
    const double jv_factor = tolerance::polish_operator_relative(3 * d + 2 * k + 8 + m, lambda) +
                             tolerance::reference_relative_error(bits, 4 * k * d * m * dd);
    const double jtr_factor = tolerance::polish_operator_relative(2 * d + 3 * k + 10 + samples, lambda) +
                              tolerance::reference_relative_error(bits, 4 * samples * k * d * k * d);
    MatD jtr_majorant = MatD::Zero(1, m * dd);
    for (int n = 0; n < samples; ++n) {
      const MatD& x = xs[n];
      const MatD xa = x.cwiseAbs();
      const Mat<Mpfr> jac = attention_jacobian<Mpfr>(lm, cast_matrix<Mpfr>(x));
      const Mat<Mpfr> ref_jv = jac * vm;  // (k·d) × 1, rows (a, c)
      const MatD rn = r.middleRows(n * k, k);
      const Mat<Mpfr> rm = cast_matrix<Mpfr>(MatD(Eigen::Map<const MatD>(rn.data(), 1, k * d)));
      ref_jtr += rm * jac;
      MatD jv_majorant = MatD::Zero(k, d);
      for (int i = 0; i < m; ++i) {
        const MatD a = attention<double>(layer.heads[i].theta, x);
        const MatD v_abs = xa * layer.heads[i].w.cwiseAbs();
        const MatD delta = xa * Eigen::Map<const MatD>(v.data() + i * dd, d, d).cwiseAbs() * xa.transpose();
        const MatD p = rn.cwiseAbs() * v_abs.transpose();  // P[a,l] = Σ_c |r_ac| |V|_lc
        MatD s(k, k);  // A_al (P_al + P̄_a), the Jᵀ·R majorant's weights
        for (int row = 0; row < k; ++row) {
          const double delta_mean = a.row(row).dot(delta.row(row)), p_mean = a.row(row).dot(p.row(row));
          for (int l = 0; l < k; ++l) {
            jv_majorant.row(row) += a(row, l) * (delta(row, l) + delta_mean) * v_abs.row(l);
            s(row, l) = a(row, l) * (p(row, l) + p_mean);
          }
        }
        const MatD block = xa.transpose() * s * xa;
        jtr_majorant.middleCols(i * dd, dd) += Eigen::Map<const MatD>(block.data(), 1, dd);
      }
      for (int row = 0; row < k; ++row)
        for (int col = 0; col < d; ++col) {
          const double bound = jv_factor * jv_majorant(row, col) * tolerance::bound_evaluation_factor(8 * k * d) + 1e-300;
          const double diff = std::abs(fast_jv(n * k + row, col) - ref_jv(row * d + col, 0).convert_to<double>());
          RC_ASSERT(diff <= bound);
        }
    }
    for (int64_t j = 0; j < m * dd; ++j) {
      const double bound = jtr_factor * jtr_majorant(0, j) * tolerance::bound_evaluation_factor(8 * samples * k * k) + 1e-300;
      RC_ASSERT(std::abs(fast_jtr(j) - ref_jtr(0, j).convert_to<double>()) <= bound);
    }
  };
}

// J·v with the centring term dropped: dA = A∘δL instead of A∘(δL − Σ_j A_j δL_j).
MatD uncentred_jacobian_times(const Layer& layer, const std::vector<MatD>& xs, const Eigen::VectorXd& v) {
  const int k = xs.front().rows(), d = layer.d();
  MatD out = MatD::Zero(static_cast<Eigen::Index>(xs.size()) * k, d);
  for (size_t n = 0; n < xs.size(); ++n)
    for (int i = 0; i < layer.m(); ++i) {
      const MatD a = attention<double>(layer.heads[i].theta, xs[n]);
      const MatD dl = xs[n] * Eigen::Map<const MatD>(v.data() + i * d * d, d, d) * xs[n].transpose();
      out.middleRows(n * k, k) += a.cwiseProduct(dl) * (xs[n] * layer.heads[i].w);
    }
  return out;
}

}  // namespace

TEST_CASE("polishing's matrix-free J·v and Jᵀ·R equal the MPFR Jacobian's within the rounding bound",
          "[property][polish]") {
  mha::test::property("k ≤ 3, d ≤ 4, m ≤ 2, 1–3 samples, all flavours", 60,
                      products_agree(jacobian_times, jacobian_transpose_times));
}

TEST_CASE("matrix-free product check rejects a dropped centring term and transposed blocks", "[property][polish]") {
  mha::test::property_rejects("J·v without the centring term", 40,
                              products_agree(uncentred_jacobian_times, jacobian_transpose_times));
  mha::test::property_rejects("J·v with each v_i transposed", 40,
                              products_agree(
                                  [](const Layer& l, const std::vector<MatD>& xs, const Eigen::VectorXd& v) {
                                    return jacobian_times(l, xs, transposed_blocks(v, l.d()));
                                  },
                                  jacobian_transpose_times));
  mha::test::property_rejects("Jᵀ·R with each head's block transposed", 40,
                              products_agree(jacobian_times, [](const Layer& l, const std::vector<MatD>& xs,
                                                                const MatD& r) {
                                return transposed_blocks(jacobian_transpose_times(l, xs, r), l.d());
                              }));
}
