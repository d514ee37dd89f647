// The streamed least-squares centre (ConvexBody::CentreMethod::streamed) piece by
// piece and whole: its triangular factor against the Gram matrix of [M | c], the
// bidiagonal singular values and vectors against JacobiSVD, the centre against
// the MPFR reference with its own derived ε (stage 5's check_span), its fallback
// to the dense method, and its working memory against the bound it is chosen for
// (measured in a child process; the dense method must exceed that bound, which
// shows the measurement can fail). Tolerances: tolerance::gamma with the
// constants of tolerance::streamed_svd_backward_error, derived there.
#include "bodies.hpp"
#include "centre_bodies.hpp"
#include "geometry/centre_streamed.hpp"
#include "geometry/convex_body.hpp"
#include "numeric/tolerance.hpp"
#include "stages/stage5/check.hpp"
#include "stages/stage5/span.hpp"

#include <catch2/catch.hpp>

#include <Eigen/Dense>
#include <Eigen/QR>
#include <Eigen/SVD>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

using namespace mha;

namespace {

using Method = ConvexBody::CentreMethod;

using test::token_body;

// [M | c] of the header's contract, dense.
Eigen::MatrixXd weighted_rows(const ConvexBody& body) {
  const int n = body.dim();
  Eigen::MatrixXd a(static_cast<Eigen::Index>(body.size()), n + 1);
  for (size_t r = 0; r < body.size(); ++r) {
    const Slab& s = body.slabs()[r];
    const double w = centre_detail::slab_weight(s, n, body.radius());
    a.row(static_cast<Eigen::Index>(r)).head(n) = w * Eigen::Map<const Eigen::RowVectorXd>(s.a.data(), n);
    a(static_cast<Eigen::Index>(r), n) = w * s.b;
  }
  return a;
}

}  // namespace

TEST_CASE("streamed R factor of [M | c]: its Gram matrix is [M | c]ᵀ[M | c] within the fold's backward error", "[geometry][centre]") {
  // R̂ is exact for A + ΔA (A = [M | c], tolerance.hpp: ‖Δa_j‖ ≤ γ_{64(n+1)N}‖a_j‖), so
  // ‖R̂ᵀR̂ − AᵀA‖_F ≤ (2γ + γ²)‖A‖_F². Blocks of 1, 5 and 64 rows and all N at once;
  // n + 1 = 50 columns, two compact-WY panels.
  const ConvexBody body = token_body(7, 150, 11);
  const int n = body.dim();
  const Eigen::MatrixXd a = weighted_rows(body);
  const double g = tolerance::gamma(64LL * (n + 1) * static_cast<long long>(body.size()));
  const double bound = (2 * g + g * g) * a.squaredNorm();
  for (Eigen::Index block : {1, 5, 64, 150}) {
    const Eigen::MatrixXd r = centre_detail::streamed_r_factor(body.slabs(), n, body.radius(), block);
    INFO("block rows " << block);
    CHECK(r.triangularView<Eigen::StrictlyLower>().toDenseMatrix().cwiseAbs().maxCoeff() == 0.0);
    CHECK((r.transpose() * r - a.transpose() * a).norm() <= bound);
  }
  // A single zero row and no rows leave R = 0.
  ConvexBody empty(4, 1.0);
  CHECK(centre_detail::streamed_r_factor(empty.slabs(), 4, 1.0, 8).norm() == 0.0);
  empty.add({{0.0, 0.0, 0.0, 0.0}, 0.0, 1.0});
  CHECK(centre_detail::streamed_r_factor(empty.slabs(), 4, 1.0, 8).norm() == 0.0);
}

