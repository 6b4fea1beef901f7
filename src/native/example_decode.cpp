// Wire rules relied on (tensorflow/core/example/{example,feature}.proto):
//   Example.features = 1; SequenceExample.context = 1, feature_lists = 2;
//   Features.feature = 1 and FeatureLists.feature_list = 1 are maps, i.e.
//   repeated entries {key = 1 (string), value = 2 (message)};
//   FeatureList.feature = 1 (repeated Feature);
//   Feature oneof kind {bytes_list = 1, float_list = 2, int64_list = 3};
//   BytesList.value = 1 (bytes), FloatList.value = 1 (float, packed or
//   unpacked fixed32), Int64List.value = 1 (int64, packed or unpacked varint).
// Protobuf merge semantics: a repeated singular message field merges, a
// oneof member of another kind clears the previous one, repeated values
// concatenate, a map entry replaces any earlier entry with its key.
#include "example_decode.h"

#include <cstring>

#include "wire.h"

namespace tfrx {
namespace example {
namespace {

using wire::Reader;

// A packed varint run is valid when it ends on a byte below 0x80 and no
// varint is longer than 10 bytes (10 or more bytes in a row with the
// continuation bit). Checked a word at a time: random multi-byte values make a
// branch per byte mispredict.
bool packed_varints_valid(const uint8_t* p, const uint8_t* e) {
  size_t run = 0;  // continuation bytes right before p
#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (; e - p >= 8; p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    uint64_t stops = ~word & 0x8080808080808080ull;
    if (!stops) {
      run += 8;
      if (run >= 10) return false;
      continue;
    }
    if (run + static_cast<size_t>(__builtin_ctzll(stops)) / 8 >= 10) return false;
    run = 7 - static_cast<size_t>(63 - __builtin_clzll(stops)) / 8;
  }
#endif
  for (; p < e; ++p) {
    if (*p < 0x80) {
      run = 0;
    } else if (++run >= 10) {
      return false;
    }
  }
  return run == 0;
}

// upb's default recursion limit: nested messages and groups together.
constexpr int kMaxDepth = 100;

class Decoder {
 public:
  Decoder(const uint8_t* base, std::vector<Chunk>* chunks, DecodeError* err)
      : base_(base), chunks_(chunks), err_(err) {}

  static bool long_length_prefix(const uint8_t* p, const uint8_t* e) {
    for (int i = 0; i < 5; ++i, ++p) {
      if (p >= e || *p < 0x80) return false;  // ends within 5 bytes (or is truncated: reported later)
    }
    return true;
  }

  // Strict UTF-8 as upb checks string fields: no overlong forms, no
  // surrogates, nothing above U+10FFFF.
  static bool utf8_valid(const uint8_t* p, size_t n) {
    const uint8_t* e = p + n;
    while (p < e) {
      uint8_t c = *p;
      if (c < 0x80) { ++p; continue; }
      int len;
      uint32_t cp;
      if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
      else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
      else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
      else return false;
      if (e - p < len) return false;
      for (int i = 1; i < len; ++i) {
        if ((p[i] & 0xC0) != 0x80) return false;
        cp = (cp << 6) | (p[i] & 0x3F);
      }
      if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return false;
      p += len;
    }
    return true;
  }

  bool fail(const uint8_t* at, const char* what) {
    err_->offset = static_cast<size_t>(at - base_);
    err_->what = what;
    return false;
  }

  bool tag(Reader& r, uint32_t* field, uint32_t* type, bool in_group = false) {
    const uint8_t* at = r.pos;
    key_at_ = at;
    if (!wire::tag_with_groups(r, field, type, in_group)) return fail(at, "invalid field key");
    return true;
  }

  bool sub(Reader& r, Reader* out) {
    const uint8_t* at = key_at_;
    const uint8_t* d;
    size_t n;
    // protobuf's FromString (upb) takes a length prefix of at most 5 bytes;
    // TensorFlow's parser (and tfrx's) reads up to 10.
    if (r.pos < r.end && *r.pos >= 0x80 && long_length_prefix(r.pos, r.end))
      return fail(at, "length prefix longer than 5 bytes (protobuf rejects it)");
    if (!r.bytes(&d, &n)) return fail(at, "length-delimited field runs past the end of its message");
    *out = Reader(base_, d, d + n);
    return true;
  }

