// Placing, writing and checking bytes columns in a shared-memory slot (slot_layout.h).
#include "slot_layout.h"

#include <cstring>

namespace tfrx {
namespace slot {

size_t place_columns(size_t at, const size_t* counts, const size_t* value_bytes, size_t k, int64_t* table) {
  size_t end = round_up(at);
  for (size_t c = 0; c < k; ++c) {
    table[3 * c] = static_cast<int64_t>(end);
    table[3 * c + 1] = static_cast<int64_t>(end + round_up(8 * (counts[c] + 1)));
    table[3 * c + 2] = static_cast<int64_t>(counts[c]);
    end = static_cast<size_t>(table[3 * c + 1]) + round_up(value_bytes[c]);
  }
  return end;
}

void write_column(uint8_t* base, const int64_t* place, const uint8_t* data, const int64_t* starts,
                  const int64_t* lengths) {
  uint8_t* offsets = base + place[0];
  uint8_t* values = base + place[1];
  int64_t total = 0;
  std::memcpy(offsets, &total, 8);
  for (size_t i = 0; i < static_cast<size_t>(place[2]); ++i) {
    const int64_t n = lengths[i];
    if (n) std::memcpy(values + total, data + starts[i], static_cast<size_t>(n));
    total += n;
    std::memcpy(offsets + 8 * (i + 1), &total, 8);
  }
}

namespace {

// Whether column (n values, offsets at o, values at v) has its offsets table inside the buffer.
bool column_in_buffer(size_t size, int64_t n, int64_t o, int64_t v) {
  if (n < 0 || o < 0 || v < 0) return false;
  if (static_cast<uint64_t>(o) > size || static_cast<uint64_t>(v) > size) return false;
  return static_cast<uint64_t>(n) < (size - static_cast<size_t>(o)) / 8;
}

// Whether the n + 1 offsets at `offsets` increase from 0 and stay within `room` bytes.
bool offsets_valid(const uint8_t* offsets, int64_t n, size_t room) {
  int64_t previous = 0;
  for (int64_t i = 0; i <= n; ++i) {
    int64_t at;
    std::memcpy(&at, offsets + 8 * i, 8);
    if (at < previous || (i == 0 && at != 0) || static_cast<uint64_t>(at) > room) return false;
    previous = at;
  }
  return true;
}

}  // namespace

const char* check_columns(const uint8_t* data, size_t size, const int64_t* offsets_at, const int64_t* values_at,
                          const int64_t* counts, size_t k, size_t* total) {
  *total = 0;
  for (size_t c = 0; c < k; ++c) {
    const int64_t n = counts[c], o = offsets_at[c], v = values_at[c];
    if (!column_in_buffer(size, n, o, v)) return "a column's offsets or values lie outside the buffer";
    if (!offsets_valid(data + o, n, size - static_cast<size_t>(v)))
      return "a column's offsets are not increasing from 0 within the buffer";
    *total += static_cast<size_t>(n);
  }
  return nullptr;
}

}  // namespace slot
}  // namespace tfrx
