// libFuzzer harness: check_checkpoint (checks.hpp) on every input; a failed
// invariant aborts, so libFuzzer records it with its reproducer.
#include "checks.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string failed = mha::fuzz::check_checkpoint(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!failed.empty()) {
    std::fprintf(stderr, "fuzz_checkpoint: invariant failed: %s\n", failed.c_str());
    std::abort();
  }
  return 0;
}
