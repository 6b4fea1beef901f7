// Spec-driven Example / SequenceExample parser (see parse.h).
//
// Messages walked here (tensorflow/core/example/{example,feature}.proto):
//   Example          { Features features = 1; }
//   SequenceExample  { Features context = 1; FeatureLists feature_lists = 2; }
//   Features         { map<string, Feature> feature = 1; }      entries {key = 1, value = 2}
//   FeatureLists     { map<string, FeatureList> feature_list = 1; }
//   FeatureList      { repeated Feature feature = 1; }
//   Feature          { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
//                                   Int64List int64_list = 3; } }
//   BytesList/FloatList/Int64List { repeated ... value = 1; }  numbers packed or not
// The bytes are read as TensorFlow's own parser reads them
// (tensorflow/core/util/example_proto_fast_parsing.cc: FastParseExample, its
// single-Example variant and FastParseSequenceExample), which is not how
// protobuf merges repeated fields; where the two differ, TensorFlow's rules
// are followed here, errors included:
//   - Records: the one-byte tags 0a (features / context) and 12 (feature
//     lists) open the maps; any other field is skipped (skip_extraneous).
//   - Lengths are read as 32-bit values, and one that runs past its
//     enclosing message reaches only to that message's end (Cursor::limit).
//   - Maps: every field must be an entry (0a); an entry is a key and a value
//     in either order in an Example, the key then the value in a
//     SequenceExample (read_entry_*).
//   - Which occurrence of a key counts (scan_map): in an Example, the last
//     non-empty one for dense features and the last one for the others
//     (parse_single_example: the last non-empty one for all), every
//     occurrence's first byte being checked; in a SequenceExample, the last.
//   - Features: the first byte says the kind, and only the list it opens is
//     read (read_example_list, read_sequence_feature).
// Every requested key records only the span of the occurrence that counts
// during the single walk over a record, and is decoded once after it.
#include "parse.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "wire.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define TFRX_PARSE_SSSE3 1
#include <immintrin.h>
#else
#define TFRX_PARSE_SSSE3 0
#endif

namespace tfrx {
namespace parse {

namespace {

using wire::Reader;

#if defined(__GNUC__)
#define TFRX_ALWAYS_INLINE inline __attribute__((always_inline))
#define TFRX_NOINLINE __attribute__((noinline))
#define TFRX_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define TFRX_ALWAYS_INLINE inline
#define TFRX_NOINLINE
#define TFRX_UNLIKELY(x) (x)
#endif

// Feature keys are short: hashing the length with the first and last (up to)
// eight bytes is enough to spread them; a collision only costs a probe.
TFRX_ALWAYS_INLINE uint64_t hash_key(const uint8_t* p, size_t n) {
  uint64_t a = 0, b = 0;
  if (n >= 8) {
    std::memcpy(&a, p, 8);
    std::memcpy(&b, p + n - 8, 8);
  } else if (n >= 4) {
    uint32_t x, y;
    std::memcpy(&x, p, 4);
    std::memcpy(&y, p + n - 4, 4);
    a = x;
    b = y;
  } else if (n > 0) {
    a = p[0] | (uint64_t{p[n / 2]} << 8) | (uint64_t{p[n - 1]} << 16);
  }
  uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ ((b + n) * 0xc2b2ae3d27d4eb4full);
  return h ^ (h >> 31);
}

// Both spans hold n bytes; every load stays inside them.
TFRX_ALWAYS_INLINE bool same_key(const uint8_t* a, const uint8_t* b, size_t n) {
  if (n >= 8) {
    uint64_t x0, y0, x1, y1;
    std::memcpy(&x0, a, 8);
    std::memcpy(&y0, b, 8);
    std::memcpy(&x1, a + n - 8, 8);
    std::memcpy(&y1, b + n - 8, 8);
    if (x0 != y0 || x1 != y1) return false;
    return n <= 16 || std::memcmp(a + 8, b + 8, n - 16) == 0;
  }
  if (n >= 4) {
    uint32_t x0, y0, x1, y1;
    std::memcpy(&x0, a, 4);
    std::memcpy(&y0, b, 4);
    std::memcpy(&x1, a + n - 4, 4);
    std::memcpy(&y1, b + n - 4, 4);
    return x0 == y0 && x1 == y1;
  }
  // n <= 3: bytes 0, n / 2 and n - 1 are all of them.
  return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
}

TFRX_NOINLINE bool varint_slow(const uint8_t** pp, const uint8_t* e, uint64_t* out) {
  Reader r(*pp, *pp, e);
  if (!wire::varint_lenient(r, out)) return false;
  *pp = r.pos;
  return true;
}

// A bounds-checked cursor over [p, e), reading varints as TensorFlow's
// parser (protobuf's CodedInputStream) does: up to 10 bytes, bits past 64
// dropped. The common one- and two-byte varints (tags, short lengths) are
// decoded inline, longer ones by wire::varint_lenient.
struct Cursor {
  const uint8_t* p;
  const uint8_t* e;

  TFRX_ALWAYS_INLINE bool done() const { return p >= e; }

  TFRX_ALWAYS_INLINE bool varint(uint64_t* out) {
    if (e - p >= 2) {
      uint64_t b0 = p[0];
      if (b0 < 0x80) {
        *out = b0;
        p += 1;
        return true;
      }
      uint64_t b1 = p[1];
      if (b1 < 0x80) {
        *out = (b0 & 0x7f) | (b1 << 7);
        p += 2;
        return true;
      }
    }
    return varint_slow(&p, e, out);
  }

  // A length or tag read as ReadVarint32 does: the low 32 bits of the varint.
  TFRX_ALWAYS_INLINE bool varint32(uint32_t* out) {
    uint64_t v;
    if (!varint(&v)) return false;
    *out = static_cast<uint32_t>(v);
    return true;
  }

