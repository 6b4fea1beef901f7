// Process allocator settings for workloads that allocate and free large blocks.
#pragma once
#include <cstddef>

namespace tfrx {

// Whether the C library is glibc, whose malloc thresholds set_malloc_thresholds changes.
bool malloc_tunable();

// Sets glibc malloc's mmap threshold (blocks at least this large get their own
// mapping, returned to the kernel when freed) and trim threshold (free memory
// at the top of the heap beyond this is returned to the kernel). Returns false
// where the C library is not glibc or refuses a value.
bool set_malloc_thresholds(size_t mmap_threshold, size_t trim_threshold);

}  // namespace tfrx
