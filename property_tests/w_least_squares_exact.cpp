// Least squares for the W_i (MATH.md §3, stage 6; proofs/w_least_squares.md):
// when the candidate Θs are the true ones, the labels are exactly D·W_stack for
// the shared design D, so the normal equations return W exactly whenever DᵀD is
// nonsingular — and the reference path says "singular" only when it is.
// Checked in exact rationals: with Θ_i = ln(q_i)·B_i (q_i rational, B_i integer)
// every logit on Boolean inputs is an integer multiple of ln q_i, so every
// attention weight q_i^{e_j} / Σ_l q_i^{e_l} is rational. Test of the tester:
// a solver that returns every W_i transposed (a row/column-major mix-up when
// unstacking) is rejected.
#include "numeric/multiprecision.hpp"
#include "property.hpp"
#include "stages/stage6/w_least_squares.hpp"

#include <functional>
#include <optional>

using namespace mha;

namespace {
Rational power(const Rational& q, int e) {
  Rational r(1);
  for (int i = 0; i < std::abs(e); ++i) r *= q;
  return e >= 0 ? r : Rational(1) / r;
}

// Exact rational attention of Θ = ln(q)·B on ±1 tokens x.
Mat<Rational> rational_attention(const Rational& q, const Mat<int>& b, const Mat<int>& x) {
  const Mat<int> e = x * b * x.transpose();
  Mat<Rational> a(x.rows(), x.rows());
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    Rational total(0);
    for (Eigen::Index j = 0; j < x.rows(); ++j) total += (a(r, j) = power(q, e(r, j)));
    for (Eigen::Index j = 0; j < x.rows(); ++j) a(r, j) /= total;
  }
  return a;
}

// Bareiss fraction-free determinant: an elimination independent of the solver's.
Rational determinant(Mat<Rational> a) {
  const Eigen::Index n = a.rows();
  Rational previous(1), sign(1);
  for (Eigen::Index c = 0; c < n; ++c) {
    Eigen::Index p = c;
    while (p < n && a(p, c) == 0) ++p;
    if (p == n) return Rational(0);
    if (p != c) {
      a.row(p).swap(a.row(c));
      sign = -sign;
    }
    for (Eigen::Index r = c + 1; r < n; ++r)
      for (Eigen::Index j = c + 1; j < n; ++j) a(r, j) = (a(r, j) * a(c, c) - a(r, c) * a(c, j)) / previous;
    previous = a(c, c);
  }
  return sign * a(n - 1, n - 1);
}

using ExactWSolver = std::function<std::optional<Mat<Rational>>(const Mat<Rational>&, const Mat<Rational>&)>;

const ExactWSolver normal_equations = [](const Mat<Rational>& design, const Mat<Rational>& labels) {
  return solve_w_stack_reference<Rational>(design, labels);
};

// Mistake: each head's d×d block of the solution returned transposed (W_i read row-major as column-major).
std::optional<Mat<Rational>> solve_with_blocks_transposed(const Mat<Rational>& design, const Mat<Rational>& labels) {
  std::optional<Mat<Rational>> w = solve_w_stack_reference<Rational>(design, labels);
  const Eigen::Index d = labels.cols();
  if (w)
    for (Eigen::Index i = 0; i < w->rows(); i += d) {
      const Mat<Rational> block = w->middleRows(i, d);
      w->middleRows(i, d) = block.transpose();
    }
  return w;
}

auto recovers_true_w(const ExactWSolver& solve) {
  return [solve] {
    const int d = *rc::gen::inRange(2, 6).as("d");
    const int k = *rc::gen::inRange(2, 4).as("k");
    const int m = *rc::gen::inRange(1, 4).as("m");
    const int samples = *rc::gen::inRange(m * d, 4 * m * d + 1).as("samples");
    std::vector<Rational> q;
    std::vector<Mat<int>> b;
    std::vector<Mat<Rational>> w;
    for (int i = 0; i < m; ++i) {
      const int num = *rc::gen::inRange(1, 8), den = *rc::gen::inRange(1, 8);
      q.push_back(Rational(num) / Rational(den));
      Mat<int> bi(d, d);
      for (int e = 0; e < d * d; ++e) bi.data()[e] = *rc::gen::inRange(-2, 3);
      b.push_back(bi);
      Mat<Rational> wi(d, d);
      for (int e = 0; e < d * d; ++e) wi.data()[e] = Rational(*rc::gen::inRange(-9, 10)) / Rational(*rc::gen::inRange(1, 5));
      w.push_back(wi);
    }
    Mat<Rational> design(samples * k, m * d), w_stack(m * d, d);
    for (int i = 0; i < m; ++i) w_stack.middleRows(i * d, d) = w[i];
    for (int n = 0; n < samples; ++n) {
      Mat<int> x(k, d);
      for (int e = 0; e < k * d; ++e) x.data()[e] = *rc::gen::element(-1, 1);
      std::vector<Mat<Rational>> attentions;
      for (int i = 0; i < m; ++i) attentions.push_back(rational_attention(q[i], b[i], x));
      design.middleRows(n * k, k) = w_design_rows<Rational>(attentions, x.cast<Rational>());
    }
    const Mat<Rational> labels = design * w_stack;  // the true layer's outputs
    const std::optional<Mat<Rational>> solved = solve(design, labels);
    const bool singular = determinant(Mat<Rational>(design.transpose() * design)) == 0;
    RC_CLASSIFY(singular, "D^T D singular (coinciding heads or degenerate tokens)");
    RC_ASSERT(solved.has_value() == !singular);
    if (solved) RC_ASSERT(*solved == w_stack);
  };
}
}  // namespace

TEST_CASE("least squares for W recovers the true W exactly when the candidate Θs are the true ones", "[property][stage6]") {
  mha::test::property("rationals, d ≤ 5, k ≤ 3, m ≤ 3", 60, recovers_true_w(normal_equations));
}

TEST_CASE("test of the tester: exact least squares for W rejects transposed W_i", "[property][stage6][tester]") {
  mha::test::property_rejects("every W_i returned transposed", 20, recovers_true_w(solve_with_blocks_transposed));
}
