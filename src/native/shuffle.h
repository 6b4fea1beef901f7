// The window shuffle (tfrx/data/shuffle.py) on record numbers, for the
// batch-native pipeline: the draws (the same outputs as the per-record form
// from the same uniforms, without a Python object per record), and the store
// that holds the buffered records themselves.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
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

// One record in its own allocation (malloc'd; null once moved out).
struct StoredRecord {
  uint8_t* data = nullptr;
  size_t size = 0;
};

// Records moved out of a RecordStore, in the order asked for; frees them.
class RecordSet {
 public:
  RecordSet() = default;
  RecordSet(const RecordSet&) = delete;
  RecordSet& operator=(const RecordSet&) = delete;
  RecordSet(RecordSet&& other) noexcept : records_(std::move(other.records_)), bytes_(other.bytes_) {
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
};

// The records a shuffle buffer holds, numbered in the order they were added,
// each copied once into its own allocation as it enters: memory follows the
// bytes of the records held (no buffer of the reader is kept alive by one
// record), and a record leaves by moving its pointer, not its bytes.
class RecordStore {
 public:
  RecordStore() = default;
  RecordStore(const RecordStore&) = delete;
  RecordStore& operator=(const RecordStore&) = delete;
  ~RecordStore();

  // Copies records data[starts[i] .. starts[i] + lengths[i]] in (the caller
  // checked the spans), numbered from end() on. False when out of memory
  // (nothing added then).
  bool add(const uint8_t* data, const int64_t* starts, const int64_t* lengths, size_t n);
  // Moves the records numbered ids[0 .. n) into `out`, in that order. False
  // (and nothing moved) when one of them is not held.
  bool take(const int64_t* ids, size_t n, RecordSet* out);

  int64_t end() const { return base_ + static_cast<int64_t>(slots_.size()); }
  size_t bytes() const { return bytes_; }   // payload bytes of the records held
  size_t count() const { return count_; }   // records held

 private:
  std::mutex mutex_;  // (add copies without the GIL)
  // slots_[i] is record base_ + i; records below base_ + head_ have all left.
  std::vector<StoredRecord> slots_;
  int64_t base_ = 0;
  size_t head_ = 0;
  size_t bytes_ = 0, count_ = 0;
};

}  // namespace tfrx
