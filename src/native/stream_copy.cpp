#include "stream_copy.h"

#include <cstdint>
#include <cstring>

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define TFRX_STREAM_AVX2 1
#include <immintrin.h>
#else
#define TFRX_STREAM_AVX2 0
#endif

namespace tfrx {

namespace {

#if TFRX_STREAM_AVX2
// How far ahead of the loads the source is prefetched. The hardware
// prefetchers stop at each 4 KiB page and run only a few lines ahead; a
// non-temporal prefetch this far ahead keeps the next page's lines on the
// way without pushing other data out of L2 (about 15% faster copies of
// 100 KB - 1 MB values out of memory on a 2-core AMD EPYC VM than no
// prefetch, and than a 512 B or 2 KiB distance). A prefetch past the end of
// the source is harmless: it never faults.
constexpr size_t kPrefetchAhead = 1024;

// Whole 64-byte destination lines per iteration: a line written in parts by
// non-temporal stores costs a partial write, far slower than a plain store.
__attribute__((target("avx2"))) void copy_avx2_stream(uint8_t* d, const uint8_t* s, size_t n) {
  size_t head = (64 - (reinterpret_cast<uintptr_t>(d) & 63)) & 63;
  if (head > n) head = n;
  std::memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    const uintptr_t ahead = reinterpret_cast<uintptr_t>(s + i) + kPrefetchAhead;
    _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_NTA);
    _mm_prefetch(reinterpret_cast<const char*>(ahead + 64), _MM_HINT_NTA);
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 32));
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 64));
    const __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 96));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 32), b);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 64), c);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 96), e);
  }
  std::memcpy(d + i, s + i, n - i);
  _mm_sfence();
}

bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

}  // namespace

void copy_streaming(void* dst, const void* src, size_t n) {
#if TFRX_STREAM_AVX2
  if (n >= 4096 && have_avx2()) {
    copy_avx2_stream(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), n);
    return;
  }
#endif
  if (n) std::memcpy(dst, src, n);
}

}  // namespace tfrx
