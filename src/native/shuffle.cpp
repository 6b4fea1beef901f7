#include "shuffle.h"

#include <cstdlib>
#include <cstring>

#include "stream_copy.h"

namespace tfrx {

DrawStatus shuffle_draws(int64_t* b, int64_t size, ShuffleState* st, const double* u, int64_t nu, int64_t read_end,
                         bool exhausted, int64_t* o, int64_t count, int64_t* written) {
  int64_t fill = st->fill, upos = st->upos, next_id = st->next_id, n = 0;
  DrawStatus status = DrawStatus::kDone;
  while (n < count) {
    while (fill < size && next_id < read_end) b[fill++] = next_id++;
    if (fill < size && !exhausted) { status = DrawStatus::kNeedRecords; break; }
    if (fill == 0) { status = DrawStatus::kExhausted; break; }
    if (upos >= nu) { status = DrawStatus::kNeedUniforms; break; }
    // Uniforms lie in [0, 1); anything else (NaN included) is clamped rather than read past the buffer.
    const double x = u[upos++] * static_cast<double>(fill);
    const int64_t i = x >= 0 && x < static_cast<double>(fill) ? static_cast<int64_t>(x) : x >= 0 ? fill - 1 : 0;
    o[n++] = b[i];
    b[i] = b[fill - 1];
    --fill;
  }
  st->fill = fill;
  st->upos = upos;
  st->next_id = next_id;
  *written = n;
  return status;
}

namespace {
constexpr size_t kStreamCopyBytes = 16 * 1024;
}  // namespace

RecordRecycler::~RecordRecycler() {
  for (auto& entry : free_)
    for (uint8_t* p : entry.second) std::free(p);
}

size_t RecordRecycler::capacity(size_t n) {
  if (n <= 256) return n <= 32 ? 32 : (n + 31) & ~size_t{31};
  int top = 63 - __builtin_clzll(static_cast<unsigned long long>(n));  // n >= 2^top
  const size_t step = size_t{1} << (top - 3);                         // eight classes per doubling
  return (n + step - 1) & ~(step - 1);
}

uint8_t* RecordRecycler::get_locked(size_t n) {
  const size_t cap = capacity(n);
  if (cap <= kMaxRecycled) {
    auto it = free_.find(cap);
    if (it != free_.end() && !it->second.empty()) {
      uint8_t* p = it->second.back();
      it->second.pop_back();
      held_ -= cap;
      return p;
    }
  }
  return static_cast<uint8_t*>(std::malloc(cap));
}

void RecordRecycler::put(const std::vector<StoredRecord>& records) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const StoredRecord& r : records) {
    if (r.data == nullptr) continue;
    if (r.capacity > kMaxRecycled || held_ + r.capacity > kMaxHeld) {
      std::free(r.data);
      continue;
    }
    try {
      free_[r.capacity].push_back(r.data);
      held_ += r.capacity;
    } catch (...) {  // (out of memory for the list: let the record go)
      std::free(r.data);
    }
  }
}

RecordSet::~RecordSet() {
  if (recycler_) {
    recycler_->put(records_);
  } else {
    for (const StoredRecord& r : records_) std::free(r.data);
  }
}

RecordStore::~RecordStore() {
  for (size_t i = head_; i < slots_.size(); ++i) std::free(slots_[i].data);
}

bool RecordStore::add(const uint8_t* data, const int64_t* starts, const int64_t* lengths, size_t n) {
  std::vector<const uint8_t*> records(n);
  for (size_t i = 0; i < n; ++i) records[i] = data + starts[i];
  return add(records.data(), lengths, n);
}

bool RecordStore::add(const uint8_t* const* records, const int64_t* lengths, size_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Drop the slots of records that have all left once they are most of the table.
  if (head_ >= 4096 && head_ * 2 >= slots_.size()) {
    slots_.erase(slots_.begin(), slots_.begin() + static_cast<std::ptrdiff_t>(head_));
    base_ += static_cast<int64_t>(head_);
    head_ = 0;
  }
  const size_t first = slots_.size();
  slots_.resize(first + n);
  size_t added = 0;
  {
    // Allocations first (one lock of the recycler), copies after it: a RecordSet given back on another
    // thread does not wait for the copies.
    std::lock_guard<std::mutex> recycled(recycler_->lock());
    for (size_t i = 0; i < n; ++i) {
      const size_t len = static_cast<size_t>(lengths[i]);
      uint8_t* p = recycler_->get_locked(len);
      if (p == nullptr) {
        for (size_t j = first; j < first + i; ++j) std::free(slots_[j].data);
        slots_.resize(first);
        return false;
      }
      slots_[first + i] = StoredRecord{p, len, RecordRecycler::capacity(len)};
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const size_t len = static_cast<size_t>(lengths[i]);
    uint8_t* p = slots_[first + i].data;
    // A record is read again only when drawn, long after its lines left the cache: large ones are
    // written around it (no read for ownership of the destination).
    if (len >= kStreamCopyBytes) {
      copy_streaming(p, records[i], len);
    } else if (len) {
      std::memcpy(p, records[i], len);
    }
    added += len;
  }
  bytes_ += added;
  count_ += n;
  return true;
}

bool RecordStore::take(const int64_t* ids, size_t n, RecordSet* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < n; ++i) {
    const int64_t k = ids[i] - base_;
    if (k < static_cast<int64_t>(head_) || k >= static_cast<int64_t>(slots_.size()) ||
        slots_[static_cast<size_t>(k)].data == nullptr)
      return false;
  }
  out->records_.reserve(out->records_.size() + n);
  out->recycler_ = recycler_;
  for (size_t i = 0; i < n; ++i) {
    StoredRecord& slot = slots_[static_cast<size_t>(ids[i] - base_)];
    if (slot.data == nullptr) {  // the same number twice: put back what moved, report it
      const size_t moved_from = out->records_.size() - i;
      for (size_t j = 0; j < i; ++j) {
        const StoredRecord& r = out->records_[moved_from + j];
        slots_[static_cast<size_t>(ids[j] - base_)] = r;
        out->bytes_ -= r.size;
        bytes_ += r.size;
      }
      out->records_.resize(moved_from);
      return false;
    }
    out->records_.push_back(slot);
    out->bytes_ += slot.size;
    bytes_ -= slot.size;
    slot.data = nullptr;
  }
  count_ -= n;
  while (head_ < slots_.size() && slots_[head_].data == nullptr) ++head_;
  return true;
}

}  // namespace tfrx
