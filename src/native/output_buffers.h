// Memory for the parser's numeric outputs, handed to NumPy without a copy.
//
// Output buffers are 64-byte aligned: XLA (JAX) adopts such buffers through
// DLPack without copying, and SIMD loads in consumers stay aligned. Large
// ones are recycled: when NumPy frees an array its buffer returns to a pool
// (up to BufferPool::kMaxHeld bytes in all) and the next parse call reuses
// it, instead of asking the kernel for fresh zeroed pages batch after batch,
// which costs as much as parsing for numeric workloads.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "parse.h"

namespace tfrx {
namespace py {

namespace nb = nanobind;

class BufferPool {
 public:
  static constexpr size_t kMinPooled = 64 * 1024;
  static constexpr size_t kMaxHeld = size_t{64} << 20;

  // The size actually allocated for `bytes`: powers of two from kMinPooled up.
  static size_t size_class(size_t bytes);
  void* get(size_t size_class);
  void put(void* p, size_t size_class) noexcept;

 private:
  std::mutex mu_;
  std::vector<std::pair<size_t, void*>> free_;
  size_t held_ = 0;
};

// The process's pool; never destroyed, since capsules may outlive statics.
BufferPool& buffer_pool();

struct AlignedFree {
  size_t size_class = 0;
  void operator()(void* p) const noexcept { buffer_pool().put(p, size_class); }
};

template <typename T>
using OutputBuffer = std::unique_ptr<T[], AlignedFree>;

// Room for n values of T (at least one) from the pool.
template <typename T>
OutputBuffer<T> aligned_buffer(size_t n) {
  size_t cls = BufferPool::size_class(sizeof(T) * std::max<size_t>(n, 1));
  return OutputBuffer<T>(static_cast<T*>(buffer_pool().get(cls)), AlignedFree{cls});
}

// A capsule that returns a pooled buffer when NumPy frees the array over it.
nb::capsule pooled_owner(void* data, size_t size_class);

// A NumPy array of `shape` over a pooled buffer, which it then owns.
template <typename T>
nb::ndarray<nb::numpy, T> owned_array(OutputBuffer<T> data, std::initializer_list<size_t> shape) {
  const size_t cls = data.get_deleter().size_class;
  T* raw = data.release();
  nb::capsule owner = pooled_owner(raw, cls);
  return nb::ndarray<nb::numpy, T>(raw, shape, owner);
}

// A NumPy array over a parse buffer's own storage: no copy out of it.
template <typename T>
nb::object released_array(tfrx::parse::PodBuffer<T>* buffer) {
  const size_t n = buffer->size();
  T* raw = buffer->release();
  nb::capsule owner(raw, [](void* p) noexcept { std::free(p); });
  return nb::cast(nb::ndarray<nb::numpy, T>(raw, {n}, owner));
}

}  // namespace py
}  // namespace tfrx
