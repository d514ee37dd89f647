// The iterative least-squares centre (geometry/iterative_centre.hpp): structured
// products, agreement with the MPFR reference through stage 5's check (the
// property in property_tests/span_fast_vs_reference.cpp runs it on random bodies),
// the same bytes on any number of threads and processes, its preconditioner against the
// dense matrix it inverts, and what `automatic` takes.
#include "centre_bodies.hpp"
#include "thread_ranks.hpp"

#include "geometry/iterative_centre.hpp"
#include "geometry/slab_products.hpp"
#include "stages/stage5/check.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace mha;

namespace {

bool identical_bytes(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<size_t>(a.size())) == 0;
}

bool identical_centres(const ConvexBody::Centre& a, const ConvexBody::Centre& b) {
  return identical_bytes(a.x0, b.x0) && identical_bytes(a.free_basis, b.free_basis) &&
         identical_bytes(a.singular_values, b.singular_values) && a.free_basis_residual == b.free_basis_residual &&
         a.weighted_residual == b.weighted_residual && a.method == b.method;
}

}  // namespace

TEST_CASE("the slab products by structure equal the dense products", "[geometry][centre]") {
  const test::TokenHullBody b = test::token_hull_body(6, 2, 300, 0.05, 1e-3, 3);
  const ConvexBody& body = b.body;
  REQUIRE(body.rank_one_normals());
  const int n = body.dim();
  Eigen::MatrixXd m(body.size(), n);
  Eigen::VectorXd w(body.size()), c(body.size());
  for (size_t r = 0; r < body.size(); ++r) {
    const Slab& s = body.slabs()[r];
    m.row(r) = Eigen::Map<const Eigen::RowVectorXd>(s.a.data(), n);
    w(r) = 1.0 / s.eta;
    c(r) = w(r) * s.b;
  }
  const SlabProducts ops(body.normal_factor_u(), body.normal_factor_v(), w, c, 1, {});
  const Eigen::MatrixXd x = Eigen::MatrixXd::Random(n, 3);
  const Eigen::MatrixXd weighted = w.asDiagonal() * m;
  const Eigen::MatrixXd dense = weighted.transpose() * (weighted * x);
  // Two double evaluations of the same products: entries of size up to ‖M‖_F²‖x‖, a few
  // thousand roundings (not a derived bound: the property test checks the centre itself).
  CHECK((ops.gram_times(x) - dense).norm() <= 1e-12 * weighted.squaredNorm() * x.norm());
  CHECK((ops.transpose_times_target() - weighted.transpose() * c).norm() <= 1e-12 * weighted.norm() * c.norm());
  CHECK(std::abs(ops.residual_squared(x.col(0)) - (weighted * x.col(0) - c).squaredNorm()) <=
        1e-12 * (weighted * x.col(0) - c).squaredNorm());
}

TEST_CASE("the heavy-row preconditioner applies the inverse of s_rest·G + M_hᵀM_h (Woodbury against the dense matrix)",
          "[geometry][centre]") {
  const int d = 5, n = d * d, rows = 60;
  const Eigen::Index heavy = 12;
  std::mt19937_64 rng(17);
  std::bernoulli_distribution coin;
  std::uniform_real_distribution<double> exponent(0.0, 2.0);
  Eigen::MatrixXd u(rows, d), v(rows, d);
  Eigen::VectorXd w(rows);
  for (int r = 0; r < rows; ++r) {
    for (int i = 0; i < d; ++i) {
      u(r, i) = coin(rng) ? 1.0 : -1.0;
      v(r, i) = (coin(rng) ? 1.0 : -1.0) - u(r, i);
    }
    w(r) = std::pow(10.0, exponent(rng));  // weights over two decades, as 1/η spreads
  }
  const centre_detail::HeavyRowPreconditioner pre(u, v, w, heavy, 2);
  REQUIRE(pre.heavy() == heavy);
  // P formed densely: (s_rest·G) as the inverse of T_r, plus the heaviest rows' w²·a aᵀ.
  std::vector<int> order(rows);
  for (int r = 0; r < rows; ++r) order[static_cast<size_t>(r)] = r;
  std::sort(order.begin(), order.end(), [&](int a, int b) { return w(a) > w(b); });
  Eigen::MatrixXd p = centre_detail::population_preconditioner(Eigen::MatrixXd::Identity(n, n), d, pre.rest_scale())
                          .inverse();
  double rest = 0;
  for (int i = 0; i < rows; ++i) {
    const int r = order[static_cast<size_t>(i)];
    Eigen::VectorXd a(n);
    for (int q = 0; q < d; ++q)
      for (int c = 0; c < d; ++c) a(q * d + c) = u(r, q) * v(r, c);
    if (i < heavy)
      p += w(r) * w(r) * a * a.transpose();
    else
      rest += w(r) * w(r);
  }
  CHECK(std::abs(pre.rest_scale() - rest) <= 1e-14 * rest);
  const Eigen::MatrixXd residual = Eigen::MatrixXd::Random(n, 3);
  const Eigen::MatrixXd y = pre.apply(residual);
  // Two double evaluations of P⁻¹r for a P of condition about 10⁴ here (not a derived
  // bound: the property test checks the centre the preconditioner serves).
  CHECK((p * y - residual).norm() <= 1e-10 * residual.norm());
  // The check can fail: the population term alone is far from P⁻¹.
  const Eigen::MatrixXd population = centre_detail::population_preconditioner(residual, d, pre.rest_scale());
  CHECK((p * population - residual).norm() > 0.1 * residual.norm());
}