TEST_CASE("fold_rows gives the same bytes in chunks of columns on 1 and 2 threads", "[geometry][centre]") {
  // 1100 columns: trails of up to 1067 columns, so chunks of 512 split them in two
  // (the second taking the rest) and chunks of 8 or 12 in many; one unchunked fold is
  // the reference. Two blocks of rows, the second folded into the first's R. (Chunks
  // of 14 columns, not rounded to a multiple of 4, give other bytes: measured.)
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  const Eigen::Index cols = 1100;
  Eigen::MatrixXd first(40, cols), second(37, cols);
  for (Eigen::Index j = 0; j < cols; ++j) {
    for (Eigen::Index i = 0; i < first.rows(); ++i) first(i, j) = normal(rng);
    for (Eigen::Index i = 0; i < second.rows(); ++i) second(i, j) = normal(rng);
  }
  auto folded = [&](int threads, Eigen::Index chunk) {
    Eigen::MatrixXd r = Eigen::MatrixXd::Zero(cols, cols);
    Eigen::MatrixXd a = first, b = second;
    centre_detail::fold_rows(r, a, threads, chunk);
    centre_detail::fold_rows(r, b, threads, chunk);
    return r;
  };
  const Eigen::MatrixXd whole = folded(1, Eigen::Index{1} << 40);
  REQUIRE(whole.norm() > 0);
  for (const auto& [threads, chunk] : std::vector<std::pair<int, Eigen::Index>>{{1, 512}, {2, 512}, {2, 8}, {2, 12}, {2, 14}}) {
    INFO(threads << " threads, chunks of " << chunk << " columns");
    CHECK(folded(threads, chunk) == whole);
  }
}

TEST_CASE("the threaded bidiagonalisation and QR give Eigen's bytes", "[geometry][centre]") {
  // Eigen's own routines are the reference: upperbidiagonalization_inplace_blocked and
  // HouseholderQR, in place. Two shapes: a 333 × 333 upper-triangular matrix (an R
  // factor, its size not a multiple of 4), and a 301 × 301 block of a matrix with
  // 4200 rows, whose column stride (33600 bytes) switches Eigen's matrix–vector kernels
  // to their large-stride paths. Chunks of 512 (one chunk per product at these sizes),
  // 8 and 12 rows or columns (many, the last taking the rest), and 14 (rounded to 12;
  // without that rounding, 3 of these 10 comparisons fail: measured).
  std::mt19937_64 rng(17);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd triangular = Eigen::MatrixXd::Zero(333, 333);
  for (Eigen::Index j = 0; j < 333; ++j)
    for (Eigen::Index i = 0; i <= j; ++i) triangular(i, j) = normal(rng);
  Eigen::MatrixXd tall(4200, 301);
  for (Eigen::Index j = 0; j < tall.cols(); ++j)
    for (Eigen::Index i = 0; i < tall.rows(); ++i) tall(i, j) = normal(rng);
  const std::vector<std::pair<int, Eigen::Index>> splits{{1, 512}, {2, 512}, {2, 8}, {2, 12}, {2, 14}};

  auto bidiagonalised = [](Eigen::Ref<Eigen::MatrixXd> a, int threads, Eigen::Index chunk) {
    centre_detail::UpperBidiagonal b(a.cols(), a.cols());
    if (threads == 0) {
      Eigen::internal::upperbidiagonalization_inplace_blocked(a, b);  // Eigen's
    } else {
      centre_detail::bidiagonalise_in_place(a, b, threads, chunk);
    }
    Eigen::MatrixXd out(a.rows() + 2, a.cols());  // the reflectors, then B's two diagonals
    out.topRows(a.rows()) = a;
    out.row(a.rows()) = b.diagonal<0>().transpose();
    out.row(a.rows() + 1).head(a.cols() - 1) = b.diagonal<1>().transpose();
    out(a.rows() + 1, a.cols() - 1) = 0;
    return out;
  };
  // The QR's factors, and Qᵀ applied to a vector as least_squares_across applies it:
  // Eigen's householderQ() against a HouseholderSequence of the threaded factors.
  auto factored = [](Eigen::Ref<Eigen::MatrixXd> a, int threads, Eigen::Index chunk) {
    const Eigen::VectorXd q = Eigen::VectorXd::LinSpaced(a.rows(), -1.0, 2.0);
    Eigen::VectorXd coefficients, qtq;
    if (threads == 0) {
      const Eigen::HouseholderQR<Eigen::Ref<Eigen::MatrixXd>> qr(a);  // Eigen's, in place
      coefficients = qr.hCoeffs();
      qtq = qr.householderQ().transpose() * q;
    } else {
      centre_detail::householder_qr_in_place(a, coefficients, threads, chunk);
      qtq = Eigen::HouseholderSequence<Eigen::Ref<Eigen::MatrixXd>, Eigen::VectorXd>(a, coefficients).transpose() * q;
    }
    Eigen::MatrixXd out(a.rows() + 2, a.cols());
    out.topRows(a.rows()) = a;
    out.row(a.rows()) = coefficients.transpose();
    out.row(a.rows() + 1) = qtq.transpose();
    return out;
  };
  for (const Eigen::MatrixXd* source : {&triangular, &tall}) {
    // Each call factors a fresh copy of the source's top square block.
    auto on_copy = [&](auto&& factor, int threads, Eigen::Index chunk) {
      Eigen::MatrixXd m = *source;
      return factor(Eigen::Ref<Eigen::MatrixXd>(m.topLeftCorner(m.cols(), m.cols())), threads, chunk);
    };
    const Eigen::MatrixXd eigen_b = on_copy(bidiagonalised, 0, 0), eigen_qr = on_copy(factored, 0, 0);
    for (const auto& [threads, chunk] : splits) {
      INFO((source == &tall ? "strided" : "triangular") << ", " << threads << " threads, chunks of " << chunk);
      CHECK(on_copy(bidiagonalised, threads, chunk) == eigen_b);
      CHECK(on_copy(factored, threads, chunk) == eigen_qr);
    }
  }

  // The tester: what the rounding to multiples of 4 guards against is visible to this
  // comparison at these sizes — a trailing update of the bidiagonalisation's shape
  // (333 × 300 minus a product of inner dimension 32), by Eigen's kernels in chunks of
  // 6 columns, gives other bytes than whole (the matrix–vector products happen not to
  // at these sizes).
  const Eigen::MatrixXd a = triangular.leftCols(300), left = tall.topLeftCorner(333, 32),
                        right = tall.bottomLeftCorner(300, 32);
  Eigen::MatrixXd whole = a, chunked = a;
  whole.noalias() -= left * right.transpose();
  for (Eigen::Index first = 0; first < a.cols(); first += 6) {
    const Eigen::Index width = std::min<Eigen::Index>(6, a.cols() - first);
    chunked.middleCols(first, width).noalias() -= left * right.middleRows(first, width).transpose();
  }
  CHECK(chunked != whole);
}

