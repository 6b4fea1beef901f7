#include "output_buffers.h"

#include <new>

namespace tfrx {
namespace py {

namespace {
constexpr std::align_val_t kOutputAlignment{64};

struct PooledOwner {
  void* data;
  size_t size_class;
};
}  // namespace

size_t BufferPool::size_class(size_t bytes) {
  if (bytes < kMinPooled) return std::max<size_t>(bytes, 64);
  size_t c = kMinPooled;
  while (c < bytes) c <<= 1;
  return c;
}

void* BufferPool::get(size_t cls) {
  if (cls >= kMinPooled) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = free_.size(); i-- > 0;) {
      if (free_[i].first == cls) {
        void* p = free_[i].second;
        free_[i] = free_.back();
        free_.pop_back();
        held_ -= cls;
        return p;
      }
    }
  }
  return ::operator new[](cls, kOutputAlignment);
}

void BufferPool::put(void* p, size_t cls) noexcept {
  if (cls >= kMinPooled) {
    std::lock_guard<std::mutex> lock(mu_);
    if (held_ + cls <= kMaxHeld) {
      try {
        free_.emplace_back(cls, p);
        held_ += cls;
        return;
      } catch (...) {
      }
    }
  }
  ::operator delete[](p, kOutputAlignment);
}

BufferPool& buffer_pool() {
  static BufferPool* pool = new BufferPool();
  return *pool;
}

namespace {
thread_local OutputArena* current_arena = nullptr;
thread_local PyObject* current_owner = nullptr;
}  // namespace

OutputArena::OutputArena(nb::handle buffer, size_t start) : used_(start) {
  if (PyObject_GetBuffer(buffer.ptr(), &view_, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) throw nb::python_error();
  if (start > size()) {
    PyBuffer_Release(&view_);
    throw nb::value_error("OutputArena: start lies past the end of the buffer");
  }
}

OutputArena::~OutputArena() {
  if (current_arena == this) activate(nullptr, nullptr);
  if (Py_IsInitialized()) PyBuffer_Release(&view_);
}

void* OutputArena::take(size_t bytes) {
  const uintptr_t base = reinterpret_cast<uintptr_t>(view_.buf);
  const uintptr_t at = (base + used_ + 63) & ~uintptr_t{63};
  const size_t offset = static_cast<size_t>(at - base);
  if (offset > size() || bytes > size() - offset) return nullptr;
  used_ = offset + bytes;
  return reinterpret_cast<void*>(at);
}

void OutputArena::activate(OutputArena* arena, PyObject* owner) {
  current_arena = arena;
  current_owner = owner;
  if (arena != nullptr) arena->owner_ = owner;
}

OutputArena* active_arena() { return current_arena; }

OutputArena::Pause::Pause() : arena_(current_arena), owner_(current_owner) { activate(nullptr, nullptr); }

OutputArena::Pause::~Pause() {
  if (arena_ != nullptr) activate(arena_, owner_);
}

nb::capsule pooled_owner(void* data, size_t size_class) {
  auto* state = new PooledOwner{data, size_class};
  return nb::capsule(state, [](void* p) noexcept {
    auto* o = static_cast<PooledOwner*>(p);
    buffer_pool().put(o->data, o->size_class);
    delete o;
  });
}

}  // namespace py
}  // namespace tfrx
