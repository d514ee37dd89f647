#include "data/oracle.hpp"
#include "generators.hpp"
#include "model/instance_gen.hpp"

#include <catch2/catch.hpp>

#include <cstring>

using namespace mha;

// The sample loops of stages 2 and 4 draw every batch into the previous one's
// memory (draw_into); they must see the samples a fresh draw gives.
TEST_CASE("the oracle's draw_into a reused batch gives draw's samples, byte for byte", "[oracle]") {
  for (InputKind kind : {InputKind::boolean, InputKind::gaussian}) {
    GenerateOptions g;
    g.d = 12;
    g.k = 3;
    g.m = 2;
    g.inputs = kind;
    const GenerateResult generated = generate_instance(g);
    REQUIRE(generated.ok);
    const SampleOracle oracle(generated.instance, 7);
    LabelledBatch reused;
    // A long batch, then shorter and later ones into the same memory.
    for (auto [first, count] : {std::pair<uint64_t, int64_t>{0, 500}, {300, 120}, {10000, 7}, {5, 500}}) {
      const LabelledBatch fresh = oracle.draw(first, count, 2);
      oracle.draw_into(first, count, 1, reused);
      REQUIRE(reused.x.count == count);
      REQUIRE(reused.y.size() == fresh.y.size());
      CHECK(std::memcmp(reused.y.data(), fresh.y.data(), fresh.y.size() * sizeof(double)) == 0);
      for (int64_t s = 0; s < count; ++s) REQUIRE(reused.x.sample(s) == fresh.x.sample(s));
    }
  }
}