TEST_CASE("the streamed centre on 2 threads gives the bytes of 1 thread", "[geometry][centre]") {
  // d = 34: n = 1156 unknowns, so the fold's, the bidiagonalisation's and the QR's
  // trailing updates over their first 100 or so columns are two chunks (512 and the
  // rest), which the threads split; 2n token slabs, one free direction. (Its tester,
  // measured: chunks of 510 columns on 2 threads — not a multiple of 4 — fail 5 of
  // the 8 checks.)
  const ConvexBody body = token_body(34, 2312, 3);
  const int n = body.dim();
  const auto one = centre_detail::streamed_centre(body.slabs(), n, body.radius(), 1, 1);
  const auto two = centre_detail::streamed_centre(body.slabs(), n, body.radius(), 1, 2);
  REQUIRE(one.has_value());
  REQUIRE(two.has_value());
  CHECK(two->x0 == one->x0);
  CHECK(two->free_basis == one->free_basis);
  CHECK(two->singular_values == one->singular_values);
  CHECK(two->weighted_residual == one->weighted_residual);
  CHECK(two->free_basis_residual == one->free_basis_residual);
  CHECK(two->gap == one->gap);
}

TEST_CASE("bidiagonal singular values and right vectors agree with JacobiSVD of the dense bidiagonal", "[geometry][centre]") {
  // Values: both methods are exact for B + E, ‖E‖ ≤ 2γ_{1920n}·√2‖B‖_F (tolerance.hpp) and
  // ≤ γ_{16n²}‖B‖_F (one-sided Jacobi's backward error, the constant as for the SVDs there);
  // Weyl. Vectors: each is exact for B + E_i with ‖E_i‖ ≤ ρ·max|B| (ρ = 2⁻⁴⁰), so by Wedin
  // its sine to Jacobi's vector is ≤ (ρ max|B| + ε_J)/(gap − …) for a simple value.
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  const int n = 60;
  Eigen::VectorXd d(n), e(n - 1);
  for (int i = 0; i < n; ++i) d(i) = std::ldexp(1.0 + std::abs(normal(rng)), -i / 4);  // graded: 2⁰ … 2⁻¹⁴
  for (int i = 0; i + 1 < n; ++i) e(i) = 0.3 * normal(rng);
  d(n - 1) = 0;  // singular
  Eigen::MatrixXd b = Eigen::MatrixXd::Zero(n, n);
  b.diagonal() = d;
  b.diagonal<1>() = e;
  const Eigen::JacobiSVD<Eigen::MatrixXd> jacobi(b, Eigen::ComputeFullV);
  const Eigen::VectorXd s = centre_detail::bidiagonal_singular_values(d, e);
  REQUIRE(s.size() == n);
  const double eps = (2 * tolerance::gamma(1920LL * n) * std::sqrt(2.0) + tolerance::gamma(16LL * n * n)) * b.norm();
  for (int j = 0; j < n; ++j) CHECK(std::abs(s(j) - jacobi.singularValues()(n - 1 - j)) <= eps);
  const int p = 4;
  const auto found = centre_detail::bidiagonal_right_vectors(d, e, s.head(p));
  REQUIRE(found.has_value());
  const Eigen::MatrixXd* v = &found->vectors;
  CHECK((v->transpose() * *v - Eigen::MatrixXd::Identity(p, p)).norm() <= p * tolerance::gamma(4LL * n));  // Gram–Schmidt twice
  CHECK(found->residual <= tolerance::kInverseIterationResidual);  // converged, not stalled
  const double rho = tolerance::kInverseIterationResidual * std::max(d.cwiseAbs().maxCoeff(), e.cwiseAbs().maxCoeff());
  for (int j = 0; j < p; ++j) {
    const double gap = std::min(j > 0 ? s(j) - s(j - 1) : INFINITY, s(j + 1) - s(j));
    REQUIRE(gap > 2 * (rho + eps));
    const Eigen::VectorXd reference = jacobi.matrixV().col(n - 1 - j);
    const double sine = (v->col(j) - reference * reference.dot(v->col(j))).norm();
    INFO("j = " << j << ", s = " << s(j) << ", gap " << gap);
    CHECK(sine <= (rho + eps) / (gap - rho - eps) + tolerance::gamma(16LL * n * n));
  }
  // A multiple value (B = I): any orthonormal vectors are right singular vectors.
  const auto id = centre_detail::bidiagonal_right_vectors(Eigen::VectorXd::Ones(8), Eigen::VectorXd::Zero(7),
                                                          Eigen::VectorXd::Ones(3));
  REQUIRE(id.has_value());
  CHECK((id->vectors.transpose() * id->vectors - Eigen::MatrixXd::Identity(3, 3)).norm() <= tolerance::gamma(64));
}

