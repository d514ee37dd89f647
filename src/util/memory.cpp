#include "util/memory.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace mha {

void release_freed_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace mha
