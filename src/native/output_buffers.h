// Memory for the parser's numeric outputs, handed to NumPy without a copy.
//
// Output buffers are 64-byte aligned: XLA (JAX) adopts such buffers through
// DLPack without copying, and SIMD loads in consumers stay aligned. Large
// ones are recycled: when NumPy frees an array its buffer returns to a pool
// (up to BufferPool::kMaxHeld bytes in all) and the next parse call reuses
// it, instead of asking the kernel for fresh zeroed pages batch after batch,
// which costs as much as parsing for numeric workloads.
//
// While an OutputArena is active on a thread, the buffers asked for there
// come from the arena's memory instead (a DataLoader worker's shared-memory
// slot, so that a parsed batch is already where the main process reads it),
// as long as they fit; the arrays over them keep the arena object alive.
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

// A writable buffer handed out front to back in 64-byte aligned pieces. The
// Python object `owner` holds the buffer; it is the owner of every array made
// over a piece. Active (see active_arena) on one thread at a time.
class OutputArena {
 public:
  OutputArena(nb::handle buffer, size_t start);
  ~OutputArena();
  OutputArena(const OutputArena&) = delete;
  OutputArena& operator=(const OutputArena&) = delete;

  // `bytes` of the buffer, or null when they do not fit what is left.
  void* take(size_t bytes);
  // Makes the arena the calling thread's (its Python object `owner`), or none (null).
  static void activate(OutputArena* arena, PyObject* owner);
  // No arena on this thread for the scope's lifetime (outputs the consumer will not send on).
  class Pause {
   public:
    Pause();
    ~Pause();
    Pause(const Pause&) = delete;
    Pause& operator=(const Pause&) = delete;

   private:
    OutputArena* arena_;
    PyObject* owner_;
  };
  size_t used() const { return used_; }
  size_t size() const { return view_.len > 0 ? static_cast<size_t>(view_.len) : 0; }
  PyObject* owner() const { return owner_; }

 private:
  Py_buffer view_{};
  size_t used_ = 0;
  PyObject* owner_ = nullptr;  // borrowed while active
};

// The calling thread's active arena, or null.
OutputArena* active_arena();

struct AlignedFree {
  size_t size_class = 0;
  PyObject* arena = nullptr;  // the arena's Python object when the memory is an arena's: nothing to free
  void operator()(void* p) const noexcept {
    if (arena == nullptr) buffer_pool().put(p, size_class);
  }
};

template <typename T>
using OutputBuffer = std::unique_ptr<T[], AlignedFree>;

// Room for n values of T (at least one) from the thread's arena when it fits, else from the pool.
template <typename T>
OutputBuffer<T> aligned_buffer(size_t n) {
  const size_t bytes = sizeof(T) * std::max<size_t>(n, 1);
  if (OutputArena* arena = active_arena()) {
    if (void* p = arena->take(bytes)) return OutputBuffer<T>(static_cast<T*>(p), AlignedFree{0, arena->owner()});
  }
  size_t cls = BufferPool::size_class(bytes);
  return OutputBuffer<T>(static_cast<T*>(buffer_pool().get(cls)), AlignedFree{cls});
}

// A capsule that returns a pooled buffer when NumPy frees the array over it.
nb::capsule pooled_owner(void* data, size_t size_class);

// A NumPy array of `shape` over a pooled buffer, which it then owns (or over an arena's piece, keeping the arena).
template <typename T>
nb::ndarray<nb::numpy, T> owned_array(OutputBuffer<T> data, std::initializer_list<size_t> shape) {
  const AlignedFree from = data.get_deleter();
  T* raw = data.release();
  if (from.arena != nullptr) return nb::ndarray<nb::numpy, T>(raw, shape, nb::handle(from.arena));
  nb::capsule owner = pooled_owner(raw, from.size_class);
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