TEST_CASE("streamed centre agrees with the MPFR reference within its own derived bounds", "[geometry][centre]") {
  // check_span compares singular values (Weyl), the free dimension, the free basis
  // (Wedin) and x0 (hull_point_bound) with ε_M = streamed_svd_backward_error.
  for (const auto& [d, m, unconstrained, seed] : std::vector<std::tuple<int, int, int, uint64_t>>{
           {5, 2, 0, 1}, {6, 3, 0, 2}, {7, 2, 1, 3}, {6, 1, 0, 4}, {8, 2, 0, 5}}) {
    const test::SyntheticBody b = test::synthetic_body(d, m, 3 * d * d, 1e-3, unconstrained, seed);
    const ConvexBody::Centre c = b.body.least_squares_centre(m - 1, Method::streamed);
    const SpanResult span = find_span(b.body, c, m, SpanOptions{});
    const Comparison cmp = check_span(b.body, span, m, SpanOptions{});
    INFO("d = " << d << ", m = " << m << ", unconstrained " << unconstrained << ": " << cmp.detail);
    // A direction no slab sees leaves rank < n − free: the dense fallback (checked as dense).
    CHECK(c.method == (unconstrained == 0 ? Method::streamed : Method::dense));
    CHECK_FALSE(disagrees(cmp));
    CHECK(cmp.compared == b.body.dim());  // every singular value compared
  }
  // Token slabs (the learner's), one free direction, against the dense method's check.
  const ConvexBody body = token_body(6, 200, 7);
  const ConvexBody::Centre c = body.least_squares_centre(1, Method::streamed);
  CHECK(c.method == Method::streamed);
  CHECK_FALSE(disagrees(check_span(body, find_span(body, c, 2, SpanOptions{}), 2, SpanOptions{})));
}

