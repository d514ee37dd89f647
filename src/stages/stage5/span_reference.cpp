#include "stages/stage5/span_reference.hpp"

#include "numeric/multiprecision.hpp"
#include "numeric/precision.hpp"
#include "numeric/tolerance.hpp"

#include <Eigen/Eigenvalues>

#include <chrono>
#include <limits>
#include <stdexcept>
#include <string>

namespace mha {

namespace {

using MatM = Eigen::Matrix<Mpfr, Eigen::Dynamic, Eigen::Dynamic>;
using VecM = Eigen::Matrix<Mpfr, Eigen::Dynamic, 1>;

// G = Σ_r w_r² a_r a_rᵀ, Mᵀc = Σ_r w_r² b_r a_r, ‖M‖_F² and ‖c‖² at the working
// precision. Slab normals of Boolean tokens are half zeros: only the nonzero
// pairs are accumulated (mpfr_fma on the raw values, no temporaries).
struct Gram {
  MatM g;
  VecM mtc;
  Mpfr frobenius2, c2;
};

Gram gram(const ConvexBody& body) {
  const int n = body.dim();
  const double radius = body.radius();
  Gram out{MatM::Zero(n, n), VecM::Zero(n), Mpfr(0), Mpfr(0)};
  const Mpfr phi_scale = Mpfr(n) * Mpfr(tolerance::kDoubleUnitRoundoff);
  std::vector<int> nonzero;
  std::vector<double> values;
  Mpfr a_norm2, w2, term, product;
  for (const Slab& s : body.slabs()) {
    nonzero.clear();
    values.clear();
    a_norm2 = 0;
    for (int c = 0; c < n; ++c)
      if (s.a[c] != 0.0) {
        nonzero.push_back(c);
        values.push_back(s.a[c]);
        a_norm2 += Mpfr(s.a[c]) * Mpfr(s.a[c]);
      }
    // The fast weight 1/max(η, φ, DBL_MIN), exactly (to the working precision).
    const Mpfr phi = phi_scale * (abs(Mpfr(s.b)) + sqrt(a_norm2) * Mpfr(radius));
    Mpfr scale = std::max({Mpfr(s.eta), phi, Mpfr(std::numeric_limits<double>::min())});
    w2 = 1 / (scale * scale);
    out.frobenius2 += w2 * a_norm2;
    out.c2 += w2 * Mpfr(s.b) * Mpfr(s.b);
    const Mpfr wb = w2 * Mpfr(s.b);
    for (size_t i = 0; i < nonzero.size(); ++i) {
      mpfr_fma(out.mtc(nonzero[i]).backend().data(), wb.backend().data(), Mpfr(values[i]).backend().data(),
               out.mtc(nonzero[i]).backend().data(), MPFR_RNDN);
      mpfr_mul_d(term.backend().data(), w2.backend().data(), values[i], MPFR_RNDN);
      for (size_t j = i; j < nonzero.size(); ++j) {
        mpfr_mul_d(product.backend().data(), term.backend().data(), values[j], MPFR_RNDN);
        out.g(nonzero[i], nonzero[j]) += product;  // (w² a_i) a_j
      }
    }
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < i; ++j) out.g(i, j) = out.g(j, i);
  return out;
}

}  // namespace

SpanReference span_reference(const ConvexBody& body, int free, unsigned bits) {
  const int n = body.dim();
  if (free < 0 || free > n)
    throw std::invalid_argument("span_reference: free must be in [0, n], got " + std::to_string(free));
  const auto start = std::chrono::steady_clock::now();
  ScopedPrecision precision(bits);
  const Gram g = gram(body);
  const Eigen::SelfAdjointEigenSolver<MatM> eig(g.g);  // ascending eigenvalues
  SpanReference r;
  r.bits = current_precision_bits();
  r.singular_values.resize(n);
  std::vector<Mpfr> s(n);
  for (int j = 0; j < n; ++j) {
    const Mpfr lambda = eig.eigenvalues()(j);
    s[j] = lambda > 0 ? Mpfr(sqrt(lambda)) : Mpfr(0);
    r.singular_values(j) = s[j].convert_to<double>();
  }
  const Mpfr s_max = n > 0 ? s[n - 1] : Mpfr(0);
  const Mpfr threshold = s_max * Mpfr(n) * Mpfr(std::numeric_limits<double>::epsilon());
  r.threshold = threshold.convert_to<double>();
  r.free_basis.resize(free, n);
  for (int i = 0; i < free; ++i)
    for (int c = 0; c < n; ++c) r.free_basis(i, c) = eig.eigenvectors()(c, i).convert_to<double>();
  VecM x0 = VecM::Zero(n);
  for (int j = 0; j < n; ++j) {
    if (s[j] > threshold) ++r.rank;
    if (j < free || !(s[j] > threshold)) continue;
    const auto v = eig.eigenvectors().col(j);
    const Mpfr coefficient = v.dot(g.mtc) / (s[j] * s[j]);
    x0 += coefficient * v;
  }
  // ‖M x0 − c‖² = ‖c‖² − 2 x0ᵀMᵀc + x0ᵀG x0.
  const Mpfr residual2 = g.c2 - 2 * x0.dot(g.mtc) + x0.dot(g.g * x0);
  r.x0.resize(n);
  for (int c = 0; c < n; ++c) r.x0(c) = x0(c).convert_to<double>();
  r.frobenius = Mpfr(sqrt(g.frobenius2)).convert_to<double>();
  r.c_norm = Mpfr(sqrt(g.c2)).convert_to<double>();
  r.weighted_residual = residual2 > 0 ? Mpfr(sqrt(residual2)).convert_to<double>() : 0.0;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace mha
