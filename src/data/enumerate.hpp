// Exhaustive enumeration of {±1}^{k×d}: population expectations become exact
// finite sums over all 2^{k·d} inputs (feasible for k·d ≤ kMaxEnumerationBits).
#pragma once

#include "numeric/scalar.hpp"

#include <cstdint>

namespace mha {

constexpr int kMaxEnumerationBits = 20;

// Input number `index` (0 ≤ index < 2^{kd}): entry (t, j) is +1 iff bit t*d + j is set.
template <class T>
Mat<T> boolean_input(uint64_t index, int k, int d) {
  Mat<T> x(k, d);
  for (int t = 0; t < k; ++t)
    for (int j = 0; j < d; ++j) x(t, j) = ((index >> (t * d + j)) & 1u) ? T(1) : T(-1);
  return x;
}

// Calls f(X) for every X in {±1}^{k×d}, in index order.
template <class T, class F>
void for_each_boolean_input(int k, int d, F&& f) {
  const uint64_t count = uint64_t{1} << (k * d);
  for (uint64_t index = 0; index < count; ++index) f(boolean_input<T>(index, k, d));
}

}  // namespace mha
