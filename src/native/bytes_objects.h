// Python bytes objects for the parser's bytes outputs: one NumPy object array
// per parse call (ObjectArena), a cache of short repeated values
// (ShortBytesCache), and the copy of large values (BytesFiller). Used only
// with the GIL held, except BytesFiller::fill.
#pragma once
#include <nanobind/nanobind.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "parse.h"

namespace tfrx {
namespace py {

namespace nb = nanobind;
using tfrx::parse::Span;

// Every bytes output of one parse call lives in one NumPy object array and
// each column gets a slice of it: one array allocation per call instead of a
// list plus a conversion per column.
class ObjectArena {
 public:
  explicit ObjectArena(size_t total);

  // The next n slots filled with make(i) (a new reference, or null with a
  // Python error set), as a 1-D object array sharing the arena.
  template <typename Make>
  nb::object take(size_t n, Make&& make) {
    for (size_t i = 0; i < n; ++i) {
      PyObject* b = make(i);
      if (!b) throw nb::python_error();
      PyObject* old = slots_[at_ + i];
      slots_[at_ + i] = b;
      Py_XDECREF(old);
    }
    return slice(n);
  }

 private:
  nb::object slice(size_t n);

  nb::object array_;
  PyObject** slots_ = nullptr;
  size_t at_ = 0;
};

// Values at least this long are made as empty bytes objects with the GIL held
// and filled afterwards by BytesFiller without it: the copy is the cost.
constexpr size_t kDeferredCopyBytes = 16 * 1024;

// Copies of large values totalling at least this much bypass the cache (stream_copy.h).
constexpr size_t kStreamingBytes = size_t{2} << 20;

// Copies of large values queued by span_bytes and done in one pass, with the
// GIL released: the bytes objects are new and reachable only through the
// arena, which nobody else sees before the parse call returns.
class BytesFiller {
 public:
  void add(uint8_t* dst, const uint8_t* src, size_t n) { copies_.push_back(Copy{dst, src, n}); }
  size_t bytes() const { return bytes_; }
  void count(size_t n) { bytes_ += n; }
  // Performs every queued copy on up to `threads` threads (call without the GIL).
  void fill(int threads);
  bool empty() const { return copies_.empty(); }

 private:
  struct Copy {
    uint8_t* dst;
    const uint8_t* src;
    size_t n;
  };
  std::vector<Copy> copies_;
  size_t bytes_ = 0;
};

// Categorical columns repeat a few short values (codes, hashed ids) across
// records and batches. Values of 2 to 8 bytes are looked up in a small
// direct-mapped cache of bytes objects kept by the parser: a hit hands out
// the same immutable object again instead of allocating (and later freeing)
// a new one. CPython already shares the empty and one-byte bytes objects.
// A column whose values rarely repeat (under one hit in 8 values) skips the
// cache for its next 16 batches, then tries again.
class ShortBytesCache {
 public:
  ShortBytesCache() = default;
  ShortBytesCache(const ShortBytesCache&) = delete;
  ShortBytesCache& operator=(const ShortBytesCache&) = delete;
  ~ShortBytesCache();

  PyObject* get(const uint8_t* p, size_t n);

  // Makes n objects of one column with make(i, cache or null), following
  // and updating that column's `skip` count.
  template <typename Make>
  nb::object column(ObjectArena* arena, size_t n, uint32_t* skip, Make&& make) {
    if (*skip > 0) {
      --*skip;
      return arena->take(n, [&](size_t i) { return make(i, static_cast<ShortBytesCache*>(nullptr)); });
    }
    const size_t before = hits_;
    nb::object out = arena->take(n, [&](size_t i) { return make(i, this); });
    if (8 * (hits_ - before) < n) *skip = 16;
    return out;
  }

 private:
  static constexpr int kBits = 10;
  struct Slot {
    uint64_t word = 0;
    size_t size = 0;
    PyObject* object = nullptr;
  };
  std::array<Slot, size_t{1} << kBits> slots_{};
  size_t hits_ = 0;
};

// A bytes object holding a span's bytes: from the cache when one is given,
// or, for a large value with a filler, made now and filled later.
PyObject* span_bytes(const Span& s, ShortBytesCache* cache, BytesFiller* filler);

}  // namespace py
}  // namespace tfrx
