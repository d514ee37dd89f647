// Claim: instance files round-trip bit-exactly: write then read gives the same
// doubles bit for bit (shortest round-trip decimal form, correctly rounded
// parsing), for any finite doubles including -0, subnormals and extremes.
// Proof sketch and the format: proofs/instance_roundtrip.md, docs/formats.md.
#include "data/instance_io.hpp"
#include "property.hpp"

#include <cstring>

using namespace mha;

TEST_CASE("instance JSON round-trips bit-exactly", "[property][io]") {
  mha::test::property("random finite doubles survive write and read unchanged", 200, [] {
    const int d = *rc::gen::inRange(1, 6).as("d");
    const int m = *rc::gen::inRange(1, 4).as("m");
    Instance inst;
    inst.k = *rc::gen::inRange(1, d + 1);
    auto entry = [] {
      uint64_t bits = *rc::gen::arbitrary<uint64_t>();
      double x;
      std::memcpy(&x, &bits, sizeof x);
      if (!std::isfinite(x)) x = *rc::gen::element(0.0, -0.0, 5e-324, -1.7976931348623157e308, 1.0 / 3);
      return x;
    };
    for (int i = 0; i < m; ++i) {
      Head h{MatD(d, d), MatD(d, d)};
      for (int e = 0; e < d * d; ++e) h.theta.data()[e] = entry(), h.w.data()[e] = entry();
      inst.layer.heads.push_back(h);
    }
    const std::string text = instance_to_json(inst).dump(2);
    const InstanceReadResult back = instance_from_json_text(text, "roundtrip");
    RC_ASSERT(back.ok);
    for (int i = 0; i < m; ++i)
      for (int e = 0; e < d * d; ++e) {
        RC_ASSERT(std::memcmp(&back.instance.layer.heads[i].theta.data()[e], &inst.layer.heads[i].theta.data()[e], 8) == 0);
        RC_ASSERT(std::memcmp(&back.instance.layer.heads[i].w.data()[e], &inst.layer.heads[i].w.data()[e], 8) == 0);
      }
  });
}
