// glibc's malloc hands blocks above its mmap threshold (128 KiB at start) to
// the kernel one mapping each, and gives the top of the heap back once more
// than its trim threshold (128 KiB at start) is free there. It raises both as
// large blocks come and go (up to 32 MiB and 64 MiB), but only after the
// first large mapped block is freed, and a process that creates and drops a
// batch of ~100 KB byte strings at a time may never get there: every batch
// then pays a page fault for each 4 KiB it writes, often more than the work
// itself. set_malloc_thresholds lets tfrx start at the settled values.
#include "allocator.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tfrx {

bool malloc_tunable() {
#if defined(__GLIBC__)
  return true;
#else
  return false;
#endif
}

bool set_malloc_thresholds(size_t mmap_threshold, size_t trim_threshold) {
#if defined(__GLIBC__)
  if (mmap_threshold > (size_t{1} << 30) || trim_threshold > (size_t{1} << 30)) return false;
  // mallopt takes an int and returns 1 on success; glibc rejects an mmap
  // threshold above half its largest heap.
  const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, static_cast<int>(mmap_threshold)) == 1;
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, static_cast<int>(trim_threshold)) == 1;
  return mmap_ok && trim_ok;
#else
  (void)mmap_threshold;
  (void)trim_threshold;
  return false;
#endif
}

}  // namespace tfrx
