// The draws of the window shuffle (tfrx/data/shuffle.py) on record numbers,
// for the batch-native pipeline: the same outputs as the per-record form from
// the same uniforms, without a Python object per record.
#pragma once
#include <cstdint>

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

}  // namespace tfrx
