#include "bytes_objects.h"

#include <algorithm>
#include <cstring>

#include "stream_copy.h"
#include "workers.h"

namespace tfrx {
namespace py {

ObjectArena::ObjectArena(size_t total) {
  array_ = nb::module_::import_("numpy").attr("empty")(total, "object");
  nb::object data = array_.attr("__array_interface__")["data"];
  slots_ = reinterpret_cast<PyObject**>(nb::cast<uintptr_t>(data[0]));
}

nb::object ObjectArena::slice(size_t n) {
  nb::object s = nb::steal(PySlice_New(nb::int_(at_).ptr(), nb::int_(at_ + n).ptr(), nullptr));
  at_ += n;
  PyObject* out = PyObject_GetItem(array_.ptr(), s.ptr());
  if (!out) throw nb::python_error();
  return nb::steal(out);
}

void BytesFiller::fill(int threads) {
  const size_t count = copies_.size();
  // A batch this large leaves the cache before anyone reads it: copy past the cache.
  const bool stream = bytes_ >= kStreamingBytes;
  auto copy = [stream](const Copy& c) {
    if (stream) copy_streaming(c.dst, c.src, c.n);
    else std::memcpy(c.dst, c.src, c.n);
  };
  const int k = static_cast<int>(std::min<size_t>(static_cast<size_t>(std::max(threads, 1)), count));
  if (k <= 1) {
    for (const Copy& c : copies_) copy(c);
  } else {
    // Contiguous runs of copies of about bytes_ / k bytes each.
    std::vector<size_t> bounds(static_cast<size_t>(k) + 1, count);
    bounds[0] = 0;
    size_t done = 0, at = 0;
    for (int i = 1; i < k; ++i) {
      const size_t target = bytes_ / static_cast<size_t>(k) * static_cast<size_t>(i);
      while (at < count && done < target) done += copies_[at++].n;
      bounds[i] = at;
    }
    tfrx::run_chunks(k, [&](int i) {
      for (size_t j = bounds[i]; j < bounds[i + 1]; ++j) copy(copies_[j]);
    });
  }
  copies_.clear();
  bytes_ = 0;
}

ShortBytesCache::~ShortBytesCache() {
  if (!Py_IsInitialized()) return;
  for (Slot& s : slots_) Py_XDECREF(s.object);
}

PyObject* ShortBytesCache::get(const uint8_t* p, size_t n) {
  if (n < 2 || n > 8) return PyBytes_FromStringAndSize(reinterpret_cast<const char*>(p), static_cast<Py_ssize_t>(n));
  uint64_t word = 0;
  if (n == 8) {
    std::memcpy(&word, p, 8);
  } else {
    for (size_t i = 0; i < n; ++i) word |= uint64_t{p[i]} << (8 * i);
  }
  const size_t h = static_cast<size_t>(((word + n) * 0x9e3779b97f4a7c15ull) >> (64 - kBits));
  Slot& s = slots_[h];
  if (s.object != nullptr && s.word == word && s.size == n) {
    Py_INCREF(s.object);
    ++hits_;
    return s.object;
  }
  PyObject* b = PyBytes_FromStringAndSize(reinterpret_cast<const char*>(p), static_cast<Py_ssize_t>(n));
  if (b == nullptr) return nullptr;
  Py_INCREF(b);
  PyObject* old = s.object;
  s = Slot{word, n, b};
  Py_XDECREF(old);
  return b;
}

PyObject* span_bytes(const Span& s, ShortBytesCache* cache, BytesFiller* filler) {
  if (filler != nullptr && s.size >= kDeferredCopyBytes) {
    PyObject* b = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(s.size));
    if (b != nullptr) {
      filler->add(reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(b)), s.data, s.size);
      filler->count(s.size);
    }
    return b;
  }
  if (cache == nullptr)
    return PyBytes_FromStringAndSize(reinterpret_cast<const char*>(s.data), static_cast<Py_ssize_t>(s.size));
  return cache->get(s.data, s.size);
}

}  // namespace py
}  // namespace tfrx