  // Where a message of `len` bytes starting here ends. A length that runs
  // past the enclosing message is cut at its end: CodedInputStream::PushLimit
  // keeps the enclosing limit then, and TensorFlow parses up to it.
  TFRX_ALWAYS_INLINE const uint8_t* limit(uint32_t len) const {
    return len <= static_cast<size_t>(e - p) ? p + len : e;
  }
};

// Records of a batch may lie anywhere in memory (a shuffled batch's do), where
// the hardware prefetcher cannot guess the next one: the first bytes of the
// record kPrefetchAhead places on are asked for while this one is parsed.
constexpr int64_t kPrefetchAhead = 2;
constexpr size_t kPrefetchBytes = 1024;

inline void prefetch_record(const Span& r) {
#if defined(__GNUC__) || defined(__clang__)
  const size_t n = r.size < kPrefetchBytes ? r.size : kPrefetchBytes;
  for (size_t off = 0; off < n; off += 64) __builtin_prefetch(r.data + off);
#else
  (void)r;
#endif
}

// Number of varints in a packed run, or -1 when the run does not end on a
// varint boundary. Counting terminator bytes (high bit clear) vectorizes.
inline int64_t count_varints(const uint8_t* p, size_t n) {
  if (n == 0) return 0;
  if (p[n - 1] >= 0x80) return -1;
  int64_t count = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    // The terminator flags sit in bit 7 of each byte: gather them into the
    // top byte by one multiplication (no popcount instruction needed).
    count += static_cast<int64_t>((((~w & 0x8080808080808080ull) >> 7) * 0x0101010101010101ull) >> 56);
  }
  for (; i < n; ++i) count += p[i] < 0x80;
  return count;
}

#if TFRX_PARSE_SSSE3
// Packed varints with SSSE3, chosen at run time. Each step loads 16 bytes;
// their continuation bits (one movemask) say where the varints of the
// first 12 bytes end, and a table indexed by those 12 bits gives a byte
// shuffle that moves each of up to four varints of at most 4 bytes into
// its own 32-bit lane (Masked VByte, Plaisance, Kurz and Lemire 2015).
// The 7-bit groups are then packed in all lanes at once and widened to
// int64. Sixteen one-byte varints in a row are widened without the table.
struct VarintShuffle {
  alignas(16) uint8_t shuffle[16];
  uint8_t count;     // varints decoded (0: the first is longer than 4 bytes)
  uint8_t consumed;  // their bytes
};

const VarintShuffle* varint_shuffles() {
  static const VarintShuffle* table = [] {
    auto* t = new VarintShuffle[4096];
    for (unsigned mask = 0; mask < 4096; ++mask) {
      VarintShuffle& v = t[mask];
      std::memset(v.shuffle, 0x80, 16);  // 0x80: the shuffle writes a zero byte
      unsigned pos = 0, count = 0;
      while (count < 4) {
        unsigned end = pos;
        while (end < 12 && (mask >> end) & 1) ++end;
        if (end >= 12 || end - pos >= 4) break;  // unfinished in the window, or over 4 bytes
        for (unsigned k = pos; k <= end; ++k) v.shuffle[4 * count + (k - pos)] = static_cast<uint8_t>(k);
        ++count;
        pos = end + 1;
      }
      v.count = static_cast<uint8_t>(count);
      v.consumed = static_cast<uint8_t>(pos);
    }
    return t;
  }();
  return table;
}

const bool kHasSsse3 = [] {
  __builtin_cpu_init();  // may run before libgcc's own constructor has
  return __builtin_cpu_supports("ssse3") != 0;
}();

// Decodes from p while 16 bytes of the run remain and 16 values fit before
// out_end; returns where it stopped (the scalar loop finishes the run).
__attribute__((target("ssse3"), noinline)) const uint8_t* decode_varints_ssse3(const uint8_t* p, const uint8_t* e,
                                                                               int64_t** out_at, int64_t* out_end) {
  const VarintShuffle* table = varint_shuffles();
  int64_t* out = *out_at;
  const __m128i zero = _mm_setzero_si128();
  const __m128i low7 = _mm_set1_epi8(0x7f);
  const __m128i low7_16 = _mm_set1_epi16(0x007f);
  const __m128i high7_16 = _mm_set1_epi16(0x3f80);
  const __m128i join14 = _mm_set1_epi32(0x40000001);  // 16-bit lanes: x0 * 1 + x1 * 2^14
  while (e - p >= 16 && out_end - out >= 16) {
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(w));
    if (mask == 0) {
      const __m128i lo = _mm_unpacklo_epi8(w, zero), hi = _mm_unpackhi_epi8(w, zero);
      const __m128i q0 = _mm_unpacklo_epi16(lo, zero), q1 = _mm_unpackhi_epi16(lo, zero);
      const __m128i q2 = _mm_unpacklo_epi16(hi, zero), q3 = _mm_unpackhi_epi16(hi, zero);
      __m128i* o = reinterpret_cast<__m128i*>(out);
      _mm_storeu_si128(o + 0, _mm_unpacklo_epi32(q0, zero));
      _mm_storeu_si128(o + 1, _mm_unpackhi_epi32(q0, zero));
      _mm_storeu_si128(o + 2, _mm_unpacklo_epi32(q1, zero));
      _mm_storeu_si128(o + 3, _mm_unpackhi_epi32(q1, zero));
      _mm_storeu_si128(o + 4, _mm_unpacklo_epi32(q2, zero));
      _mm_storeu_si128(o + 5, _mm_unpackhi_epi32(q2, zero));
      _mm_storeu_si128(o + 6, _mm_unpacklo_epi32(q3, zero));
      _mm_storeu_si128(o + 7, _mm_unpackhi_epi32(q3, zero));
      out += 16;
      p += 16;
      continue;
    }
    const VarintShuffle& v = table[mask & 0xfff];
    if (v.count == 0) break;
    __m128i x = _mm_and_si128(_mm_shuffle_epi8(w, _mm_load_si128(reinterpret_cast<const __m128i*>(v.shuffle))), low7);
    x = _mm_or_si128(_mm_and_si128(x, low7_16), _mm_and_si128(_mm_srli_epi16(x, 1), high7_16));
    x = _mm_madd_epi16(x, join14);  // 32-bit lanes: 28-bit values
    __m128i* o = reinterpret_cast<__m128i*>(out);
    _mm_storeu_si128(o + 0, _mm_unpacklo_epi32(x, zero));
    _mm_storeu_si128(o + 1, _mm_unpackhi_epi32(x, zero));
    out += v.count;
    p += v.consumed;
  }
  *out_at = out;
  return p;
}
#endif

// Decodes the varints of a run known to end on a terminator byte (so no
// varint reads past the run). Returns false for a varint over 10 bytes.
// While 8 bytes remain, varints of up to 8 bytes are decoded without
// branching on their length: the first clear high bit ends the varint, and
// three shift-and-mask steps pack its 7-bit groups together. Eight one-byte
// varints in a row (masks, small ids) are widened at once.
//
// `readable` (>= e) bounds the memory that may be loaded: the 8-byte window
// may extend past the run into the rest of the record, since the terminator
// that ends the run's last varint is always found first.
//
// At most `out_end - out` values are written: decoding stops before the
// varint that would not fit, and *stop tells where (e when all fit).
// Returns the end of the values written, or null for a varint over 10 bytes.
// Without kBounded the caller guarantees room for every varint of the run.
template <bool kBounded>
inline int64_t* decode_varints(const uint8_t* p, const uint8_t* e, const uint8_t* readable, int64_t* out,
                               int64_t* out_end, const uint8_t** stop) {
  constexpr uint64_t kHigh = 0x8080808080808080ull;
#if TFRX_PARSE_SSSE3
  if (e - p >= 16 && kHasSsse3 && (!kBounded || out_end - out >= 16)) p = decode_varints_ssse3(p, e, &out, out_end);
#endif
  // Windows of 8 bytes start before `limit` (inside the run, within `readable`).
  const uint8_t* limit = p;
  if (readable - p >= 8) limit = e < readable - 7 ? e : readable - 7;
  while (p < limit && (!kBounded || out_end - out >= 8)) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    uint64_t stops = ~w & kHigh;
    if (stops == kHigh && e - p >= 8) {
      out[0] = p[0], out[1] = p[1], out[2] = p[2], out[3] = p[3];
      out[4] = p[4], out[5] = p[5], out[6] = p[6], out[7] = p[7];
      out += 8;
      p += 8;
      continue;
    }
    if (stops == 0) break;  // a varint longer than 8 bytes: finish bytewise
    const unsigned n1 = (static_cast<unsigned>(__builtin_ctzll(stops)) >> 3) + 1;  // its bytes
    if (n1 <= 4 && static_cast<size_t>(e - p) > n1) {
      // Two varints of up to 4 bytes each: the second one starts inside the
      // run (so it ends there too, on or before the run's last terminator)
      // and inside the window. Each goes into one 32-bit lane; the two
      // packing steps below work on both lanes at once.
      const uint64_t stops2 = stops >> (8 * n1);
      if (stops2 & 0x80808080ull) {
        const unsigned n2 = (static_cast<unsigned>(__builtin_ctzll(stops2)) >> 3) + 1;
        uint64_t x = (w & (stops ^ (stops - 1))) | (((w >> (8 * n1)) & (stops2 ^ (stops2 - 1))) << 32);
        x &= 0x7f7f7f7f7f7f7f7full;
        x = ((x & 0x7f007f007f007f00ull) >> 1) | (x & 0x007f007f007f007full);
        x = ((x & 0x3fff00003fff0000ull) >> 2) | (x & 0x00003fff00003fffull);
        out[0] = static_cast<int64_t>(x & 0xffffffffull);
        out[1] = static_cast<int64_t>(x >> 32);
        out += 2;
        p += n1 + n2;
        continue;
      }
    }
    uint64_t x = w & (stops ^ (stops - 1)) & 0x7f7f7f7f7f7f7f7full;
    x = ((x & 0x7f007f007f007f00ull) >> 1) | (x & 0x007f007f007f007full);
    x = ((x & 0x3fff00003fff0000ull) >> 2) | (x & 0x00003fff00003fffull);
    x = ((x & 0x0fffffff00000000ull) >> 4) | (x & 0x000000000fffffffull);
    *out++ = static_cast<int64_t>(x);
    p += n1;
  }
  while (p < e) {
    if (kBounded && out == out_end) break;
    uint64_t b = *p++;
    if (b < 0x80) {
      *out++ = static_cast<int64_t>(b);
      continue;
    }
    uint64_t v = b & 0x7f;
    int shift = 7;
    while (true) {
      b = *p++;
      v |= (b & 0x7f) << shift;
      if (b < 0x80) break;
      shift += 7;
      if (shift > 63) return nullptr;
    }
    *out++ = static_cast<int64_t>(v);
  }
  *stop = p;
  return out;
}

