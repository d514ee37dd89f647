// Claim: instance files round-trip bit-exactly: write then read gives the same
// doubles bit for bit (shortest round-trip decimal form, correctly rounded
// parsing), for any finite doubles including -0, subnormals and extremes.
// Proof sketch and the format: proofs/instance_roundtrip.md, docs/formats.md.
// Test of the tester: a writer that prints 15 significant digits (%.15g)
// instead of the shortest round-trip form is rejected.
#include "data/instance_io.hpp"
#include "property.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

using namespace mha;

namespace {

using WriteInstance = std::function<std::string(const Instance&)>;

const WriteInstance instance_text = [](const Instance& inst) { return instance_to_json(inst).dump(2); };

// Mistake: every parameter printed with 15 significant digits (%.15g) instead of the shortest round-trip form.
std::string instance_text_15_digits(const Instance& inst) {
  Instance printed = inst;
  char buffer[32];
  for (auto& h : printed.layer.heads)
    for (MatD* matrix : {&h.theta, &h.w})
      for (Eigen::Index e = 0; e < matrix->size(); ++e) {
        std::snprintf(buffer, sizeof buffer, "%.15g", matrix->data()[e]);
        matrix->data()[e] = std::strtod(buffer, nullptr);  // the double of that decimal: the same text once written
      }
  return instance_to_json(printed).dump(2);
}

auto survives_roundtrip(const WriteInstance& write) {
  return [write] {
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
    const std::string text = write(inst);
    const InstanceReadResult back = instance_from_json_text(text, "roundtrip");
    RC_ASSERT(back.ok);
    for (int i = 0; i < m; ++i)
      for (int e = 0; e < d * d; ++e) {
        RC_ASSERT(std::memcmp(&back.instance.layer.heads[i].theta.data()[e], &inst.layer.heads[i].theta.data()[e], 8) == 0);
        RC_ASSERT(std::memcmp(&back.instance.layer.heads[i].w.data()[e], &inst.layer.heads[i].w.data()[e], 8) == 0);
      }
  };
}

}  // namespace

TEST_CASE("instance JSON round-trips bit-exactly", "[property][io]") {
  mha::test::property("random finite doubles survive write and read unchanged", 200, survives_roundtrip(instance_text));
}

TEST_CASE("test of the tester: the round trip rejects a writer with 15 significant digits", "[property][io][tester]") {
  mha::test::property_rejects("parameters printed with %.15g", 30, survives_roundtrip(instance_text_15_digits));
}
