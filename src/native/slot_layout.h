// The layout of bytes columns in a shared-memory slot (the worker handoff of
// tfrx.integrations' shared-memory ring): per column its int64 offsets[n + 1]
// (from 0), then its values end to end, each part starting at a multiple of
// 64 bytes from the buffer's start. A column is placed by three int64s,
// (offsets_at, values_at, count), the table that readers are given.
#pragma once
#include <cstddef>
#include <cstdint>

namespace tfrx {
namespace slot {

constexpr size_t kAlign = 64;

inline size_t round_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// The bytes one column of `count` values holding `value_bytes` bytes in all takes.
inline size_t column_size(size_t count, size_t value_bytes) {
  return round_up(8 * (count + 1)) + round_up(value_bytes);
}

// Places k columns (counts[c] values, value_bytes[c] bytes) from `at` rounded
// up: fills table[3 * c .. 3 * c + 2] with (offsets_at, values_at, count) and
// returns the end of the last column.
size_t place_columns(size_t at, const size_t* counts, const size_t* value_bytes, size_t k, int64_t* table);

// Writes one placed column (its table entry `place`) into `base`: value i is
// data[starts[i] : starts[i] + lengths[i]] (spans already checked).
void write_column(uint8_t* base, const int64_t* place, const uint8_t* data, const int64_t* starts,
                  const int64_t* lengths);

// Checks that k columns described by (offsets_at, values_at, counts) lie in a
// buffer of `size` bytes with offsets increasing from 0 within it: nullptr, or
// what is wrong. Returns the number of values in all through *total.
const char* check_columns(const uint8_t* data, size_t size, const int64_t* offsets_at, const int64_t* values_at,
                          const int64_t* counts, size_t k, size_t* total);

}  // namespace slot
}  // namespace tfrx