// How TensorFlow's parser reads a Feature (tensorflow/core/util/
// example_proto_fast_parsing.cc), which is not how protobuf merges one:
// the Feature's first byte alone says its kind (0a bytes, 12 float, 1a
// int64), only the list that byte opens is read, and whatever follows it in
// the Feature is ignored. Within the list the first field decides: a packed
// run (0a) is read and the rest of the list ignored; otherwise every field
// must be an unpacked value (08 int64, 0d float), and any other field is an
// error. Lengths that run past the enclosing message are cut at its end
// (Cursor::limit); a bytes value must fit.
enum ListStatus { kListOk = 0, kListKind = 1, kListBad = 2 };

constexpr uint8_t kind_tag(Kind kind) { return static_cast<uint8_t>(kind << 3 | 2); }

// Whether a Feature's first byte opens one of the three lists (0a, 12, 1a).
TFRX_ALWAYS_INLINE bool opens_list(Span feature) {
  if (feature.size == 0) return false;
  const unsigned x = feature.data[0] - 0x0au;
  return x <= 0x10 && (x & 7) == 0;
}

// Unpacked values: every field of [c.p, end) is `tag` and one value.
// On failure c.p is left at the field that failed.
template <typename Sink>
TFRX_ALWAYS_INLINE bool read_unpacked(Kind kind, Cursor& c, const uint8_t* end, Sink& sink) {
  Cursor v{c.p, end};
  const uint8_t tag = kind == kInt64 ? 0x08 : 0x0d;
  while (v.p < end) {
    c.p = v.p;
    if (*v.p != tag) return false;
    ++v.p;
    if (kind == kInt64) {
      uint64_t x;
      if (!v.varint(&x)) return false;
      sink.add_int64(static_cast<int64_t>(x));
    } else {
      if (end - v.p < 4) return false;
      sink.add_float_bytes(v.p, 1);
      v.p += 4;
    }
  }
  c.p = v.p;
  return true;
}

// The values of a BytesList whose fields fill [c.p, end). On failure c.p
// is left at the field that failed.
template <typename Sink>
TFRX_ALWAYS_INLINE bool read_bytes_values(Cursor& c, const uint8_t* end, Sink& sink) {
  Cursor v{c.p, end};
  while (v.p < end) {
    uint32_t n;
    c.p = v.p;
    if (*v.p != 0x0a) return false;
    ++v.p;
    if (!v.varint32(&n) || n > static_cast<size_t>(end - v.p)) return false;
    sink.add_bytes(Span{v.p, n});
    v.p += n;
  }
  c.p = v.p;
  return true;
}

// An Example's Feature (tf.io.parse_example): `c` starts after the
// Feature's first byte, which the map walk has checked opens a list of
// `kind`. A packed float run counts floor(length / 4) values, its last
// length % 4 bytes ignored, and must hold those bytes. *bad is set on errors.
template <typename Sink>
TFRX_ALWAYS_INLINE ListStatus read_example_list(Kind kind, Cursor c, const uint8_t* readable, Sink& sink,
                                                const uint8_t** bad) {
  uint32_t len;
  if (!c.varint32(&len)) {
    *bad = c.p;
    return kListBad;
  }
  const uint8_t* const end = c.limit(len);
  if (c.p == end) return kListOk;
  if (kind == kBytes) {
    if (read_bytes_values(c, end, sink)) return kListOk;
  } else if (*c.p == 0x0a) {
    Cursor run{c.p + 1, end};
    uint32_t n;
    if (run.varint32(&n)) {
      if (kind == kInt64) {
        const uint8_t* const run_end = run.limit(n);
        if (sink.add_packed_varints(run.p, static_cast<size_t>(run_end - run.p), readable)) return kListOk;
      } else if (n / 4 <= static_cast<size_t>(end - run.p) / 4) {
        sink.add_float_bytes(run.p, n / 4);
        return kListOk;
      }
    }
    c.p = run.p;
  } else if (read_unpacked(kind, c, end, sink)) {
    return kListOk;
  }
  *bad = c.p;
  return kListBad;
}

// A Feature as TensorFlow's SequenceExample parser reads it, context and
// feature-list steps alike: its first byte must be `kind`'s tag (else a kind
// mismatch), a list of length 0 has no values, a longer one must open with
// a field (packed or unpacked; bytes lists excepted), and a packed float run
// must be a whole number of floats. `c` is left where TensorFlow's stream
// stands after the Feature (after the packed run, not the list, when the
// list holds one), which matters between the steps of a feature list.
template <typename Sink>
TFRX_ALWAYS_INLINE ListStatus read_sequence_feature(Kind kind, Cursor& c, const uint8_t* readable, Sink& sink,
                                                    const uint8_t** bad) {
  if (c.p >= c.e) {
    *bad = c.p;
    return kListBad;
  }
  if (*c.p != kind_tag(kind)) {
    *bad = c.p;
    return kListKind;
  }
  ++c.p;
  uint32_t len;
  if (!c.varint32(&len)) {
    *bad = c.p;
    return kListBad;
  }
  if (len == 0) return kListOk;
  const uint8_t* const end = c.limit(len);
  if (kind == kBytes) {
    if (read_bytes_values(c, end, sink)) return kListOk;
  } else if (c.p < end && *c.p == 0x0a) {
    Cursor run{c.p + 1, end};
    uint32_t n;
    if (run.varint32(&n)) {
      const uint8_t* const run_end = run.limit(n);
      const size_t m = static_cast<size_t>(run_end - run.p);
      if (kind == kInt64 ? sink.add_packed_varints(run.p, m, readable) : m % 4 == 0) {
        if (kind == kFloat) sink.add_float_bytes(run.p, m / 4);
        c.p = run_end;
        return kListOk;
      }
    }
    c.p = run.p;
  } else if (c.p < end && read_unpacked(kind, c, end, sink)) {
    return kListOk;
  }
  *bad = c.p;
  return kListBad;
}

// Writes up to `capacity` values into a dense row and counts all of them.
template <typename T>
struct DenseSink {
  T* out;
  int64_t capacity;
  int64_t count = 0;
  void add_int64(int64_t x) {
    if constexpr (std::is_same_v<T, int64_t>) {
      if (count < capacity) out[count] = x;
    }
    ++count;
  }
  bool add_packed_varints(const uint8_t* p, size_t n, const uint8_t* readable) {
    if constexpr (std::is_same_v<T, int64_t>) {
      // Decode straight into the row while it has room; count what is left
      // only when the row overflows (an error the caller reports).
      if (n == 0) return true;
      if (p[n - 1] >= 0x80) return false;  // the run does not end on a varint boundary
      if (count < capacity) {
        const uint8_t* stop;
        int64_t* start = out + count;
        int64_t* end = decode_varints<true>(p, p + n, readable, start, out + capacity, &stop);
        if (end != nullptr) {
          count += end - start;
          if (stop != p + n) count += count_varints(stop, static_cast<size_t>(p + n - stop));
          return true;
        }
        // A varint over 10 bytes: malformed, unless the row overflows anyway.
        const int64_t k = count_varints(p, n);
        if (count + k <= capacity) return false;
        count += k;
        return true;
      }
    }
    int64_t k = count_varints(p, n);
    if (k < 0) return false;
    count += k;
    return true;
  }
  void add_float_bytes(const uint8_t* p, size_t n) {
    if constexpr (std::is_same_v<T, float>) {
      int64_t room = capacity - count;
      if (room > 0) std::memcpy(out + count, p, 4 * std::min<int64_t>(room, static_cast<int64_t>(n)));
    }
    count += static_cast<int64_t>(n);
  }
  void add_bytes(Span s) {
    if constexpr (std::is_same_v<T, Span>) {
      if (count < capacity) out[count] = s;
    }
    ++count;
  }
};

