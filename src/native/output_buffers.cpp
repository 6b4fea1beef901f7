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
