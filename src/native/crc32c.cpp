#include "crc32c.h"

#include <cstring>

#if defined(__x86_64__) || defined(_M_X64)
#include <nmmintrin.h>
#define TFRX_X86 1
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#include <asm/hwcap.h>
#define TFRX_ARM64 1
#endif

namespace tfrx {
namespace {

// Slicing-by-8 tables for the reflected polynomial 0x82F63B78.
struct Tables {
  uint32_t t[8][256];
  Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
};
const Tables& tables() {
  static const Tables tbl;
  return tbl;
}

#if TFRX_X86
// Three independent crc32q streams hide the instruction's 3-cycle latency
// (one issues per cycle); the partial CRCs are joined by multiplying by
// x^(8*block) mod P, done with per-byte tables of that linear operator
// (the "crc32c_shift" technique of Mark Adler's crc32c.c).
// Three block sizes: 8 KiB for long buffers, 256 B and 64 B for the rest,
// so that a record of a few hundred bytes (the usual TFRecord Example) is
// interleaved too: its CRC is checked once per read, in every reader.
constexpr size_t kLongBlock = 8192;
constexpr size_t kShortBlock = 256;
constexpr size_t kTinyBlock = 64;

__attribute__((target("sse4.2"))) uint32_t raw_zeros_sse42(uint32_t reg, size_t nbytes) {
  uint64_t c = reg;
  for (size_t i = 0; i < nbytes / 8; ++i) c = _mm_crc32_u64(c, 0);
  return static_cast<uint32_t>(c);
}

// Table of the operator "advance the raw CRC register over `block` zero bytes".
struct ShiftTable {
  uint32_t t[4][256];
  explicit ShiftTable(size_t block) {
    uint32_t basis[32];
    for (int b = 0; b < 32; ++b) basis[b] = raw_zeros_sse42(1u << b, block);
    for (int k = 0; k < 4; ++k)
      for (uint32_t v = 0; v < 256; ++v) {
        uint32_t r = 0;
        for (int b = 0; b < 8; ++b)
          if (v & (1u << b)) r ^= basis[8 * k + b];
        t[k][v] = r;
      }
  }
  uint32_t shift(uint32_t crc) const {
    return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^ t[3][crc >> 24];
  }
};

const ShiftTable& long_shift() {
  static const ShiftTable tbl(kLongBlock);
  return tbl;
}
const ShiftTable& short_shift() {
  static const ShiftTable tbl(kShortBlock);
  return tbl;
}
const ShiftTable& tiny_shift() {
  static const ShiftTable tbl(kTinyBlock);
  return tbl;
}

__attribute__((target("sse4.2"))) inline uint64_t crc_words(uint64_t c, const uint8_t* p, size_t n) {
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
  }
  return c;
}

template <size_t kBlock>
__attribute__((target("sse4.2"))) inline uint64_t crc_three_way(uint64_t c0, const uint8_t* p,
                                                               const ShiftTable& shift) {
  uint64_t c1 = 0, c2 = 0;
  for (size_t i = 0; i < kBlock; i += 8) {
    uint64_t v0, v1, v2;
    std::memcpy(&v0, p + i, 8);
    std::memcpy(&v1, p + kBlock + i, 8);
    std::memcpy(&v2, p + 2 * kBlock + i, 8);
    c0 = _mm_crc32_u64(c0, v0);
    c1 = _mm_crc32_u64(c1, v1);
    c2 = _mm_crc32_u64(c2, v2);
  }
  uint32_t r = shift.shift(static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
  return shift.shift(r) ^ static_cast<uint32_t>(c2);
}

// Every whole run of 3 x kBlock bytes at *p, three streams at a time; *p and *n move past them.
template <size_t kBlock>
__attribute__((target("sse4.2"))) inline uint64_t crc_tier(uint64_t c, const uint8_t** p, size_t* n,
                                                          const ShiftTable& shift) {
  for (; *n >= 3 * kBlock; *p += 3 * kBlock, *n -= 3 * kBlock) c = crc_three_way<kBlock>(c, *p, shift);
  return c;
}

__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t crc, const uint8_t* p, size_t n) {
  uint64_t c = ~crc;
  while (n && (reinterpret_cast<uintptr_t>(p) & 7)) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  // Each tier's shift table is built on first use only.
  if (n >= 3 * kLongBlock) c = crc_tier<kLongBlock>(c, &p, &n, long_shift());
  if (n >= 3 * kShortBlock) c = crc_tier<kShortBlock>(c, &p, &n, short_shift());
  if (n >= 3 * kTinyBlock) c = crc_tier<kTinyBlock>(c, &p, &n, tiny_shift());
  c = crc_words(c, p, n);
  p += n & ~size_t{7};
  n &= 7;
  while (n--) c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
  return ~static_cast<uint32_t>(c);
}
#endif

#if TFRX_ARM64
__attribute__((target("+crc"))) uint32_t crc32c_armv8(uint32_t crc, const uint8_t* p, size_t n) {
  uint32_t c = ~crc;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = __builtin_aarch64_crc32cx(c, v);
    p += 8;
    n -= 8;
  }
  while (n--) c = __builtin_aarch64_crc32cb(c, *p++);
  return ~c;
}
#endif

using CrcFn = uint32_t (*)(uint32_t, const uint8_t*, size_t);

struct Dispatch {
  CrcFn fn = crc32c_extend_portable;
  const char* name = "portable";
  Dispatch() {
#if TFRX_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) {
      fn = crc32c_sse42;
      name = "sse4.2";
    }
#endif
#if TFRX_ARM64
    if (getauxval(AT_HWCAP) & HWCAP_CRC32) {
      fn = crc32c_armv8;
      name = "armv8-crc";
    }
#endif
  }
};
const Dispatch& dispatch() {
  static const Dispatch d;
  return d;
}

}  // namespace

uint32_t crc32c_extend_portable(uint32_t crc, const uint8_t* p, size_t n) {
  const auto& t = tables().t;
  uint32_t c = ~crc;
  while (n >= 8) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= c;  // little-endian hosts; big-endian hosts are not supported by the build
    c = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
        t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xff];
  return ~c;
}

uint32_t crc32c_extend(uint32_t crc, const uint8_t* data, size_t n) {
  return dispatch().fn(crc, data, n);
}

const char* crc32c_backend() { return dispatch().name; }

}  // namespace tfrx