struct VarSink {
  VarColumn* col;
  int64_t count = 0;
  void add_int64(int64_t x) {
    col->int64_values.push_back(x);
    ++count;
  }
  bool add_packed_varints(const uint8_t* p, size_t n, const uint8_t* readable) {
    // A run of n bytes holds at most n varints: reserve that many and give
    // back what the decoding did not use (no counting pass).
    if (n == 0) return true;
    if (p[n - 1] >= 0x80) return false;  // the run does not end on a varint boundary
    PodBuffer<int64_t>& values = col->int64_values;
    const size_t before = values.size();
    int64_t* start = values.grow(n);
    const uint8_t* stop;
    int64_t* end = decode_varints<false>(p, p + n, readable, start, start + n, &stop);
    if (end == nullptr) return false;
    values.truncate(before + static_cast<size_t>(end - start));
    count += end - start;
    return true;
  }
  void add_float_bytes(const uint8_t* p, size_t n) {
    float* out = col->float_values.grow(n);
    if (n <= 4) {  // short steps: no call into memcpy
      for (size_t i = 0; i < n; ++i) std::memcpy(out + i, p + 4 * i, 4);
    } else {
      std::memcpy(out, p, 4 * n);
    }
    count += static_cast<int64_t>(n);
  }
  void add_bytes(Span s) {
    col->bytes_values.push_back(s);
    ++count;
  }
};

// A map entry of an Example's Features as TensorFlow reads it: exactly two
// fields, each the key (0a) or the value (12), in either order, and nothing
// after them. A field given twice keeps its second value and leaves the
// other field empty (key "" or an empty Feature). [p, end) is the entry.
TFRX_NOINLINE bool read_entry_example(const uint8_t* p, const uint8_t* end, Span* key, Span* value,
                                      const uint8_t** bad) {
  Cursor c{p, end};
  *key = Span{nullptr, 0};
  *value = Span{nullptr, 0};
  for (int i = 0; i < 2; ++i) {
    uint32_t tag, n;
    if (c.done() || !c.varint32(&tag) || (tag != 0x0a && tag != 0x12) || !c.varint32(&n) ||
        n > static_cast<size_t>(end - c.p)) {
      *bad = c.p;
      return false;
    }
    (tag == 0x0a ? *key : *value) = Span{c.p, n};
    c.p += n;
  }
  if (c.p != end) {
    *bad = c.p;
    return false;
  }
  return true;
}

// A map entry of a SequenceExample's context or feature lists, which
// TensorFlow reads strictly: the key (0a), then the value (12), nothing else.
TFRX_NOINLINE bool read_entry_sequence(const uint8_t* p, const uint8_t* end, Span* key, Span* value,
                                       const uint8_t** bad) {
  Cursor c{p, end};
  uint32_t n;
  for (int i = 0; i < 2; ++i) {
    if (c.done() || *c.p != (i == 0 ? 0x0a : 0x12)) {
      *bad = c.p;
      return false;
    }
    ++c.p;
    if (!c.varint32(&n) || n > static_cast<size_t>(end - c.p)) {
      *bad = c.p;
      return false;
    }
    (i == 0 ? *key : *value) = Span{c.p, n};
    c.p += n;
  }
  if (c.p != end) {
    *bad = c.p;
    return false;
  }
  return true;
}

// Skips a top-level field other than the ones read (TensorFlow's
// SkipExtraneousTag): any tag, field 0 included; groups and wire types 6, 7
// are errors. A length-delimited field whose length runs past the record
// skips to its end, and one whose 32-bit length is negative as an int is
// not skipped at all (CodedInputStream::Skip refuses it without moving).
TFRX_NOINLINE bool skip_extraneous(Cursor& c) {
  uint64_t tag;
  if (!c.varint(&tag)) return false;
  switch (tag & 7) {
    case wire::kVarint: {
      uint64_t v;
      return c.varint(&v);
    }
    case wire::kFixed64:
      if (c.e - c.p < 8) return false;
      c.p += 8;
      return true;
    case wire::kFixed32:
      if (c.e - c.p < 4) return false;
      c.p += 4;
      return true;
    case wire::kLengthDelimited: {
      uint32_t n;
      if (!c.varint32(&n)) return false;
      if (static_cast<int32_t>(n) >= 0) c.p = c.limit(n);
      return true;
    }
    default:
      return false;
  }
}

// The steps of a FeatureList from `lr` on, as TensorFlow reads them: one
// stream of fields, each 0a and a length n. n = 0 is a step with no values;
// n = 1 an error; n = 2 must be the wanted kind's tag and a zero length (read
// on, not cut at the step); a longer step is a Feature of the wanted kind
// (read_sequence_feature), and the stream goes on from where that Feature's
// values end: whatever follows them inside the step is read as the list's
// next fields. Appends each step's values to `out` and counts the steps
// read in *steps; returns kOk or an ErrorCode, with *bad, *expected and *actual set
// as the error needs. (Out of line: the loop over steps of the usual
// layout, before it, is faster without it.)
TFRX_NOINLINE int read_steps(Kind kind, int64_t step_count, Cursor lr, const uint8_t* readable, VarColumn* out,
                             int64_t* steps, const uint8_t** bad, int64_t* expected, int64_t* actual) {
  auto kind_error = [&](const uint8_t* at) {
    *bad = at;
    const uint8_t tag = at < readable ? *at : 0;
    if (tag != 0x0a && tag != 0x12 && tag != 0x1a) return static_cast<int>(kMalformed);
    *expected = kind;
    *actual = tag >> 3;
    return static_cast<int>(kKindMismatch);
  };
  while (!lr.done()) {
    uint32_t n;
    if (*lr.p != 0x0a) {
      *bad = lr.p;
      return kMalformed;
    }
    ++lr.p;
    if (!lr.varint32(&n) || n == 1) {
      *bad = lr.p;
      return kMalformed;
    }
    VarSink sink{out};
    if (n > 2) {
      Cursor step{lr.p, lr.limit(n)};
      const ListStatus status = read_sequence_feature(kind, step, readable, sink, bad);
      if (status == kListKind) return kind_error(*bad);
      if (status != kListOk) return kMalformed;
      lr.p = step.p;
    } else if (n == 2) {
      uint32_t zero;
      if (lr.done()) {
        *bad = lr.p;
        return kMalformed;
      }
      if (*lr.p != kind_tag(kind)) return kind_error(lr.p);
      ++lr.p;
      if (!lr.varint32(&zero) || zero != 0) {
        *bad = lr.p;
        return kMalformed;
      }
    }
    if (step_count > 0 && sink.count != step_count) {
      *expected = step_count;
      *actual = sink.count;
      return kCountMismatch;
    }
    out->counts.push_back(sink.count);
    ++*steps;
  }
  return kOk;
}

struct Seen {
  std::vector<int64_t> stamp;  // the record in which the key was last seen
  std::vector<Span> span;      // its value there, unless...
  std::vector<int64_t> done;   // ...the record whose value was already written to the output
  explicit Seen(size_t n) : stamp(n, -1), span(n, Span{nullptr, 0}), done(n, -1) {}
};

// A dense feature laid out as writers emit it, its only field the list of
// the wanted kind, the list's only field one packed run (or one bytes
// value), lengths below 128:
//   kind-tag L | 0a L-2 | L-2 bytes
// is written to row `rec` of `values` when it holds exactly the values the
// column wants. Returns false, having perhaps written part of the row, for
// any other layout or count: the general path then decides (and reports).
TFRX_ALWAYS_INLINE bool write_dense_fast(Kind kind, int64_t n, Span f, int64_t rec, void* values,
                                         const uint8_t* readable) {
  const uint8_t* d = f.data;
  if (f.size < 4 || f.size >= 130) return false;
  uint32_t head;
  std::memcpy(&head, d, 4);
  const uint32_t want = ((kind << 3) | 2) | static_cast<uint32_t>(f.size - 2) << 8 | 0x0au << 16 |
                        static_cast<uint32_t>(f.size - 4) << 24;
  if (head != want) return false;  // (little-endian bytes: kind-tag, L, 0a, L-2)
  const uint8_t* payload = d + 4;
  const size_t m = f.size - 4;
  if (kind == kInt64) {
    int64_t* row = static_cast<int64_t*>(values) + rec * n;
    if (n == 1) {  // scalars of one or two varint bytes
      if (m == 1 && payload[0] < 0x80) {
        row[0] = payload[0];
        return true;
      }
      if (m == 2 && payload[0] >= 0x80 && payload[1] < 0x80) {
        row[0] = (payload[0] & 0x7f) | (int64_t{payload[1]} << 7);
        return true;
      }
    }
    DenseSink<int64_t> sink{row, n};
    return sink.add_packed_varints(payload, m, readable) && sink.count == n;
  }
  if (kind == kBytes) {
    if (n != 1) return false;
    static_cast<Span*>(values)[rec] = Span{payload, m};
    return true;
  }
  if (m % 4 != 0 || static_cast<int64_t>(m / 4) != n) return false;
  std::memcpy(static_cast<float*>(values) + rec * n, payload, m);
  return true;
}

}  // namespace