TEST_CASE("streamed centre where inverse iteration stalls above 2⁻⁴⁰: the vector of the smallest residual, checked at it", "[geometry][centre]") {
  // A square system (N = n = 49 token slabs at d = 7, seed 328, found by a search of
  // seeds): the free vector's singular-pair residual stops falling at about 9·10⁻¹²
  // of max|B|, above kInverseIterationResidual, where the method used to fall back to
  // the dense one (at d = 128 a 28 GB dense SVD: docs/bench/memory.md). It now keeps
  // the vector of the smallest residual, and check_span's ε_M carries that residual.
  const ConvexBody body = token_body(7, 49, 328);
  const ConvexBody::Centre c = body.least_squares_centre(1, Method::streamed);
  REQUIRE(c.method == Method::streamed);
  CHECK(c.free_basis_residual > tolerance::kInverseIterationResidual);
  CHECK(c.free_basis_residual <= tolerance::kInverseIterationStallLimit);
  const SpanResult span = find_span(body, c, 2, SpanOptions{});
  const Comparison cmp = check_span(body, span, 2, SpanOptions{});
  INFO(cmp.detail);
  CHECK_FALSE(disagrees(cmp));
  CHECK(cmp.compared == body.dim());
  // The tester: the free direction turned by 0.2 rad, its residual claim kept, disagrees.
  ConvexBody::Centre turned = c;
  Eigen::VectorXd other = Eigen::VectorXd::Unit(body.dim(), 0);
  other -= c.free_basis.row(0).transpose() * c.free_basis.row(0).dot(other);
  turned.free_basis.row(0) = std::cos(0.2) * c.free_basis.row(0) + std::sin(0.2) * other.normalized().transpose();
  CHECK(disagrees(check_span(body, find_span(body, turned, 2, SpanOptions{}), 2, SpanOptions{})));
}

