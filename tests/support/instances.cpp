#include "instances.hpp"

#include "model/instance_gen.hpp"

#include <catch2/catch.hpp>

namespace mha::test {

Instance generated_instance(int d, int k, int m, double scale, uint64_t seed) {
  GenerateOptions o;
  o.d = d;
  o.k = k;
  o.m = m;
  o.scale = scale;
  o.seed = seed;
  GenerateResult g = generate_instance(o);
  REQUIRE(g.ok);
  return g.instance;
}

}  // namespace mha::test
