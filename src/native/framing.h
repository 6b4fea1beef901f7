// TFRecord framing. Each record is
//   uint64 length (little-endian) | uint32 masked_crc32c(length bytes)
//   | data[length] | uint32 masked_crc32c(data)
// Scanning walks a buffer of such records and stops, without reading past the
// buffer, at the first record that is incomplete or damaged.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tfrx {

constexpr size_t kHeaderBytes = 12;  // length + length CRC
constexpr size_t kFooterBytes = 4;   // data CRC
constexpr size_t kFramingBytes = kHeaderBytes + kFooterBytes;

enum class ScanStatus : int {
  kEnd = 0,        // every byte consumed, the buffer ends on a record boundary
  kNeedMore = 1,   // the record at `offset` is incomplete; `need` more bytes complete it
  kLengthCrc = 2,  // the header at `offset` fails its length CRC
  kDataCrc = 3,    // the record at `offset` fails its data CRC
  kLimit = 4,      // stopped by max_records / max_bytes / stop_offset
};

struct ScanLimits {
  int64_t max_records = -1;  // < 0: unlimited
  int64_t max_bytes = -1;    // payload bytes; at least one record is always returned
  int64_t stop_offset = -1;  // stop before a record whose header starts at or after this offset
  // Every `stride`-th record is kept, the first after `skip` records (0 <= skip < stride); the others
  // are stepped over on their length alone (length CRC checked, data CRC not, nothing returned).
  // max_records and max_bytes count the kept records; a scan stops right after the last one it may keep.
  int64_t stride = 1;
  int64_t skip = 0;
};

struct ScanResult {
  std::vector<int64_t> starts;   // offset of each complete record's data
  std::vector<int64_t> lengths;  // its length
  size_t consumed = 0;           // bytes of the complete records (and their framing)
  ScanStatus status = ScanStatus::kEnd;
  size_t offset = 0;             // where the scan stopped (a header offset)
  uint64_t need = 0;             // kNeedMore: bytes missing after the end of the buffer
  uint64_t length = 0;           // the length field of the record at `offset`, when read
  uint32_t expected = 0;         // CRC stored in the file (kLengthCrc / kDataCrc)
  uint32_t actual = 0;           // CRC computed from the bytes
  int64_t walked = 0;            // records stepped over or kept (complete records in `consumed`)
};

void scan_records(const uint8_t* buf, size_t n, bool verify, const ScanLimits& limits, ScanResult* out);

// scan_records over a file instead of a buffer, for strides whose dropped records are large: reads
// only the 12-byte headers (positioned reads of `fd`, from header offset `offset` up to `end`, the
// file's size), so the payloads of dropped records are never read. Returns the header offsets of the
// kept records in `starts` (the caller reads them, e.g. gather_from_fd, which checks their CRCs) and
// their lengths; `offset`/`consumed` is where the walk stopped, relative to `offset`. kNeedMore: the
// record there runs past `end` (`need` bytes missing). `error`: errno of a failed read (0: none).
void walk_records(int fd, int64_t offset, int64_t end, const ScanLimits& limits, ScanResult* out, int* error);

// Up to n bytes of the open file fd from byte pos (positioned reads, retried when interrupted): the bytes
// read, fewer only at the end of the file, or -1 with *error set to errno (ENOSYS without pread).
int64_t read_at(int fd, uint8_t* out, size_t n, int64_t pos, int* error);

// First offset >= from where a 12-byte header with a valid length CRC and a
// length below 2^48 starts, or -1 when none starts before n - 11. Used to
// resynchronise after damage, so it must be fast on long damaged regions.
int64_t find_header(const uint8_t* buf, size_t n, size_t from);

// Writes the 12-byte header and returns the 4-byte footer for a record.
void encode_header(const uint8_t* data, size_t n, uint8_t header[kHeaderBytes], uint8_t footer[kFooterBytes]);

// Frames records [ptrs[i], ptrs[i] + lens[i]) back to back into out, which
// must hold sum(lens) + kFramingBytes * count bytes.
void frame_records(const uint8_t* const* ptrs, const size_t* lens, size_t count, uint8_t* out);

}  // namespace tfrx
