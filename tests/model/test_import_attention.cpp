// import_attention: the imported (Θ_h, W_h) layer computes exactly what
// PyTorch's nn.MultiheadAttention computes (no biases), up to rounding.
#include "test_tolerances.hpp"
#include "model/import_attention.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>

using namespace mha;
using Catch::Contains;

namespace {

// Stable row softmax: subtract the row maximum before exponentiating.
MatD softmax_rows_local(const MatD& logits) {
  MatD out(logits.rows(), logits.cols());
  for (Eigen::Index r = 0; r < logits.rows(); ++r) {
    const double top = logits.row(r).maxCoeff();
    double total = 0;
    for (Eigen::Index c = 0; c < logits.cols(); ++c) total += out(r, c) = std::exp(logits(r, c) - top);
    out.row(r) /= total;
  }
  return out;
}

// PyTorch's multi-head attention forward for one sequence, no biases:
// per-head q, k, v from contiguous blocks of the projections, scaled
// dot-product softmax, concatenation, output projection.
MatD torch_mha_forward(const MatD& x, const MatD& wq, const MatD& wk, const MatD& wv, const MatD& wo, int heads) {
  const Eigen::Index d = wq.rows();
  const Eigen::Index dh = d / heads;
  const MatD q = x * wq.transpose();
  const MatD k = x * wk.transpose();
  const MatD v = x * wv.transpose();
  MatD concat(x.rows(), d);
  for (int h = 0; h < heads; ++h) {
    const MatD qh = q.middleCols(h * dh, dh);
    const MatD kh = k.middleCols(h * dh, dh);
    const MatD vh = v.middleCols(h * dh, dh);
    const MatD scores = (qh * kh.transpose()) / std::sqrt(static_cast<double>(dh));
    concat.middleCols(h * dh, dh) = softmax_rows_local(scores) * vh;
  }
  return concat * wo.transpose();
}

// F(X) = Σ_h softmax_rows(X Θ_h Xᵀ) X W_h.
MatD layer_forward(const Layer& layer, const MatD& x) {
  MatD out = MatD::Zero(x.rows(), layer.d());
  for (const Head& h : layer.heads) out += softmax_rows_local(x * h.theta * x.transpose()) * x * h.w;
  return out;
}

MatD random_signs(Eigen::Index rows, Eigen::Index cols) {
  MatD m = MatD::Random(rows, cols);
  return m.unaryExpr([](double v) { return v < 0 ? -1.0 : 1.0; });
}

}  // namespace

TEST_CASE("imported attention matches PyTorch's multi-head forward", "[import]") {
  std::srand(12345);
  const int d = 8;
  for (const int heads : {1, 2, 4}) {
    for (const double weight_scale : {0.3, 1.0, 2.5}) {
      for (int trial = 0; trial < 5; ++trial) {
        CAPTURE(heads, weight_scale, trial);
        const MatD wq = weight_scale * MatD::Random(d, d);
        const MatD wk = weight_scale * MatD::Random(d, d);
        const MatD wv = MatD::Random(d, d);
        const MatD wo = MatD::Random(d, d);
        const ImportResult r = import_attention(wq, wk, wv, wo, heads);
        REQUIRE(r.ok);
        CHECK(r.error.empty());
        REQUIRE(r.layer.m() == heads);
        REQUIRE(r.layer.d() == d);
        CHECK(validate_layer(r.layer) == "");
        for (const Head& h : r.layer.heads) {
          CHECK(h.theta.rows() == d);
          CHECK(h.theta.cols() == d);
          CHECK(h.w.rows() == d);
          CHECK(h.w.cols() == d);
        }
        for (const int k : {1, 3, 8}) {
          for (const bool boolean : {true, false}) {
            CAPTURE(k, boolean);
            const MatD x = boolean ? random_signs(k, d) : MatD(2.0 * MatD::Random(k, d));
            const MatD expected = torch_mha_forward(x, wq, wk, wv, wo, heads);
            const MatD got = layer_forward(r.layer, x);
            REQUIRE(got.rows() == expected.rows());
            REQUIRE(got.cols() == expected.cols());
            const double scale = expected.cwiseAbs().maxCoeff();
            REQUIRE(scale > 0);
            CHECK((got - expected).norm() <= 1e-12 * expected.norm());
            CHECK((got - expected).cwiseAbs().maxCoeff() <= 1e-12 * scale);
          }
        }
      }
    }
  }
}