TEST_CASE("streamed centre falls back to the dense one where its conditions fail; the automatic choice", "[geometry][centre]") {
  // N < n: rank < n − free, the streamed method cannot truncate; the dense centre, bit for bit.
  const ConvexBody few = token_body(5, 10, 3);
  const ConvexBody::Centre dense = few.least_squares_centre(1, Method::dense);
  const ConvexBody::Centre streamed = few.least_squares_centre(1, Method::streamed);
  CHECK(streamed.x0 == dense.x0);
  CHECK(streamed.singular_values == dense.singular_values);
  CHECK(streamed.rank == dense.rank);
  CHECK(dense.rank <= 10);
  CHECK(streamed.method == Method::dense);  // it says so, and check_span bounds it as dense:
  // its ε_M is the dense method's, smaller than the streamed bound the same span would get.
  auto epsilon_m = [&](const SpanResult& span) {
    const std::string detail = check_span(few, span, 2, SpanOptions{}).detail;
    return std::stod(detail.substr(detail.find("ε_M = ") + std::string("ε_M = ").size()));
  };
  const SpanResult fell_back = find_span(few, streamed, 2, SpanOptions{});
  SpanResult claimed_streamed = fell_back;
  claimed_streamed.centre_method = Method::streamed;
  CHECK(epsilon_m(fell_back) < epsilon_m(claimed_streamed));
  // Beyond the memory it is given, the dense method is refused with one line, never allocated.
  try {
    few.least_squares_centre(1, Method::streamed, 1, 1000.0);
    FAIL("no CentreTooLarge");
  } catch (const CentreTooLarge& e) {
    CHECK_THAT(e.what(), Catch::Contains("the streamed method's conditions fail") && Catch::Contains("more than"));
  }
  CHECK_THROWS_AS(few.least_squares_centre(1, Method::dense, 1, 1000.0), CentreTooLarge);
  CHECK(few.least_squares_centre(1, Method::dense, 1, ConvexBody::dense_centre_bytes(10, 25)).x0 == dense.x0);  // at the limit
  CHECK(ConvexBody::physical_memory_bytes() > 1e8);
  // More free directions than kStreamedMaxFree: dense.
  const ConvexBody many = token_body(6, 108, 4);
  const int free = ConvexBody::kStreamedMaxFree + 1;
  CHECK(many.least_squares_centre(free, Method::streamed).x0 == many.least_squares_centre(free, Method::dense).x0);
  // The automatic choice: dense while M and BDCSVD fit in kDenseCentreMaxBytes; beyond,
  // iterative on rank-one normals, streamed on others.
  for (bool rank_one : {false, true}) {
    CHECK(ConvexBody::automatic_centre_method(8192, 1024, 1, rank_one) == Method::dense);  // d = 32: 168 MB
    CHECK(ConvexBody::automatic_centre_method(9800, 1225, 1, rank_one) == Method::dense);  // d = 35: 240 MB
    CHECK(ConvexBody::automatic_centre_method(16384, 4096, ConvexBody::kStreamedMaxFree + 1, rank_one) ==
          Method::dense);
  }
  CHECK(ConvexBody::automatic_centre_method(10368, 1296, 1, false) == Method::streamed);  // d = 36: 269 MB
  CHECK(ConvexBody::automatic_centre_method(10368, 1296, 1, true) == Method::iterative);
  CHECK(ConvexBody::automatic_centre_method(16384, 4096, 1, false) == Method::streamed);  // d = 64: 2.15 GB
  CHECK(ConvexBody::automatic_centre_method(16384, 4096, 1, true) == Method::iterative);
  CHECK(ConvexBody::dense_centre_bytes(16384, 4096) == 8.0 * (16384.0 * 4096 + 12.0 * 4096 * 4096));
  CHECK(ConvexBody::streamed_centre_bytes(4096) < 0.21e9);
}

TEST_CASE("streamed centre's working memory at d = 32 stays within its bound; the dense one's does not", "[geometry][centre][memory]") {
#if defined(__SANITIZE_ADDRESS__)
  SUCCEED("not measured under AddressSanitizer (its shadow memory is not the program's)");
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  SUCCEED("not measured under AddressSanitizer (its shadow memory is not the program's)");
#define MHALEARN_SKIP_MEMORY 1
#endif
#endif
#if !defined(__SANITIZE_ADDRESS__) && !defined(MHALEARN_SKIP_MEMORY)
  // n = 1024, N = 8192 (the learner's slab count at d = 32). The streamed method holds
  // at most the (n+1)² factor beside a block of 1024 rows or its packed triangle:
  // streamed_centre_bytes(1024) = 16.8 MB; allowed 1.25× that plus 8 MB for the
  // small vectors, Eigen's panels and the allocator (a page granularity, arenas).
  // The dense method holds M (67 MB) then R and BDCSVD's matrices (≈ 11n²): more
  // than twice the allowance.
  const ConvexBody body = token_body(32, 8192, 9);
  const double allowed = 1.25 * ConvexBody::streamed_centre_bytes(1024) + 8e6;
  const double streamed = test::measure_centre_in_child(body, 1, Method::streamed).peak_growth_bytes;
  const double dense = test::measure_centre_in_child(body, 1, Method::dense).peak_growth_bytes;
  INFO("peak growth: streamed " << streamed / 1e6 << " MB, dense " << dense / 1e6 << " MB, allowed " << allowed / 1e6
                                << " MB");
  REQUIRE(streamed >= 0);
  REQUIRE(dense >= 0);
  CHECK(streamed <= allowed);
  CHECK(dense > 2 * allowed);
#endif
}

