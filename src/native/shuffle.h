// The window shuffle (tfrx/data/shuffle.py) on record numbers, for the
// batch-native pipeline: the draws (the same outputs as the per-record form
// from the same uniforms, without a Python object per record), and the store
// that holds the buffered records themselves.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tfrx {

enum class DrawStatus : int {
  kDone = 0,           // `count` outputs written
  kNeedRecords = 1,    // the buffer is not full: read more records, or mark the input exhausted
  kNeedUniforms = 2,   // the uniforms are used up
  kExhausted = 3,      // the input is exhausted and the buffer empty
};

struct ShuffleState {
  int64_t fill = 0;     // buffer[0 .. fill) hold record numbers
  int64_t upos = 0;     // next uniform to use
  int64_t next_id = 0;  // next record number to put into the buffer
};

// Before every draw the buffer (`size` slots) is refilled from next_id up to
// read_end; a draw takes buffer[int(u * fill)] and moves the last element
// into its slot. Writes up to `count` record numbers to `out` and sets
// `*written`. The caller keeps 0 <= fill <= size and 0 <= upos <= n_uniforms.
DrawStatus shuffle_draws(int64_t* buffer, int64_t size, ShuffleState* state, const double* uniforms,
                         int64_t n_uniforms, int64_t read_end, bool exhausted, int64_t* out, int64_t count,
                         int64_t* written);

// One record in its own allocation (null once moved out); `capacity` bytes were allocated.
struct StoredRecord {
  uint8_t* data = nullptr;
  size_t size = 0;
  size_t capacity = 0;
};

// The allocations of records that left, kept by size class for the records that enter next. A
// shuffle adds and frees a record for every record it returns, and malloc's path for a block of a
// few KiB (beyond its per-thread cache) cost as much as copying the record. Sizes round up by at
// most 1/8; at most kMaxHeld bytes are kept, and records over kMaxRecycled bytes are not kept.
class RecordRecycler {
 public:
  static constexpr size_t kMaxRecycled = 64 * 1024;
  static constexpr size_t kMaxHeld = size_t{8} << 20;

  RecordRecycler() = default;
  RecordRecycler(const RecordRecycler&) = delete;
  RecordRecycler& operator=(const RecordRecycler&) = delete;
  ~RecordRecycler();

  // The bytes allocated for a record of `n` bytes.
  static size_t capacity(size_t n);
  // An allocation of capacity(n) bytes, null when out of memory. The caller holds lock().
  uint8_t* get_locked(size_t n);
  // Keeps (or frees) the allocations of `records`.
  void put(const std::vector<StoredRecord>& records) noexcept;
  std::mutex& lock() { return mutex_; }
  size_t held() const { return held_; }

 private:
  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<uint8_t*>> free_;  // capacity -> allocations
  size_t held_ = 0;
};

// Records moved out of a RecordStore, in the order asked for; gives them back to the store's recycler
// (or frees them).
class RecordSet {
 public:
  RecordSet() = default;
  RecordSet(const RecordSet&) = delete;
  RecordSet& operator=(const RecordSet&) = delete;
  RecordSet(RecordSet&& other) noexcept
      : records_(std::move(other.records_)), bytes_(other.bytes_), recycler_(std::move(other.recycler_)) {
    other.records_.clear();
    other.bytes_ = 0;
  }
  RecordSet& operator=(RecordSet&&) = delete;
  ~RecordSet();

  const std::vector<StoredRecord>& records() const { return records_; }
  size_t bytes() const { return bytes_; }

 private:
  friend class RecordStore;
  std::vector<StoredRecord> records_;
  size_t bytes_ = 0;
  std::shared_ptr<RecordRecycler> recycler_;  // (the set may outlive its store)
};

// The records a shuffle buffer holds, numbered in the order they were added,
// each copied once into its own allocation as it enters: memory follows the
// bytes of the records held (no buffer of the reader is kept alive by one
// record), and a record leaves by moving its pointer, not its bytes.
class RecordStore {
 public:
  RecordStore() = default;
  // A store that shares `recycler` (with the stores of earlier passes, say).
  explicit RecordStore(std::shared_ptr<RecordRecycler> recycler) : recycler_(std::move(recycler)) {}
  RecordStore(const RecordStore&) = delete;
  RecordStore& operator=(const RecordStore&) = delete;
  ~RecordStore();

  // Copies records data[starts[i] .. starts[i] + lengths[i]] in (the caller
  // checked the spans), numbered from end() on. False when out of memory
  // (nothing added then).
  bool add(const uint8_t* data, const int64_t* starts, const int64_t* lengths, size_t n);
  // The same for records anywhere: record i is records[i][0 .. lengths[i]).
  bool add(const uint8_t* const* records, const int64_t* lengths, size_t n);
  // Moves the records numbered ids[0 .. n) into `out`, in that order. False
  // (and nothing moved) when one of them is not held.
  bool take(const int64_t* ids, size_t n, RecordSet* out);

  int64_t end() const { return base_ + static_cast<int64_t>(slots_.size()); }
  size_t bytes() const { return bytes_; }   // payload bytes of the records held
  size_t count() const { return count_; }   // records held
  const std::shared_ptr<RecordRecycler>& recycler() const { return recycler_; }

 private:
  std::mutex mutex_;  // (add copies without the GIL)
  std::shared_ptr<RecordRecycler> recycler_ = std::make_shared<RecordRecycler>();
  // slots_[i] is record base_ + i; records below base_ + head_ have all left.
  std::vector<StoredRecord> slots_;
  int64_t base_ = 0;
  size_t head_ = 0;
  size_t bytes_ = 0, count_ = 0;
};

}  // namespace tfrx