// The bytes 0a K key 12 that open a map entry of the usual layout after its
// 2-byte header, for keys of up to 13 bytes (len 0 for longer ones).
Parser::KeyTable::EntryPattern Parser::KeyTable::pattern_of(const uint8_t* key, size_t K) {
  EntryPattern pt;
  if (K + 3 > 16) return pt;
  uint8_t bytes[16] = {0}, care[16] = {0};
  bytes[0] = 0x0a;
  bytes[1] = static_cast<uint8_t>(K);
  if (K) std::memcpy(bytes + 2, key, K);
  bytes[2 + K] = 0x12;
  std::memset(care, 0xff, K + 3);
  std::memcpy(pt.word, bytes, 16);
  std::memcpy(pt.mask, care, 16);
  pt.len = static_cast<uint32_t>(K + 3);
  return pt;
}

inline bool Parser::KeyTable::matches(int32_t i, const uint8_t* p, size_t n) const {
  const Span& key = refs[static_cast<size_t>(i)];
  return key.size == n && same_key(key.data, p, n);
}

void Parser::KeyTable::build(const std::vector<const std::string*>& k) {
  keys = k;
  refs.clear();
  for (const std::string* key : keys) refs.push_back(Span{reinterpret_cast<const uint8_t*>(key->data()), key->size()});
  patterns.clear();
  for (const std::string* key : keys) patterns.push_back(pattern_of(reinterpret_cast<const uint8_t*>(key->data()), key->size()));
  size_t size = 16;
  while (size < 4 * keys.size()) size *= 2;
  slots.assign(size, -1);
  hashes.assign(size, 0);
  next.assign(keys.size(), -1);
  mask = size - 1;
  for (size_t i = keys.size(); i-- > 0;) {  // chains list columns in spec order
    const std::string& key = *keys[i];
    uint64_t hash = hash_key(reinterpret_cast<const uint8_t*>(key.data()), key.size());
    uint64_t h = hash & mask;
    while (slots[h] >= 0 && *keys[slots[h]] != key) h = (h + 1) & mask;
    if (slots[h] >= 0) next[i] = slots[h];
    slots[h] = static_cast<int32_t>(i);
    hashes[h] = hash;
  }
}

int32_t Parser::KeyTable::find(const uint8_t* p, size_t n) const {
  if (refs.empty()) return -1;
  const uint64_t hash = hash_key(p, n);
  uint64_t h = hash & mask;
  while (true) {
    int32_t i = slots[h];
    if (i < 0) return -1;
    if (hashes[h] == hash) {
      if (matches(i, p, n)) return i;
    }
    h = (h + 1) & mask;
  }
}

Parser::Parser(std::vector<ColumnSpec> columns, std::vector<SequenceColumnSpec> sequence_columns, bool sequence)
    : columns_(std::move(columns)), sequence_columns_(std::move(sequence_columns)), sequence_(sequence) {
  std::vector<const std::string*> keys;
  for (const auto& c : columns_) keys.push_back(&c.key);
  table_.build(keys);
  keys.clear();
  for (const auto& c : sequence_columns_) keys.push_back(&c.key);
  sequence_table_.build(keys);
}

// One call of parse_range, as named steps over the state they share. Per
// record: walk_record (one pass over the top-level fields, scan_map for each
// map), fill_features (the features not written during the walk), then
// fill_feature_lists (read_packed_steps for the usual numeric layout, then
// read_steps). The steps are inlined into the record loop, as the one
// function they replace was.
class Parser::RangeParse {
  using Pattern = Parser::KeyTable::EntryPattern;

 public:
  RangeParse(const Parser& parser, const std::vector<DenseTarget>& dense, std::vector<VarColumn>* var,
             std::vector<VarColumn>* seq_var, Error* error)
      : columns_(parser.columns_),
        sequence_columns_(parser.sequence_columns_),
        table_(parser.table_),
        sequence_table_(parser.sequence_table_),
        sequence_(parser.sequence_),
        dense_(dense),
        var_(var),
        seq_var_(seq_var),
        error_(error),
        seen_(columns_.size()),
        seen_lists_(sequence_columns_.size()),
        // Records of one batch usually list their keys in the same order: the
        // column found at each entry position is tried first for the next record,
        // which costs one comparison instead of a hash and a probe.
        // (Fixed size: entries past it are looked up every time.)
        guess_(std::max<size_t>(64, 2 * columns_.size()), -1),
        guess_lists_(std::max<size_t>(64, 2 * sequence_columns_.size()), -1),
        // A key at an entry position that no column wants, as the previous
        // record had it there: the next record skips that entry after the
        // same one comparison, without hashing its key.
        misses_(guess_.size()),
        misses_lists_(guess_lists_.size()),
        fast_(columns_.size()) {
    for (size_t c = 0; c < columns_.size(); ++c) {
      const ColumnSpec& col = columns_[c];
      fast_[c] = FastDense{col.dense ? dense[c].values : nullptr, col.count, col.kind, col.dense && table_.next[c] < 0,
                           !sequence_ && (col.dense || col.has_default)};
    }
  }

  bool parse(const Span* records, int64_t begin, int64_t end) {
    for (int64_t rec = begin; rec < end; ++rec) {
      const Span record = records[rec];
      const uint8_t* const readable = record.data + record.size;  // loads may reach this far
      if (rec + kPrefetchAhead < end) prefetch_record(records[rec + kPrefetchAhead]);
      bad_ = nullptr;
      done_count_ = 0;
      bad_column_ = -1;
      if (!walk_record(rec, record, readable)) return false;
      if (!fill_features(rec, record, readable)) return false;
      if (!fill_feature_lists(rec, record, readable)) return false;
    }
    return true;
  }

 private:
  // From `entry` on, the run of entries whose keys no column wants, as the
  // previous record had them at the same positions (`misses`), each skipped by
  // its length after one masked comparison of its key. Returns where the first
  // other entry starts and sets *entry to its position. Kept apart from the map
  // walk so that this loop, which a projection of few features spends most of
  // its time in, keeps its few values in registers.
  static TFRX_NOINLINE const uint8_t* skip_misses(const uint8_t* p, const uint8_t* e, const int32_t* guesses,
                                           const Parser::KeyTable::EntryPattern* misses, size_t cap, size_t* entry) {
    size_t i = *entry;
    while (i < cap && guesses[i] < 0 && e - p >= 18 && p[0] == 0x0a) {
      const Parser::KeyTable::EntryPattern& pt = misses[i];
      const unsigned L = p[1];
      const unsigned K = pt.len - 3;
      uint64_t w0, w1;
      std::memcpy(&w0, p + 2, 8);
      std::memcpy(&w1, p + 10, 8);
      if (L >= 0x80 || pt.len == 0 || L + 2 > static_cast<size_t>(e - p) || ((w0 & pt.mask[0]) ^ pt.word[0]) != 0 ||
          ((w1 & pt.mask[1]) ^ pt.word[1]) != 0 || K + 4 > L || p[5 + K] != L - K - 4)
        break;
      p += 2 + L;
      ++i;
    }
    *entry = i;
    return e - p < 18 ? skip_tail_misses(p, e, guesses, misses, cap, entry) : p;
  }

  // The map's last entries, too short for skip_misses' 16-byte loads (a record's last feature is often an
  // int64 like "label": 16 bytes in all), compared byte by byte instead of being looked up again.
  static TFRX_NOINLINE const uint8_t* skip_tail_misses(const uint8_t* p, const uint8_t* e, const int32_t* guesses,
                                                       const Parser::KeyTable::EntryPattern* misses, size_t cap,
                                                       size_t* entry) {
    size_t i = *entry;
    while (i < cap && guesses[i] < 0 && e - p >= 2 && tail_miss(p, e, misses[i])) {
      p += 2 + p[1];
      ++i;
    }
    *entry = i;
    return p;
  }