  // Skips one unknown field whose key was just read; groups are skipped
  // through their matching end-group key.
  bool skip(Reader& r, uint32_t field, uint32_t type, int depth) {
    const uint8_t* at = key_at_;  // errors name the field's key
    switch (type) {
      case wire::kVarint: {
        uint64_t v;
        if (!wire::varint_lenient(r, &v)) return fail(at, "truncated or overlong varint");
        return true;
      }
      case wire::kFixed64:
        if (r.remaining() < 8) return fail(at, "truncated fixed64");
        r.pos += 8;
        return true;
      case wire::kFixed32:
        if (r.remaining() < 4) return fail(at, "truncated fixed32");
        r.pos += 4;
        return true;
      case wire::kLengthDelimited: {
        Reader s(nullptr, 0);
        return sub(r, &s);
      }
      case 3: {  // start group
        if (depth + 1 > kMaxDepth) return fail(at, "nesting too deep");
        while (true) {
          if (r.done()) return fail(at, "unterminated group");
          uint32_t f, t;
          if (!tag(r, &f, &t, true)) return false;
          if (t == 4) {
            if (f != field) return fail(at, "end-group key does not match its start-group key");
            return true;
          }
          if (!skip(r, f, t, depth + 1)) return false;
        }
      }
      default:
        return fail(at, "unexpected end-group key");
    }
  }

  // BytesList / FloatList / Int64List body: appends chunks of `kind`.
  bool list(Reader r, uint8_t kind, int depth) {
    while (!r.done()) {
      uint32_t field, type;
      if (!tag(r, &field, &type)) return false;
      const uint8_t* at = key_at_;
      if (field == 1) {
        if (type == wire::kLengthDelimited) {
          Reader s(nullptr, 0);
          if (!sub(r, &s)) return false;
          size_t n = s.remaining();
          if (kind == kFloat && n % 4 != 0) return fail(at, "packed float run is not a multiple of 4 bytes");
          if (kind == kInt64 && !packed_varints_valid(s.pos, s.end))
            return fail(at, "packed int64 run does not end on a varint boundary");
          if (kind == kBytes || n > 0) chunks_->push_back(Chunk{s.pos, n});
          continue;
        }
        if (kind == kFloat && type == wire::kFixed32) {
          if (r.remaining() < 4) return fail(at, "truncated fixed32");
          chunks_->push_back(Chunk{r.pos, 4});
          r.pos += 4;
          continue;
        }
        if (kind == kInt64 && type == wire::kVarint) {
          const uint8_t* value = r.pos;
          uint64_t v;
          if (!wire::varint_lenient(r, &v)) return fail(at, "truncated or overlong varint");
          chunks_->push_back(Chunk{value, static_cast<size_t>(r.pos - value)});
          continue;
        }
      }
      if (!skip(r, field, type, depth)) return false;
    }
    return true;
  }

  // Merges one Feature message into (kind, begin): chunks [begin, size()).
  bool feature(Reader r, uint8_t* kind, uint32_t begin, int depth) {
    if (depth > kMaxDepth) return fail(r.pos, "nesting too deep");
    while (!r.done()) {
      uint32_t field, type;
      if (!tag(r, &field, &type)) return false;
      if (field >= 1 && field <= 3 && type == wire::kLengthDelimited) {
        Reader s(nullptr, 0);
        if (!sub(r, &s)) return false;
        if (*kind != field) {  // another oneof member replaces the previous one
          chunks_->resize(begin);
          *kind = static_cast<uint8_t>(field);
        }
        if (depth + 1 > kMaxDepth) return fail(s.pos, "nesting too deep");
        if (!list(s, *kind, depth + 1)) return false;
        continue;
      }
      if (!skip(r, field, type, depth)) return false;
    }
    return true;
  }

  // Features body: one Entry per map entry, its values in the chunks.
  bool features(Reader r, std::vector<Entry>* out, int depth) {
    return map_body(r, out, chunks_, depth, [&](Reader v, Entry* entry, int d) {
      return feature(v, &entry->kind, entry->begin, d);
    });
  }

