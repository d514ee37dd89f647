#include "property.hpp"

#include <cstdlib>
#include <functional>

namespace mha::test {

uint64_t property_base_seed() {
  const char* s = std::getenv("MHALEARN_PROPERTY_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20261121ull;
}

int property_scale() {
  const char* s = std::getenv("MHALEARN_PROPERTY_SCALE");
  const long v = s ? std::strtol(s, nullptr, 10) : 1;
  return v < 1 ? 1 : static_cast<int>(v);
}

rc::detail::TestParams property_params(const std::string& description, int cases) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  // FNV-1a of the description: stable across platforms, unlike std::hash.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : description) h = (h ^ c) * 1099511628211ull;
  params.seed = property_base_seed() ^ h;
  params.maxSuccess = cases * property_scale();
  return params;
}

}  // namespace mha::test