  // Whether the entry at p, ending before e, is of the usual layout with the key of `pt` (a whole entry:
  // its pattern's bytes lie inside it).
  static bool tail_miss(const uint8_t* p, const uint8_t* e, const Parser::KeyTable::EntryPattern& pt) {
    const unsigned L = p[1];
    if (p[0] != 0x0a || L >= 0x80 || pt.len == 0 || L + 2 > static_cast<size_t>(e - p)) return false;
    const unsigned K = pt.len - 3;
    if (K + 4 > L || p[5 + K] != L - K - 4) return false;
    uint8_t pattern[16];
    std::memcpy(pattern, pt.word, 16);
    return same_key(p + 2, pattern, pt.len);
  }

  // What the walk needs to write a dense feature straight to its row,
  // packed together: the column's spec lives in a larger struct.
  struct FastDense {
    void* values;
    int64_t count;
    Kind kind;
    bool eligible;    // dense, and the only column with its key
    bool skip_empty;  // in an Example: dense (fixed or variable length)
  };

  bool fail(int64_t rec, Span record, int code, int column, bool in_seq, int64_t expected, int64_t actual,
            int64_t step) {
    error_->code = code;
    error_->record = rec;
    error_->column = column;
    error_->in_sequence = in_seq;
    error_->expected = expected;
    error_->actual = actual;
    error_->step = step;
    error_->offset = bad_ ? static_cast<int64_t>(bad_ - record.data) : 0;
    return false;
  }

  // One walk over the record's top-level fields. Only the one-byte tags
  // 0a (features, or context) and 12 (a SequenceExample's feature lists)
  // open a map, as TensorFlow's parser reads them; any other field is
  // skipped, even one that protobuf would read as one of these.
  TFRX_ALWAYS_INLINE bool walk_record(int64_t rec, Span record, const uint8_t* readable) {
    Cursor r{record.data, readable};
    while (!r.done()) {
      const uint8_t tag = *r.p;
      if (tag == 0x0a || (sequence_ && tag == 0x12)) {
        ++r.p;
        uint32_t n;
        if (!r.varint32(&n)) {
          bad_ = r.p;
          return fail(rec, record, kMalformed, -1, false, 0, 0, -1);
        }
        const uint8_t* const map_end = r.limit(n);
        const Span map{r.p, static_cast<size_t>(map_end - r.p)};
        bool ok = tag == 0x0a ? scan_map(map, table_, seen_, rec, guess_, misses_, true, readable)
                              : scan_map(map, sequence_table_, seen_lists_, rec, guess_lists_, misses_lists_, false,
                                         readable);
        if (!ok) return fail(rec, record, kMalformed, tag == 0x0a ? bad_column_ : -1, false, 0, 0, -1);
        r.p = map_end;
      } else if (!skip_extraneous(r)) {
        bad_ = r.p;
        return fail(rec, record, kMalformed, -1, false, 0, 0, -1);
      }
    }
    return true;
  }

  // An occurrence of a wanted key in an Example whose Feature is empty or
  // does not open a list: TensorFlow reads the first byte of every
  // occurrence, overridden or not, and it must open one of the three lists;
  // an empty Feature does not override an earlier occurrence of a dense key
  // (nor count as present). Out of the walk's loop, which it would slow.
  TFRX_NOINLINE bool unusual_occurrence(int32_t first, Span value, Seen& s, const KeyTable& table, int64_t record) {
    if (value.size != 0) {
      bad_ = value.data;
      bad_column_ = first;
      return false;
    }
    for (int32_t c = first; c >= 0; c = table.next[c]) {
      if (fast_[c].skip_empty) continue;
      s.stamp[c] = record;
      s.span[c] = value;
      if (s.done[c] == record) --done_count_;
      s.done[c] = -1;
    }
    return true;
  }

  // Dense features of the usual layout are written to their rows during the
  // walk (features = true); every other key's value is noted for the
  // per-column pass below. The occurrence that counts, as TensorFlow decides
  // it: in an Example, the last non-empty one for dense columns (an empty
  // Feature never overrides) and the last one for the others, and every
  // occurrence's first byte must open a list; in a SequenceExample, the last
  // one. Map entries follow TensorFlow's layout rules (read_entry_*).
  bool scan_map(Span msg, const KeyTable& table, Seen& s, int64_t record, std::vector<int32_t>& guesses,
                std::vector<Pattern>& misses, bool features, const uint8_t* readable) {
    const uint8_t* p = msg.data;
    const uint8_t* const e = msg.data + msg.size;
    int32_t* const gs = guesses.data();
    Pattern* const ms = misses.data();
    const size_t gcap = guesses.size();
    int64_t* const stamp = s.stamp.data();
    Span* const spans = s.span.data();
    int64_t* const done = s.done.data();
    const int32_t* const next = table.next.data();
    const Parser::KeyTable::EntryPattern* const patterns = table.patterns.data();
    size_t entry = 0;
    while (p < e) {
      if (entry < gcap && gs[entry] < 0) p = skip_misses(p, e, gs, ms, gcap, &entry);
      if (p >= e) break;
      Span key, value;
      // The layout every writer emits, all lengths below 128:
      //   0a L | 0a K key | 12 V value      with L = K + V + 4
      const size_t left = static_cast<size_t>(e - p);
      unsigned L, K;
      int32_t first;
      // The column found at this position in the previous record, when its
      // key opens this entry: one masked comparison of 16 bytes checks the
      // key and the headers around it. (An entry whose key no column wants
      // was tried the same way against the key there before, in skip_misses.)
      if (entry < gcap && left >= 18 && (first = gs[entry]) >= 0 && patterns[first].len != 0 && p[0] == 0x0a &&
          (L = p[1]) < 0x80 && L + 2 <= left) {
        const Pattern& pt = patterns[first];
        uint64_t w0, w1;
        std::memcpy(&w0, p + 2, 8);
        std::memcpy(&w1, p + 10, 8);
        K = pt.len - 3;
        if (((w0 & pt.mask[0]) ^ pt.word[0]) == 0 && ((w1 & pt.mask[1]) ^ pt.word[1]) == 0 && K + 4 <= L &&
            p[5 + K] == L - K - 4) {
          value = Span{p + 6 + K, L - K - 4};
          p += 2 + L;
          ++entry;
          goto found;
        }
      }
      if (left >= 6 && p[0] == 0x0a && (L = p[1]) < 0x80 && L >= 4 && L + 2 <= left && p[2] == 0x0a &&
          (K = p[3]) < 0x80 && K + 4 <= L && p[4 + K] == 0x12 && p[5 + K] == L - K - 4) {
        key = Span{p + 4, K};
        value = Span{p + 6 + K, L - K - 4};
        p += 2 + L;
      } else {
        // Every field of the map must be an entry (tag 0a), its length cut
        // at the map's end.
        Cursor r{p + 1, e};
        uint32_t n;
        if (p[0] != 0x0a || !r.varint32(&n)) {
          bad_ = p[0] != 0x0a ? p : r.p;
          return false;
        }
        const uint8_t* const entry_end = r.limit(n);
        // The usual fields with longer lengths (a feature list, a long
        // value): the key, below 128 bytes, then the value filling the entry.
        const uint8_t* const q = r.p;
        const size_t m = static_cast<size_t>(entry_end - q);
        bool usual = false;
        if (m >= 3 && q[0] == 0x0a && (K = q[1]) < 0x80 && K + 3 <= m && q[2 + K] == 0x12) {
          Cursor vr{q + 3 + K, entry_end};
          uint32_t vlen;
          if (vr.varint32(&vlen) && vlen == static_cast<size_t>(entry_end - vr.p)) {
            key = Span{q + 2, K};
            value = Span{vr.p, vlen};
            usual = true;
          }
        }
        if (!usual) {
          Span k, v;  // (not key and value themselves: those stay in registers)
          if (!(sequence_ ? read_entry_sequence(q, entry_end, &k, &v, &bad_)
                          : read_entry_example(q, entry_end, &k, &v, &bad_)))
            return false;
          key = k;
          value = v;
        }
        p = entry_end;
      }
      if (entry < gcap) {
        first = gs[entry];
        if (first < 0 || !table.matches(first, key.data, key.size)) {
          first = table.find(key.data, key.size);
          gs[entry] = first;
          if (first < 0) ms[entry] = KeyTable::pattern_of(key.data, key.size);
        }
      } else {
        first = table.find(key.data, key.size);
      }
      ++entry;
      if (first < 0) continue;
    found:
      if (features && fast_[first].eligible &&
          write_dense_fast(fast_[first].kind, fast_[first].count, value, record, fast_[first].values, readable)) {
        stamp[first] = record;
        if (done[first] != record) {
          done[first] = record;
          ++done_count_;
        }
        continue;
      }
      if (features && !sequence_ && TFRX_UNLIKELY(!opens_list(value))) {
        if (!unusual_occurrence(first, value, s, table, record)) return false;
        continue;
      }
      for (int32_t c = first; c >= 0; c = next[c]) {
        stamp[c] = record;
        spans[c] = value;
        if (done[c] == record) --done_count_;
        done[c] = -1;
      }
    }
    return true;
  }

