#include "generators.hpp"

#include "model/instance_gen.hpp"

#include "model/inputs.hpp"
#include "numeric/rng.hpp"

#include <cmath>
#include <ostream>

namespace mha::test {

Instance draw_generated_instance(const std::vector<int>& ds, const std::vector<int>& ms,
                                 const std::vector<double>& scales) {
  GenerateOptions g;
  g.d = *rc::gen::elementOf(ds).as("d");
  g.k = 2;
  g.m = *rc::gen::elementOf(ms).as("m");
  g.scale = *rc::gen::elementOf(scales).as("logit scale");
  g.seed = *rc::gen::inRange<uint64_t>(1, 1000).as("instance seed");
  GenerateResult r = generate_instance(g);
  RC_PRE(r.ok);
  return std::move(r.instance);
}

std::string to_string(Flavour f) {
  switch (f) {
    case Flavour::generic: return "generic";
    case Flavour::tiny_logits: return "tiny_logits";
    case Flavour::huge_logits: return "huge_logits";
    case Flavour::near_duplicate_heads: return "near_duplicate_heads";
    case Flavour::near_singular_w: return "near_singular_w";
  }
  return "?";
}

namespace {
MatD gaussian(uint64_t seed, uint64_t index, int d) { return gaussian_matrix(seed, Stream::instance, 1000 + index, 0, d); }
}  // namespace

Layer make_layer(const LayerCase& c) {
  const int d = c.shape.d;
  Layer layer;
  for (int i = 0; i < c.shape.m; ++i) {
    MatD theta = gaussian(c.seed, 2 * i, d);
    MatD w = gaussian(c.seed, 2 * i + 1, d) / std::sqrt(double(d));
    if (c.flavour == Flavour::near_duplicate_heads && i > 0)
      theta = layer.heads[0].theta + 0x1p-30 * theta;  // differs from head 0 by 1e-9 relative
    if (c.flavour == Flavour::near_singular_w && d >= 2) w.col(0) = w.col(1) * (1 + 0x1p-40);
    theta *= c.scale / theta.norm();
    layer.heads.push_back({theta, w});
  }
  return layer;
}

MatD make_input(const LayerCase& c, InputKind kind, uint64_t n) {
  return draw_inputs(c.seed, Stream::test_inputs, kind, c.shape.k, c.shape.d, n, 1, 1).sample(0);
}

rc::Gen<Shape> gen_shape(int max_k, int max_d, int max_m) {
  return rc::gen::mapcat(rc::gen::inRange(1, max_d + 1), [=](int d) {
    return rc::gen::apply(
        [d](int k, int m) { return Shape{k, d, m}; },
        rc::gen::inRange(1, std::min(max_k, d) + 1), rc::gen::inRange(1, max_m + 1));
  });
}

rc::Gen<LayerCase> gen_layer_case(int max_k, int max_d, int max_m) {
  return rc::gen::apply(
      [](Shape s, Flavour f, double scale_exp, uint64_t seed) {
        LayerCase c;
        c.shape = s;
        c.flavour = f;
        c.seed = seed;
        // Logit scale: 1e-6 (near-tied logits) .. 1e6 (near-hardmax), else 0.1 .. 30.
        c.scale = f == Flavour::tiny_logits ? 1e-6 : f == Flavour::huge_logits ? 1e6 : std::pow(10.0, scale_exp);
        return c;
      },
      gen_shape(max_k, max_d, max_m), rc::gen::arbitrary<Flavour>(),
      rc::gen::map(rc::gen::inRange(-10, 15), [](int e) { return e / 10.0; }),
      rc::gen::arbitrary<uint64_t>());
}

}  // namespace mha::test

namespace rc {
Gen<mha::test::Flavour> Arbitrary<mha::test::Flavour>::arbitrary() {
  using F = mha::test::Flavour;
  return gen::element(F::generic, F::generic, F::tiny_logits, F::huge_logits, F::near_duplicate_heads, F::near_singular_w);
}
}  // namespace rc

namespace mha::test {
std::ostream& operator<<(std::ostream& os, const LayerCase& c) {
  return os << "LayerCase{k=" << c.shape.k << ", d=" << c.shape.d << ", m=" << c.shape.m
            << ", flavour=" << mha::test::to_string(c.flavour) << ", scale=" << c.scale << ", seed=" << c.seed << "}";
}
}  // namespace mha::test
