// Composable generators for tests: shapes → layers → conditioning, with
// deliberate degenerate cases (near-tied logits, near-duplicate heads,
// near-singular projections, huge logit scales).
#pragma once

#include "model/layer.hpp"

#include <rapidcheck.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mha::test {

struct Shape {
  int k = 2, d = 4, m = 1;
};

enum class Flavour { generic, tiny_logits, huge_logits, near_duplicate_heads, near_singular_w };
std::string to_string(Flavour f);

struct LayerCase {
  Shape shape;
  Flavour flavour = Flavour::generic;
  double scale = 1.0;
  uint64_t seed = 0;
};

// Deterministic layer for a case: Gaussian entries from Philox, shaped by the flavour.
Layer make_layer(const LayerCase& c);
// A k×d input from the case's seed: ±1 or Gaussian.
MatD make_input(const LayerCase& c, InputKind kind, uint64_t n);

std::ostream& operator<<(std::ostream& os, const LayerCase& c);

rc::Gen<Shape> gen_shape(int max_k, int max_d, int max_m);

// Inside a property: an instance as `mhalearn generate` draws it (model/instance_gen.hpp),
// k = 2, with d, m and the logit scale picked from the given values and an instance
// seed in [1, 1000); the case is discarded (RC_PRE) when no drawable instance comes out.
Instance draw_generated_instance(const std::vector<int>& ds, const std::vector<int>& ms,
                                 const std::vector<double>& scales);
rc::Gen<LayerCase> gen_layer_case(int max_k, int max_d, int max_m);

}  // namespace mha::test

namespace rc {
template <>
struct Arbitrary<mha::test::Flavour> {
  static Gen<mha::test::Flavour> arbitrary();
};
}  // namespace rc