  // The values of a Feature whose first byte opens a list of `kind`.
  template <typename Sink>
  bool read_feature(Span f, Kind kind, const uint8_t* readable, Sink& sink) {
    Cursor c{f.data, f.data + f.size};
    if (!sequence_) return read_example_list(kind, Cursor{c.p + 1, c.e}, readable, sink, &bad_) == kListOk;
    return read_sequence_feature(kind, c, readable, sink, &bad_) == kListOk;
  }

  // Features (or context features): the ones not written during the walk.
  TFRX_ALWAYS_INLINE bool fill_features(int64_t rec, Span record, const uint8_t* readable) {
    for (size_t ci = done_count_ == columns_.size() ? columns_.size() : 0; ci < columns_.size(); ++ci) {
      const ColumnSpec& col = columns_[ci];
      const int c = static_cast<int>(ci);
      if (seen_.done[ci] == rec) continue;  // written during the walk
      bool present = seen_.stamp[ci] == rec;
      const Span f = seen_.span[ci];
      // An empty Feature: in an Example, no values (dense columns never
      // keep one, see scan_map); in a SequenceExample's context, present
      // with no values. Otherwise its first byte says its kind.
      bool empty = f.size == 0;
      if (present && empty && !sequence_) present = false;
      if (present && !empty && f.data[0] != kind_tag(col.kind)) return kind_error(c, col.kind, f, rec, record);
      if (col.dense) {
        if (!present) {
          if (!col.has_default) return fail(rec, record, kMissing, c, false, 0, 0, -1);
          write_default(col, ci, rec);
          continue;
        }
        if (!fill_dense(col, ci, f, empty, rec, record, readable)) return false;
      } else if (!fill_var(col, ci, f, present, rec, record, readable)) {
        return false;
      }
    }
    return true;
  }

  // A Feature whose first byte does not open the column's list: another kind, or not a Feature.
  bool kind_error(int c, Kind kind, Span f, int64_t rec, Span record) {
    const uint8_t tag = f.data[0];
    if (tag == 0x0a || tag == 0x12 || tag == 0x1a)
      return fail(rec, record, kKindMismatch, c, false, kind, tag >> 3, -1);
    bad_ = f.data;
    return fail(rec, record, kMalformed, c, false, 0, 0, -1);
  }

  // A variable-length column's values of record `rec`, appended (none when the feature is absent).
  TFRX_ALWAYS_INLINE bool fill_var(const ColumnSpec& col, size_t ci, Span f, bool present, int64_t rec, Span record,
                                   const uint8_t* readable) {
    const int c = static_cast<int>(ci);
    VarColumn& out = (*var_)[ci];
    if (!present) {
      out.counts.push_back(0);
      return true;
    }
    VarSink sink{&out};
    if (f.size != 0 && !read_feature(f, col.kind, readable, sink))
      return fail(rec, record, kMalformed, c, false, 0, 0, -1);
    if (col.count > 1 && sink.count % col.count != 0)
      return fail(rec, record, kNotMultiple, c, false, col.count, sink.count, -1);
    out.counts.push_back(sink.count);
    return true;
  }

  // A dense column's default, to row `rec`.
  TFRX_ALWAYS_INLINE void write_default(const ColumnSpec& col, size_t ci, int64_t rec) {
    const int64_t n = col.count;
    if (n == 0) return;  // an empty default's data() may be null, and memcpy from null is undefined
    if (col.kind == kInt64) {
      std::memcpy(static_cast<int64_t*>(dense_[ci].values) + rec * n, col.default_int64.data(), 8 * n);
    } else if (col.kind == kFloat) {
      std::memcpy(static_cast<float*>(dense_[ci].values) + rec * n, col.default_float.data(), 4 * n);
    } else {
      Span* row = static_cast<Span*>(dense_[ci].values) + rec * n;
      for (int64_t j = 0; j < n; ++j) row[j] = Span{nullptr, static_cast<size_t>(j)};
    }
  }

  // A present dense Feature `f`, to row `rec`: exactly the column's count of values.
  TFRX_ALWAYS_INLINE bool fill_dense(const ColumnSpec& col, size_t ci, Span f, bool empty, int64_t rec, Span record,
                                     const uint8_t* readable) {
    const int c = static_cast<int>(ci);
    const int64_t n = col.count;
    int64_t found = 0;
    bool ok = true;
    if (empty) {
    } else if (col.kind == kInt64) {
      DenseSink<int64_t> sink{static_cast<int64_t*>(dense_[ci].values) + rec * n, n};
      ok = read_feature(f, col.kind, readable, sink);
      found = sink.count;
    } else if (col.kind == kFloat) {
      DenseSink<float> sink{static_cast<float*>(dense_[ci].values) + rec * n, n};
      ok = read_feature(f, col.kind, readable, sink);
      found = sink.count;
    } else {
      DenseSink<Span> sink{static_cast<Span*>(dense_[ci].values) + rec * n, n};
      ok = read_feature(f, col.kind, readable, sink);
      found = sink.count;
    }
    if (!ok) return fail(rec, record, kMalformed, c, false, 0, 0, -1);
    if (found != n) return fail(rec, record, kCountMismatch, c, false, n, found, -1);
    return true;
  }

  // Feature lists: every step is a Feature; a step with no kind set has no values.
  TFRX_ALWAYS_INLINE bool fill_feature_lists(int64_t rec, Span record, const uint8_t* readable) {
    for (size_t si = 0; si < sequence_columns_.size(); ++si) {
      const SequenceColumnSpec& col = sequence_columns_[si];
      const int c = static_cast<int>(si);
      VarColumn& out = (*seq_var_)[si];
      if (seen_lists_.stamp[si] != rec) {
        if (col.required) return fail(rec, record, kMissing, c, true, 0, 0, -1);
        out.step_counts.push_back(0);
        continue;
      }
      const Span list = seen_lists_.span[si];
      Cursor lr{list.data, list.data + list.size};
      int64_t steps = 0;
      const unsigned step_tag = col.kind == kBytes ? 0 : kind_tag(col.kind);
      if (step_tag != 0 && lr.e - lr.p >= 6 &&
          !read_packed_steps(col, c, step_tag, out, lr, steps, rec, record, readable))
        return false;
      if (!lr.done()) {
        // (Through copies: what has its address taken leaves registers, and
        // the loop in read_packed_steps is faster with lr and steps in them.)
        int64_t more = 0, expected = 0, actual = 0;
        const int code = read_steps(col.kind, col.step_count, Cursor{lr}, record.data + record.size, &out, &more,
                                    &bad_, &expected, &actual);
        steps += more;
        if (code != kOk) return fail(rec, record, code, c, true, expected, actual, steps);
      }
      out.step_counts.push_back(steps);
    }
    return true;
  }

