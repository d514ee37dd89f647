// Returning freed memory to the system.
#pragma once

namespace mha {

// Gives the pages of freed heap blocks back to the system (glibc's malloc_trim;
// nothing elsewhere). A round's body holds its slabs as thousands of separate
// vectors (32 KB each at d = 64: below glibc's mmap threshold, so they come from
// the heap), and glibc keeps a freed block's pages resident unless they are at
// the heap's top: without this the memory of a freed body (537 MB at (64,2,2))
// stays in the resident set through polishing (docs/bench/memory.md).
void release_freed_memory();

}  // namespace mha