  // FeatureLists body: one Entry per map entry, its steps in `steps`
  // (repeated FeatureList values of one entry append).
  bool feature_lists(Reader r, std::vector<Entry>* out, std::vector<Step>* steps, int depth) {
    return map_body(r, out, steps, depth, [&](Reader v, Entry*, int d) { return feature_list(v, steps, d); });
  }

  // A map body (Features or FeatureLists): appends one Entry per entry, whose
  // [begin, end) indexes `items` (chunks or steps); merge_value(value, entry,
  // depth) decodes one value message into the entry.
  template <typename Item, typename MergeValue>
  bool map_body(Reader r, std::vector<Entry>* out, std::vector<Item>* items, int depth, MergeValue merge_value) {
    if (depth > kMaxDepth) return fail(r.pos, "nesting too deep");
    while (!r.done()) {
      uint32_t field, type;
      if (!tag(r, &field, &type)) return false;
      if (field == 1 && type == wire::kLengthDelimited) {
        Reader e(nullptr, 0);
        if (!sub(r, &e)) return false;
        Entry entry{e.pos, 0, kNone, static_cast<uint32_t>(items->size()), 0};
        const size_t chunk_mark = chunks_->size();
        bool unknown = false;
        if (!map_entry(e, &entry, &unknown, depth + 1, merge_value)) return false;
        if (unknown) {  // upb keeps such an entry as an unknown field of the map message: not in the map
          // ...but checks its string key's UTF-8 first, as for any entry.
          if (!utf8_valid(entry.key, entry.key_size)) return fail(entry.key, "feature name is not valid UTF-8");
          items->resize(entry.begin);
          chunks_->resize(chunk_mark);
          continue;
        }
        entry.end = static_cast<uint32_t>(items->size());
        out->push_back(entry);
        continue;
      }
      if (!skip(r, field, type, depth)) return false;
    }
    return true;
  }

  // One map entry {key = 1, value = 2}; any other field makes it unknown.
  template <typename MergeValue>
  bool map_entry(Reader r, Entry* entry, bool* unknown, int depth, MergeValue& merge_value) {
    if (depth > kMaxDepth) return fail(r.pos, "nesting too deep");
    while (!r.done()) {
      uint32_t field, type;
      if (!tag(r, &field, &type)) return false;
      if (field == 1 && type == wire::kLengthDelimited) {
        Reader k(nullptr, 0);
        if (!sub(r, &k)) return false;
        entry->key = k.pos;
        entry->key_size = k.remaining();
        continue;
      }
      if (field == 2 && type == wire::kLengthDelimited) {
        Reader v(nullptr, 0);
        if (!sub(r, &v)) return false;
        if (!merge_value(v, entry, depth + 1)) return false;
        continue;
      }
      *unknown = true;
      if (!skip(r, field, type, depth)) return false;
    }
    return true;
  }

  bool feature_list(Reader r, std::vector<Step>* steps, int depth) {
    if (depth > kMaxDepth) return fail(r.pos, "nesting too deep");
    while (!r.done()) {
      uint32_t field, type;
      if (!tag(r, &field, &type)) return false;
      if (field == 1 && type == wire::kLengthDelimited) {
        Reader f(nullptr, 0);
        if (!sub(r, &f)) return false;
        Step step{kNone, static_cast<uint32_t>(chunks_->size()), 0};
        if (!feature(f, &step.kind, step.begin, depth + 1)) return false;
        step.end = static_cast<uint32_t>(chunks_->size());
        steps->push_back(step);
        continue;
      }
      if (!skip(r, field, type, depth)) return false;
    }
    return true;
  }