  // Numeric steps as writers emit them: FeatureList.feature = 1 holding
  // a Feature whose only field is the list of the wanted kind, whose only
  // field is one packed run, all lengths below 128:
  //   0a L | kind-tag L-2 | 0a L-4 | L-4 bytes of values
  // are decoded by this loop; from the first step laid out otherwise on,
  // the general walk (read_steps) takes over where it leaves `lr`.
  TFRX_ALWAYS_INLINE bool read_packed_steps(const SequenceColumnSpec& col, int c, unsigned step_tag, VarColumn& out,
                                            Cursor& lr, int64_t& steps, int64_t rec, Span record,
                                            const uint8_t* readable) {
    // Room for the whole list up front (a step of this layout takes at
    // least 6 bytes and a value at least 1, or 4 for floats), so the
    // loop writes through plain pointers with no growth checks; the
    // buffers are cut back to what was written when it ends.
    const size_t list_bytes = static_cast<size_t>(lr.e - lr.p);
    const size_t counts_before = out.counts.size();
    int64_t* const counts0 = out.counts.grow(list_bytes / 6 + 1);
    int64_t* counts = counts0;
    const size_t values_before = col.kind == kInt64 ? out.int64_values.size() : out.float_values.size();
    int64_t* const ints0 = col.kind == kInt64 ? out.int64_values.grow(list_bytes) : nullptr;
    float* const floats0 = col.kind == kFloat ? out.float_values.grow(list_bytes / 4) : nullptr;
    int64_t* ints = ints0;
    float* floats = floats0;
    bool malformed = false;
    while (lr.e - lr.p >= 6) {
      const uint8_t* q = lr.p;
      const unsigned L = q[1];
      if (!(q[0] == 0x0a && L >= 4 && L < 0x80 && L <= static_cast<size_t>(lr.e - q) - 2 && q[2] == step_tag &&
            q[3] == L - 2 && q[4] == 0x0a && q[5] == L - 4))
        break;
      const uint8_t* values = q + 6;
      const size_t n = L - 4;
      int64_t count;
      if (col.kind == kInt64) {
        if (n == 0) {
          count = 0;
        } else {
          const uint8_t* stop;
          int64_t* end = values[n - 1] < 0x80
                             ? decode_varints<false>(values, values + n, readable, ints, ints + n, &stop)
                             : nullptr;
          if (end == nullptr) {
            bad_ = values;
            malformed = true;
            break;
          }
          count = end - ints;
          ints = end;
        }
      } else {
        if (n % 4 != 0) break;  // malformed: the general walk reports it
        count = static_cast<int64_t>(n / 4);
        if (n <= 16) {  // short steps: no call into memcpy
          for (size_t i = 0; i < n / 4; ++i) std::memcpy(floats + i, values + 4 * i, 4);
        } else {
          std::memcpy(floats, values, n);
        }
        floats += count;
      }
      if (col.step_count > 0 && count != col.step_count) {
        out.counts.truncate(counts_before + static_cast<size_t>(counts - counts0));
        return fail(rec, record, kCountMismatch, c, true, col.step_count, count, steps);
      }
      *counts++ = count;
      ++steps;
      lr.p = q + 2 + L;
    }
    out.counts.truncate(counts_before + static_cast<size_t>(counts - counts0));
    if (col.kind == kInt64) out.int64_values.truncate(values_before + static_cast<size_t>(ints - ints0));
    else out.float_values.truncate(values_before + static_cast<size_t>(floats - floats0));
    if (malformed) return fail(rec, record, kMalformed, c, true, 0, 0, steps);
    return true;
  }

  const std::vector<ColumnSpec>& columns_;
  const std::vector<SequenceColumnSpec>& sequence_columns_;
  const KeyTable& table_;
  const KeyTable& sequence_table_;
  const bool sequence_;
  const std::vector<DenseTarget>& dense_;
  std::vector<VarColumn>* const var_;
  std::vector<VarColumn>* const seq_var_;
  Error* const error_;
  Seen seen_;
  Seen seen_lists_;
  std::vector<int32_t> guess_;
  std::vector<int32_t> guess_lists_;
  std::vector<Pattern> misses_;
  std::vector<Pattern> misses_lists_;
  std::vector<FastDense> fast_;
  const uint8_t* bad_ = nullptr;  // where the record went wrong, for the error's offset
  size_t done_count_ = 0;         // columns of the current record written during the walk
  int bad_column_ = -1;           // the column whose occurrence made the walk fail, if any
};

bool Parser::parse_range(const Span* records, int64_t begin, int64_t end, const std::vector<DenseTarget>& dense,
                         std::vector<VarColumn>* var, std::vector<VarColumn>* seq_var, Error* error) const {
  RangeParse range(*this, dense, var, seq_var, error);
  return range.parse(records, begin, end);
}

void sparse_indices(const int64_t* outer, int64_t rows, const int64_t* inner, int64_t* out) {
  // Every row (or step) is written in whole chunks of kIndexChunk entries, so
  // the loop's trip count is the same for the short lists that dominate
  // (fewer mispredicted exits). The entries a chunk writes past the row's
  // end are overwritten by the next non-empty row's first chunk, or land in
  // the kIndexChunk - 1 spare entries after the last row.
  static_assert(kIndexChunk == 4, "the stores below write four entries");
#if defined(__GNUC__) || defined(__clang__)
  typedef int64_t pair __attribute__((vector_size(16)));
#endif
  if (inner == nullptr) {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t count = outer[r + 1] - outer[r];
#if defined(__GNUC__) || defined(__clang__)
      const pair four = {0, 4};
      pair p0 = {r, 0}, p1 = {r, 1}, p2 = {r, 2}, p3 = {r, 3};
      for (int64_t j = 0; j < count; j += 4) {
        std::memcpy(out + 2 * j, &p0, 16);
        std::memcpy(out + 2 * j + 2, &p1, 16);
        std::memcpy(out + 2 * j + 4, &p2, 16);
        std::memcpy(out + 2 * j + 6, &p3, 16);
        p0 += four;
        p1 += four;
        p2 += four;
        p3 += four;
      }
#else
      for (int64_t j = 0; j < count; ++j) {
        out[2 * j] = r;
        out[2 * j + 1] = j;
      }
#endif
      out += 2 * count;
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t m = outer[r]; m < outer[r + 1]; ++m) {
      const int64_t step = m - outer[r];
      const int64_t count = inner[m + 1] - inner[m];
#if defined(__GNUC__) || defined(__clang__)
      // Four entries (96 bytes) per chunk as six 16-byte stores:
      // [r, step] [j, r] [step, j + 1] [r, step] [j + 2, r] [step, j + 3].
      const pair a = {r, step};
      const pair four_lo = {4, 0}, four_hi = {0, 4};
      pair b = {0, r}, c = {step, 1}, d = {2, r}, e = {step, 3};
      for (int64_t j = 0; j < count; j += 4) {
        int64_t* o = out + 3 * j;
        std::memcpy(o, &a, 16);
        std::memcpy(o + 2, &b, 16);
        std::memcpy(o + 4, &c, 16);
        std::memcpy(o + 6, &a, 16);
        std::memcpy(o + 8, &d, 16);
        std::memcpy(o + 10, &e, 16);
        b += four_lo;
        c += four_hi;
        d += four_lo;
        e += four_hi;
      }
#else
      for (int64_t j = 0; j < count; ++j) {
        out[3 * j] = r;
        out[3 * j + 1] = step;
        out[3 * j + 2] = j;
      }
#endif
      out += 3 * count;
    }
  }
}

int64_t max_row_length(const int64_t* splits, int64_t rows) {
  int64_t longest = 0;
  for (int64_t r = 0; r < rows; ++r) longest = std::max(longest, splits[r + 1] - splits[r]);
  return longest;
}

int plan_chunks(int64_t n, int64_t total_bytes, int threads) {
  // Handing a chunk to a parked worker (workers.h) and waiting for it costs
  // some microseconds of wake-ups and a cold cache; a chunk pays off only with
  // enough work of its own (~256 KiB and 64 records).
  if (threads <= 1 || n < 128) return 1;
  int64_t by_bytes = total_bytes / (256 * 1024);
  int64_t by_records = n / 64;
  int64_t k = std::min<int64_t>({static_cast<int64_t>(threads), by_bytes, by_records});
  return static_cast<int>(std::max<int64_t>(1, k));
}

}  // namespace parse
}  // namespace tfrx
