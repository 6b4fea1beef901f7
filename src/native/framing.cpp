#include "framing.h"

#include <cerrno>
#include <cstring>

#include "crc32c.h"

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#define TFRX_HAVE_PREAD 1
#endif

namespace tfrx {

int64_t read_at(int fd, uint8_t* out, size_t n, int64_t pos, int* error) {
#ifdef TFRX_HAVE_PREAD
  size_t got = 0;
  while (got < n) {
    const ssize_t k = pread(fd, out + got, n - got, static_cast<off_t>(pos) + static_cast<off_t>(got));
    if (k < 0) {
      if (errno == EINTR) continue;
      *error = errno;
      return -1;
    }
    if (k == 0) break;
    got += static_cast<size_t>(k);
  }
  return static_cast<int64_t>(got);
#else
  (void)fd;
  (void)out;
  (void)n;
  (void)pos;
  *error = ENOSYS;
  return -1;
#endif
}

namespace {

inline uint64_t load_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);  // the format is little-endian, as are supported hosts
  return v;
}
inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline void store_u32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }

inline uint32_t masked(const uint8_t* p, size_t n) { return crc32c_mask(crc32c(p, n)); }

// A strided scan reads the headers of all records but the payloads of every stride-th only, so the hardware
// prefetcher, which follows a sequential read of the whole buffer, does not run ahead of it: each header and
// each kept payload then waits on memory line by line (5x the cost of a sequential scan, for a buffer that is
// not in cache). The scan asks for the buffer's lines itself, kAheadBytes ahead of the record it reads.
constexpr size_t kAheadBytes = 4096;

struct ReadAhead {
  const uint8_t* buf;
  size_t asked = 0;  // lines before this offset have been asked for

  void reach(size_t pos, size_t n) {
#if defined(__GNUC__) || defined(__clang__)
    const size_t target = pos + kAheadBytes < n ? pos + kAheadBytes : n;
    if (asked < pos) asked = pos;
    for (; asked < target; asked += 64) __builtin_prefetch(buf + asked);
#else
    (void)pos;
    (void)n;
#endif
  }
};

// max_records kept, or the stop offset reached by the header at `pos` (relative to the scan's start).
bool at_limit(const ScanLimits& limits, int64_t count, int64_t pos) {
  return (limits.max_records >= 0 && count >= limits.max_records) ||
         (limits.stop_offset >= 0 && pos >= limits.stop_offset);
}

// Reads the 12-byte header at `pos`; the bytes read (fewer at the end of the file), or -1 with `error` set.
int64_t read_header(int fd, int64_t pos, uint8_t* h, int* error) { return read_at(fd, h, kHeaderBytes, pos, error); }

// The record at `pos` (header `h`, `present` bytes of the file from `pos` on) is complete; else `out` says why.
bool whole_record(const uint8_t* h, uint64_t present, ScanResult* out) {
  const uint64_t len = load_u64(h);
  out->length = len;
  // The length CRC is always checked: a bad length must never drive a read or an allocation.
  const uint32_t stored_len_crc = load_u32(h + 8);
  const uint32_t len_crc = masked(h, 8);
  if (stored_len_crc != len_crc) {
    out->status = ScanStatus::kLengthCrc;
    out->expected = stored_len_crc;
    out->actual = len_crc;
    return false;
  }
  const uint64_t body = present - kHeaderBytes;  // bytes after the header
  if (len > body || body - len < kFooterBytes) {
    out->status = ScanStatus::kNeedMore;
    // len + 4 cannot overflow into a small number: compare before adding.
    out->need = len > UINT64_MAX - kFooterBytes - 1 ? UINT64_MAX : len + kFooterBytes - body;
    return false;
  }
  return true;
}

// Which records a scan keeps (every stride-th, after the skip) and the payload kept so far: the buffer scan's and
// the file walk's bookkeeping, one copy.
class Kept {
 public:
  explicit Kept(const ScanLimits& limits)
      : stride_(limits.stride > 1 ? limits.stride : 1),
        to_skip_(limits.skip > 0 ? limits.skip % stride_ : 0) {}  // records to drop before the next one kept

  bool next_kept() const { return to_skip_ == 0; }

  // Keeping the next record (`len` bytes, `count` kept so far) would pass max_bytes; the first kept never does.
  bool over_bytes(const ScanLimits& limits, int64_t count, uint64_t len) const {
    return next_kept() && limits.max_bytes >= 0 && count > 0 && payload_ + static_cast<int64_t>(len) > limits.max_bytes;
  }

