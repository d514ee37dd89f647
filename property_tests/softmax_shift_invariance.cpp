// Claim (MATH.md §1): row softmax is invariant to adding a constant to a row,
//   softmax(ℓ + c·1) = softmax(ℓ),
// which is why every constraint in the learner is a logit difference.
// Statement, proof and the tolerance derivation: proofs/softmax_shift_invariance.md.
// Test of the tester: a double softmax without the row-max subtraction
// (exp(ℓ)/Σexp(ℓ), 0/0 or ∞/∞ for logits beyond ±709) and an MPFR softmax
// that clips the logits to ±700 instead (finite, not shift-invariant) are rejected.
#include "numeric/tolerance.hpp"
#include "numeric/multiprecision.hpp"
#include "numeric/precision.hpp"
#include "numeric/softmax.hpp"
#include "property.hpp"

#include <algorithm>
#include <cmath>

using namespace mha;

namespace {
// ℓ1 tolerance between the two computed softmaxes at unit roundoff u:
// forming ℓ_j + c perturbs each shifted logit by at most δ = u(max|ℓ| + |c|),
// which moves the exact softmax by at most e^{2δ} − 1 in ℓ1; each evaluation
// adds at most ρ (subtraction, exp to 2u, sum γ_k, division), as in
// proofs/forward_error_bound.md.
double shift_tolerance(double max_abs_logit, double shift, double span, int k, double u) {
  const double delta = u * (max_abs_logit + std::abs(shift));
  const double gk = k * u / (1 - k * u);
  const double eta = std::expm1(u * (span + 4 * delta)) * (1 + 2 * u) + 2 * u;
  const double rho = (1 + eta) * (1 + u) / (1 - eta - gk * (1 + eta)) - 1;
  return std::expm1(2 * delta) + 2 * rho;
}

// Logits in ±1e6 with up to 6 decimals, k = 1..8; near ties come for free.
std::vector<double> draw_logits() {
  const int k = *rc::gen::inRange(1, 9).as("k");
  std::vector<double> l(k);
  for (int j = 0; j < k; ++j) {
    const int mantissa = *rc::gen::inRange(-1000000, 1000001);
    const int decimals = *rc::gen::inRange(0, 7);
    l[j] = mantissa * std::pow(10.0, -decimals);
  }
  return l;
}

// Mistake: the row maximum not subtracted, exp(ℓ)/Σ exp(ℓ).
template <class T>
Mat<T> softmax_without_max(Mat<T> logits) {
  for (Eigen::Index r = 0; r < logits.rows(); ++r) {
    for (Eigen::Index j = 0; j < logits.cols(); ++j) logits(r, j) = exp_of(T(logits(r, j)));
    T total(0);
    for (Eigen::Index j = 0; j < logits.cols(); ++j) total += logits(r, j);
    for (Eigen::Index j = 0; j < logits.cols(); ++j) logits(r, j) /= total;
  }
  return logits;
}

// Mistake: logits clipped to ±700 against overflow in place of the row-max subtraction.
template <class T>
Mat<T> softmax_clipped(Mat<T> logits) {
  for (Eigen::Index i = 0; i < logits.size(); ++i)
    logits.data()[i] = std::clamp<T>(logits.data()[i], T(-700), T(700));
  return softmax_without_max<T>(std::move(logits));
}

template <class T, class Softmax>
void check_shift(const Softmax& softmax, const std::vector<double>& logits, double shift, double u) {
  const int k = static_cast<int>(logits.size());
  Mat<T> a(1, k), b(1, k);
  double max_abs = 0, lo = logits[0], hi = logits[0];
  for (int j = 0; j < k; ++j) {
    a(0, j) = T(logits[j]);
    b(0, j) = T(logits[j]) + T(shift);
    max_abs = std::max(max_abs, std::abs(logits[j]));
    lo = std::min(lo, logits[j]);
    hi = std::max(hi, logits[j]);
  }
  const Mat<T> sa = softmax(a), sb = softmax(b);
  T l1(0);
  for (int j = 0; j < k; ++j) l1 += abs(T(sa(0, j) - sb(0, j)));
  const double l1d = ScalarTraits<T>::to_double(l1);
  RC_ASSERT(std::isfinite(l1d));
  // Rounding l1 itself to double, summing k terms and evaluating the tolerance
  // (2(k + 1) roundings): the factor 1 + γ_{2k+2} (Higham Lemma 3.3).
  const double tol = shift_tolerance(max_abs, shift, hi - lo, k, u) * tolerance::bound_evaluation_factor(2 * k + 1);
  RC_ASSERT(l1d <= tol);
}

template <class Softmax>
auto shift_invariant_double(Softmax softmax) {
  return [softmax] {
    const auto logits = draw_logits();
    const double shift = *rc::gen::inRange(-1000000, 1000001).as("shift");
    check_shift<double>(softmax, logits, shift, 0x1p-53);
  };
}

template <class Softmax>
auto shift_invariant_mpfr(Softmax softmax) {
  return [softmax] {
    const auto logits = draw_logits();
    const double shift = *rc::gen::inRange(-1000000, 1000001).as("shift") * 0.37;
    ScopedPrecision precision(200);
    check_shift<Mpfr>(softmax, logits, shift, ScalarTraits<Mpfr>::to_double(ScalarTraits<Mpfr>::unit_roundoff()));
  };
}
}  // namespace

TEST_CASE("softmax is invariant to adding a constant to a row", "[property][softmax]") {
  mha::test::property("double: softmax(l + c) = softmax(l) within the derived bound", 400,
                      shift_invariant_double(softmax_rows<double>));
  mha::test::property("MPFR 200 bits: softmax(l + c) = softmax(l) within the derived bound", 200,
                      shift_invariant_mpfr(softmax_rows<Mpfr>));
}

TEST_CASE("test of the tester: shift invariance rejects a softmax without the max subtraction or with clipped logits",
          "[property][softmax][tester]") {
  mha::test::property_rejects("double softmax without the row-max subtraction", 10,
                              shift_invariant_double(softmax_without_max<double>));
  mha::test::property_rejects("MPFR softmax with logits clipped to +-700", 30,
                              shift_invariant_mpfr(softmax_clipped<Mpfr>));
}
