// Copies of large blocks that bypass the cache on the way out.
//
// A plain memcpy into memory that is not in cache first reads every
// destination line (read for ownership), so a copy between buffers far larger
// than the cache moves three bytes over the memory bus per byte copied.
// Non-temporal stores write whole lines without reading them: two bytes per
// byte. Worth it only when the destination will not be read from cache soon
// anyway, that is when the whole copy is much larger than the cache.
#pragma once
#include <cstddef>

namespace tfrx {

// memcpy(dst, src, n) with non-temporal stores where the CPU has them (x86-64
// with AVX2, chosen at run time); a plain memcpy elsewhere. Ends with a store
// fence, so the bytes are visible to other threads once it returns.
void copy_streaming(void* dst, const void* src, size_t n);

}  // namespace tfrx