TEST_CASE("a normal that is not an outer product leaves the body unstructured", "[geometry][centre]") {
  ConvexBody body(4, 20.0);
  body.add({{1, -1, 1, -1}, 0.0, 0.1});  // (1, −1) ⊗ (1, −1)
  CHECK(body.rank_one_normals());
  body.add({{1, 0, 0, 1}, 0.0, 0.1});    // the identity: rank two
  CHECK_FALSE(body.rank_one_normals());
  ConvexBody odd(3, 20.0);               // n not a square
  odd.add({{1, 0, 0}, 0.0, 0.1});
  CHECK_FALSE(odd.rank_one_normals());
}

TEST_CASE("the iterative centre agrees with the MPFR reference, asked for by name",
          "[geometry][centre]") {
  const test::TokenHullBody b = test::token_hull_body(12, 2, 4 * 144, 0.05, 1e-3, 5);
  centre_detail::IterativeStatistics statistics;
  const auto centre = centre_detail::iterative_centre(b.body, 1, 1, {}, &statistics);
  REQUIRE(centre);
  INFO("eigen iterations " << statistics.eigen_iterations << ", CG " << statistics.cg_iterations << ", ρ "
                           << centre->free_basis_residual);
  CHECK(centre->method == ConvexBody::CentreMethod::iterative);
  CHECK(centre->singular_values.size() == 5);
  const SpanResult span = find_span(b.body, *centre, 2, SpanOptions{});
  const Comparison check = check_span(b.body, span, 2, SpanOptions{});
  INFO(format_table({check}));
  CHECK_FALSE(disagrees(check));
  CHECK(check.parts.size() == 3);
  CHECK(check.parts[1].undecided == 0);  // the directions decided
  CHECK(check.parts[2].undecided == 0);  // and the hull point

  // automatic is dense at this size (below kDenseCentreMaxBytes); by name, the method is used.
  CHECK(b.body.automatic_centre_method(1) == ConvexBody::CentreMethod::dense);
  CHECK(b.body.least_squares_centre(1, ConvexBody::CentreMethod::iterative).method == ConvexBody::CentreMethod::iterative);
}

TEST_CASE("the iterative centre gives the same bytes on 1 and 2 threads and on 1, 2 and 3 processes",
          "[geometry][centre]") {
  const test::TokenHullBody b = test::token_hull_body(12, 2, 4 * 144, 0.05, 1e-3, 11);
  const auto one = centre_detail::iterative_centre(b.body, 1, 1, {});
  const auto two = centre_detail::iterative_centre(b.body, 1, 2, {});
  REQUIRE(one);
  REQUIRE(two);
  CHECK(identical_centres(*one, *two));
  for (int size : {2, 3}) {
    std::vector<std::optional<ConvexBody::Centre>> results(static_cast<size_t>(size));
    test::run_as_ranks(size, [&](const Processes& p) {
      results[static_cast<size_t>(p.rank)] = centre_detail::iterative_centre(b.body, 1, 1, p);
    });
    for (const auto& r : results) {
      REQUIRE(r);
      CHECK(identical_centres(*one, *r));
    }
  }
}
