// Claim (proofs/sq_family.md §5): for the exported instance of the family
// (Θ_i, W_i rounded to double) and every ±1 input X, entrywise
//   |F_fast(X) − F_S(X)|      ≤ (B_u(X) + E_dbl)(1 + 2^-40),
//   |F_mpfr,P(X) − F_S(X)|    ≤ (B_{2^-P}(X) + E_dbl)(1 + 2^-40)   (exported double parameters),
//   |F_mpfr,P(X) − F_S(X)|    ≤ (B_{2^-P}(X↑) + E_P)(1 + 2^-40)   (parameters at P bits),
// where B_u is forward_error_bound (proofs/forward_error_bound.md) and E the
// parameter-rounding bound Σ_i (e^{2m·dθ_i} − 1)|ŵ_i| + |ŵ_i − w_i|.
// The comparison is exact: the computed values are converted to rationals.
// Test of the tester: a fast pass whose head loop stops one short (the last
// head dropped) is rejected.
#include "model/inputs.hpp"
#include "model/forward_error.hpp"
#include "model/forward_fast.hpp"
#include "model/reference.hpp"
#include "numeric/precision.hpp"
#include "property.hpp"
#include "sq_generators.hpp"

#include <functional>

using namespace mha;

namespace {
bool within(const Mat<Rational>& exact, const Mat<Rational>& computed, const MatD& bound) {
  for (Eigen::Index a = 0; a < exact.rows(); ++a)
    for (Eigen::Index c = 0; c < exact.cols(); ++c)
      if (abs(computed(a, c) - exact(a, c)) > Rational(bound(a, c))) return false;
  return true;
}
Mat<Rational> exact_of(const MatD& y) {
  Mat<Rational> r(y.rows(), y.cols());
  for (Eigen::Index i = 0; i < y.size(); ++i) r.data()[i] = Rational(y.data()[i]);
  return r;
}
Mat<Rational> exact_of(const Mat<Mpfr>& y) {
  Mat<Rational> r(y.rows(), y.cols());
  for (Eigen::Index i = 0; i < y.size(); ++i) r.data()[i] = mpfr_to_rational(y.data()[i]);
  return r;
}
MatD with_margin(const MatD& b, double e) { return (b.array() + e).matrix() * (1.0 + 0x1p-40); }

using SqFastPass = std::function<FastForwardResult(const Layer&, const InputBatch&)>;

const SqFastPass sq_fast_pass = [](const Layer& layer, const InputBatch& batch) {
  return FastForward(layer).run(batch, 1);
};

// Mistake: the head loop stops one short, the last head's A X W left out.
FastForwardResult sq_fast_pass_without_last_head(const Layer& layer, const InputBatch& batch) {
  Layer fewer = layer;
  fewer.heads.pop_back();
  return FastForward(fewer).run(batch, 1);
}

auto sq_passes_agree(const SqFastPass& fast_pass) {
  return [fast_pass] {
    const SqFamilyParams params = mha::test::draw_sq_params(24, 5);
    const SqBuildResult built = build_sq_family(params);
    RC_ASSERT(built.ok);
    const SqFamily& f = built.family;
    const Instance inst = sq_export_instance(f);
    std::string err;
    const double e_dbl = sq_exported_parameter_error(f, inst.layer, err);
    RC_ASSERT(err.empty());
    constexpr unsigned kBits = 200;
    const double e_full = sq_mpfr_parameter_error(f, kBits);
    ScopedPrecision precision(kBits);
    const double u_p = std::ldexp(1.0, -static_cast<int>(current_precision_bits()));
    const LayerT<Mpfr> exported = convert_layer<Mpfr>(inst.layer), full = sq_layer_mpfr(f);
    Layer up;   // full-precision parameters rounded away from zero
    for (const auto& h : full.heads) {
      MatD th = to_double_matrix(h.theta), w = to_double_matrix(h.w);
      for (Eigen::Index i = 0; i < th.size(); ++i) {
        th.data()[i] = mpfr_get_d(h.theta.data()[i].backend().data(), MPFR_RNDA);
        w.data()[i] = mpfr_get_d(h.w.data()[i].backend().data(), MPFR_RNDA);
      }
      up.heads.push_back({th, w});
    }
    const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
    const InputBatch batch = draw_inputs(seed, Stream::test_inputs, InputKind::boolean, 2, params.d, 0, 4, 1);
    const FastForwardResult fr = fast_pass(inst.layer, batch);
    RC_ASSERT(fr.status.ok());
    const std::vector<double>& y = fr.y;
    for (int64_t n = 0; n < batch.count; ++n) {
      const MatD x = batch.sample(n);
      const Mat<Rational> exact = sq_forward_exact(f, x);
      const MatD yf = Eigen::Map<const MatD>(y.data() + n * 2 * params.d, 2, params.d);
      RC_ASSERT(within(exact, exact_of(yf), with_margin(forward_error_bound(inst.layer, x), e_dbl)));
      const Mat<Mpfr> xm = cast_matrix<Mpfr>(x);
      RC_ASSERT(within(exact, exact_of(forward_reference<Mpfr>(exported, xm)), with_margin(forward_error_bound(inst.layer, x, u_p), e_dbl)));
      RC_ASSERT(within(exact, exact_of(forward_reference<Mpfr>(full, xm)), with_margin(forward_error_bound(up, x, u_p), e_full)));
    }
  };
}
}  // namespace

TEST_CASE("double and MPFR forward passes of the SQ family agree with the exact value", "[property][hardness][forward]") {
  mha::test::property("fast and both MPFR passes within the derived bounds", 40, sq_passes_agree(sq_fast_pass));
  mha::test::property("sq_verify (the CLI's driver) reports agreement on sampled inputs", 20, [] {
    const SqFamilyParams params = mha::test::draw_sq_params(20, 5);
    const SqBuildResult built = build_sq_family(params);
    RC_ASSERT(built.ok);
    const Instance inst = sq_export_instance(built.family);
    SqVerifyOptions opt;
    opt.enumerate = false;
    opt.samples = 32;
    opt.mpfr_checks = 2;
    opt.seed = *rc::gen::arbitrary<uint64_t>();
    const SqVerifyReport r = sq_verify(built.family, inst.layer, opt);
    RC_ASSERT(r.error.empty());
    RC_ASSERT(r.ok);
    RC_ASSERT(r.exact_mismatches == 0);
  });
}

TEST_CASE("test of the tester: the SQ forward agreement rejects a fast pass without its last head",
          "[property][hardness][forward][tester]") {
  mha::test::property_rejects("fast pass with the last head dropped", 4,
                              sq_passes_agree(sq_fast_pass_without_last_head));
}