 private:
  const uint8_t* base_;
  const uint8_t* key_at_ = nullptr;  // key of the field being read
  std::vector<Chunk>* chunks_;
  DecodeError* err_;
};

}  // namespace

bool decode_example(const uint8_t* data, size_t size, ExampleView* out, DecodeError* err) {
  out->clear();
  Decoder d(data, &out->chunks, err);
  Reader r(data, size);
  while (!r.done()) {
    uint32_t field, type;
    if (!d.tag(r, &field, &type)) return false;
    if (field == 1 && type == wire::kLengthDelimited) {
      Reader s(nullptr, 0);
      if (!d.sub(r, &s)) return false;
      if (!d.features(s, &out->features, 1)) return false;
      continue;
    }
    if (!d.skip(r, field, type, 0)) return false;
  }
  return true;
}

bool decode_sequence_example(const uint8_t* data, size_t size, SequenceExampleView* out,
                             DecodeError* err) {
  out->clear();
  Decoder d(data, &out->chunks, err);
  Reader r(data, size);
  while (!r.done()) {
    uint32_t field, type;
    if (!d.tag(r, &field, &type)) return false;
    if ((field == 1 || field == 2) && type == wire::kLengthDelimited) {
      Reader s(nullptr, 0);
      if (!d.sub(r, &s)) return false;
      bool ok = field == 1 ? d.features(s, &out->context, 1)
                           : d.feature_lists(s, &out->feature_lists, &out->steps, 1);
      if (!ok) return false;
      continue;
    }
    if (!d.skip(r, field, type, 0)) return false;
  }
  return true;
}

namespace {
inline int popcount64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_popcountll(x);
#else
  int n = 0;
  for (; x; x &= x - 1) ++n;
  return n;
#endif
}
}  // namespace

size_t count_values(uint8_t kind, const Chunk* begin, const Chunk* end) {
  size_t n = 0;
  switch (kind) {
    case kBytes:
      return static_cast<size_t>(end - begin);
    case kFloat:
      for (const Chunk* c = begin; c < end; ++c) n += c->size / 4;
      return n;
    case kInt64:
      // One varint ends at each byte below 0x80; count them a word at a time.
      for (const Chunk* c = begin; c < end; ++c) {
        const uint8_t* p = c->data;
        const uint8_t* e = p + c->size;
        for (; e - p >= 8; p += 8) {
          uint64_t word;
          std::memcpy(&word, p, 8);
          n += 8 - static_cast<size_t>(popcount64(word & 0x8080808080808080ull));
        }
        for (; p < e; ++p) n += *p < 0x80;
      }
      return n;
    default:
      return 0;
  }
}

void copy_floats(const Chunk* begin, const Chunk* end, float* out) {
  // The wire holds little-endian IEEE floats, the layout of every supported host.
  for (const Chunk* c = begin; c < end; ++c) {
    std::memcpy(out, c->data, c->size);
    out += c->size / 4;
  }
}

void copy_int64s(const Chunk* begin, const Chunk* end, int64_t* out, size_t capacity) {
  int64_t* const stop = out + capacity;
  for (const Chunk* c = begin; c < end; ++c) {
    const uint8_t* p = c->data;
    const uint8_t* e = p + c->size;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && (defined(__GNUC__) || defined(__clang__))
    // Whole-word decoding while 8 bytes remain: the varint ends at the first
    // byte without the continuation bit; its 7-bit groups are gathered
    // without a branch per byte. Varints of 9 or 10 bytes take the loop below.
    while (e - p >= 8 && stop - out >= 8) {
      uint64_t word;
      std::memcpy(&word, p, 8);
      if (!(word & 0x8080808080808080ull)) {  // eight one-byte varints (small ints, masks)
        for (int k = 0; k < 8; ++k) out[k] = p[k];
        out += 8;
        p += 8;
        continue;
      }
      uint64_t stops = ~word & 0x8080808080808080ull;
      if (!stops) break;
      size_t len = static_cast<size_t>(__builtin_ctzll(stops)) / 8 + 1;
      uint64_t x = len == 8 ? word : word & ((1ull << (8 * len)) - 1);
      *out++ = static_cast<int64_t>((x & 0x7full) | ((x >> 1) & (0x7full << 7)) | ((x >> 2) & (0x7full << 14)) |
                                    ((x >> 3) & (0x7full << 21)) | ((x >> 4) & (0x7full << 28)) |
                                    ((x >> 5) & (0x7full << 35)) | ((x >> 6) & (0x7full << 42)) |
                                    ((x >> 7) & (0x7full << 49)));
      p += len;
    }
#endif
    Reader r(p, static_cast<size_t>(e - p));
    while (!r.done() && out < stop) {
      uint64_t v = 0;
      if (!wire::varint_lenient(r, &v)) break;  // validated while decoding
      *out++ = static_cast<int64_t>(v);
    }
  }
  while (out < stop) *out++ = 0;
}

}  // namespace example
}  // namespace tfrx
