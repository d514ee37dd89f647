// A generated instance for tests: generate_instance with the given shape,
// logit scale and seed, asserting that a drawable instance came out.
#pragma once

#include "model/layer.hpp"

#include <cstdint>

namespace mha::test {

Instance generated_instance(int d, int k, int m, double scale, uint64_t seed);

}  // namespace mha::test