TEST_CASE("imported attention uses row blocks of W_Q, W_K, W_V and column blocks of W_O", "[import]") {
  // d = 2, two heads of width 1: head h reads row h of W_Q, W_K, W_V and column h of W_O.
  MatD wq(2, 2), wk(2, 2), wv(2, 2), wo(2, 2);
  wq << 1, 2, 3, 4;
  wk << 5, 6, 7, 8;
  wv << 1, -1, 2, 0;
  wo << 1, 3, -2, 5;
  const ImportResult r = import_attention(wq, wk, wv, wo, 2);
  REQUIRE(r.ok);
  REQUIRE(r.layer.m() == 2);
  MatD theta0(2, 2), theta1(2, 2), w0(2, 2), w1(2, 2);
  theta0 << 1 * 5, 1 * 6, 2 * 5, 2 * 6;           // wq.row(0)ᵀ wk.row(0), d_h = 1
  theta1 << 3 * 7, 3 * 8, 4 * 7, 4 * 8;           // wq.row(1)ᵀ wk.row(1)
  w0 << 1 * 1, 1 * -2, -1 * 1, -1 * -2;           // wv.row(0)ᵀ wo.col(0)ᵀ
  w1 << 2 * 3, 2 * 5, 0 * 3, 0 * 5;               // wv.row(1)ᵀ wo.col(1)ᵀ
  CHECK(r.layer.heads[0].theta == theta0);
  CHECK(r.layer.heads[1].theta == theta1);
  CHECK(r.layer.heads[0].w == w0);
  CHECK(r.layer.heads[1].w == w1);

  // One head of width d: Θ = W_Qᵀ W_K / sqrt(d), W = W_Vᵀ W_Oᵀ.
  std::srand(7);
  const MatD q = MatD::Random(4, 4), k = MatD::Random(4, 4), v = MatD::Random(4, 4), o = MatD::Random(4, 4);
  const ImportResult one = import_attention(q, k, v, o, 1);
  REQUIRE(one.ok);
  // Both sides are 4-term dot products (the division by 2 is exact), perhaps summed
  // in different orders: entrywise within 2γ₄ Σ|x_i y_i|, the sizes evaluated in double.
  const double reorder = tolerance::dot_product_reorder(4) * tolerance::bound_evaluation_factor(6);
  const MatD theta_size = q.cwiseAbs().transpose() * k.cwiseAbs() / 2.0, w_size = v.cwiseAbs().transpose() * o.cwiseAbs().transpose();
  CHECK(((one.layer.heads[0].theta - q.transpose() * k / 2.0).cwiseAbs() - reorder * theta_size).maxCoeff() <= 0.0);
  CHECK(((one.layer.heads[0].w - v.transpose() * o.transpose()).cwiseAbs() - reorder * w_size).maxCoeff() <= 0.0);
}

TEST_CASE("import_attention rejects bad head counts, shapes and values", "[import]") {
  std::srand(99);
  const MatD a = MatD::Random(8, 8);
  auto fails = [](const ImportResult& r) {
    REQUIRE(r.ok == false);
    CHECK(r.error.find('\n') == std::string::npos);
    CHECK(r.layer.heads.empty());
    return r.error;
  };
  CHECK_THAT(fails(import_attention(a, a, a, a, 0)), Contains("heads must be at least 1, got 0"));
  CHECK_THAT(fails(import_attention(a, a, a, a, -2)), Contains("got -2"));
  CHECK_THAT(fails(import_attention(a, a, a, a, 3)), Contains("d = 8 is not divisible by the number of heads 3"));
  CHECK_THAT(fails(import_attention(a, a, a, a, 16)), Contains("not divisible"));
  CHECK_THAT(fails(import_attention(MatD::Random(8, 7), a, a, a, 1)), Contains("W_Q must be a non-empty square"));
  CHECK_THAT(fails(import_attention(MatD(0, 0), MatD(0, 0), MatD(0, 0), MatD(0, 0), 1)), Contains("non-empty square"));
  CHECK_THAT(fails(import_attention(a, MatD::Random(4, 4), a, a, 1)), Contains("W_K has shape 4x4, expected 8x8"));
  CHECK_THAT(fails(import_attention(a, a, MatD::Random(8, 4), a, 1)), Contains("W_V has shape 8x4"));
  CHECK_THAT(fails(import_attention(a, a, a, MatD::Random(4, 8), 1)), Contains("W_O has shape 4x8"));

  MatD nan = a;
  nan(2, 5) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THAT(fails(import_attention(a, a, nan, a, 2)), Contains("W_V has a non-finite entry (NaN) at (2, 5)"));
  MatD inf = a;
  inf(0, 7) = -std::numeric_limits<double>::infinity();
  CHECK_THAT(fails(import_attention(inf, a, a, a, 2)), Contains("W_Q has a non-finite entry (Inf) at (0, 7)"));
  CHECK_THAT(fails(import_attention(a, a, a, inf, 4)), Contains("W_O has a non-finite"));
  const MatD big = MatD::Constant(8, 8, 1e300);
  CHECK_THAT(fails(import_attention(big, big, a, a, 1)), Contains("overflows"));
}