  // Steps over the next record: kept (its `start` and length recorded) or dropped.
  void step(int64_t start, uint64_t len, ScanResult* out) {
    if (next_kept()) {
      out->starts.push_back(start);
      out->lengths.push_back(static_cast<int64_t>(len));
      payload_ += static_cast<int64_t>(len);
      to_skip_ = stride_ - 1;
    } else {
      --to_skip_;
    }
    ++out->walked;
  }

 private:
  int64_t stride_;
  int64_t to_skip_;
  int64_t payload_ = 0;
};

}  // namespace

void scan_records(const uint8_t* buf, size_t n, bool verify, const ScanLimits& limits, ScanResult* out) {
  size_t pos = 0;
  ReadAhead ahead{buf};
  Kept kept(limits);
  for (;;) {
    const size_t remaining = n - pos;
    if (remaining == 0) {
      out->status = ScanStatus::kEnd;
      break;
    }
    const int64_t count = static_cast<int64_t>(out->starts.size());
    if (at_limit(limits, count, static_cast<int64_t>(pos))) {
      out->status = ScanStatus::kLimit;
      break;
    }
    if (remaining < kHeaderBytes) {
      out->status = ScanStatus::kNeedMore;
      out->need = kHeaderBytes - remaining;
      break;
    }
    const uint8_t* h = buf + pos;
    if (limits.stride > 1) ahead.reach(pos, n);
    if (!whole_record(h, remaining, out)) break;
    const uint64_t len = out->length;
    if (kept.over_bytes(limits, count, len)) {
      out->status = ScanStatus::kLimit;
      break;
    }
    const uint8_t* data = h + kHeaderBytes;
    if (verify && kept.next_kept()) {  // a dropped record's payload is stepped over unread
      const uint32_t stored = load_u32(data + len);
      const uint32_t crc = masked(data, len);
      if (stored != crc) {
        out->status = ScanStatus::kDataCrc;
        out->expected = stored;
        out->actual = crc;
        break;
      }
    }
    kept.step(static_cast<int64_t>(pos + kHeaderBytes), len, out);
    pos += kFramingBytes + len;
  }
  out->offset = pos;
  out->consumed = pos;
}

void walk_records(int fd, int64_t offset, int64_t end, const ScanLimits& limits, ScanResult* out, int* error) {
  *error = 0;
  int64_t pos = offset;
  Kept kept(limits);
  uint8_t h[kHeaderBytes];
  for (;;) {
    if (pos >= end) {
      out->status = ScanStatus::kEnd;
      break;
    }
    const int64_t count = static_cast<int64_t>(out->starts.size());
    if (at_limit(limits, count, pos - offset)) {
      out->status = ScanStatus::kLimit;
      break;
    }
    const int64_t got = read_header(fd, pos, h, error);
    if (got < 0) break;
    if (got < static_cast<int64_t>(kHeaderBytes)) {  // the file ends inside the header (or shrank)
      out->status = ScanStatus::kNeedMore;
      out->need = kHeaderBytes - static_cast<uint64_t>(got);
      break;
    }
    if (!whole_record(h, static_cast<uint64_t>(end - pos), out)) break;
    const uint64_t len = out->length;
    if (kept.over_bytes(limits, count, len)) {
      out->status = ScanStatus::kLimit;
      break;
    }
    kept.step(pos, len, out);
    pos += static_cast<int64_t>(kFramingBytes + len);
  }
  out->offset = static_cast<size_t>(pos - offset);
  out->consumed = out->offset;
}

int64_t find_header(const uint8_t* buf, size_t n, size_t from) {
  if (n < kHeaderBytes) return -1;
  for (size_t p = from; p + kHeaderBytes <= n; ++p) {
    // No record is 2^48 bytes long: testing the length's top two bytes first skips
    // the CRC at all but 1 in 65,536 positions of damaged or random bytes.
    if ((buf[p + 6] | buf[p + 7]) != 0) continue;
    if (load_u32(buf + p + 8) == masked(buf + p, 8)) return static_cast<int64_t>(p);
  }
  return -1;
}

void encode_header(const uint8_t* data, size_t n, uint8_t header[kHeaderBytes], uint8_t footer[kFooterBytes]) {
  const uint64_t len = n;
  std::memcpy(header, &len, 8);
  store_u32(header + 8, masked(header, 8));
  store_u32(footer, masked(data, n));
}

void frame_records(const uint8_t* const* ptrs, const size_t* lens, size_t count, uint8_t* out) {
  for (size_t i = 0; i < count; ++i) {
    const size_t n = lens[i];
    // Copy first, then checksum the copy while it is still in cache.
    if (n) std::memcpy(out + kHeaderBytes, ptrs[i], n);
    encode_header(out + kHeaderBytes, n, out, out + kHeaderBytes + n);
    out += kFramingBytes + n;
  }
}

}  // namespace tfrx
