// Wall-clock seconds as every report measures them (steady_clock: never jumps).
#pragma once

#include <chrono>

namespace mha {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace mha
