// ParserObject::parse_file: read, check and parse an uncompressed TFRecord file piece by piece in one call.
//
// Reading a batch into a buffer of its own and parsing it afterwards walks every byte three times through
// memory (the copy out of the page cache, the CRC, the parse) and costs a page fault per 4 KiB of fresh
// buffer. Here each piece (a few hundred KiB) is read into one reused buffer, checked and parsed while it
// is in cache, and bytes values are copied into the output before the next piece overwrites them.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "framing.h"
#include "output_buffers.h"
#include "parser_object.h"

namespace tfrx {
namespace py {

namespace {

using tfrx::parse::DenseTarget;
using tfrx::parse::Error;
using tfrx::parse::kBytes;
using tfrx::parse::kFloat;
using tfrx::parse::kInt64;
using tfrx::parse::Kind;
using tfrx::parse::PodBuffer;
using tfrx::parse::Span;
using tfrx::parse::VarColumn;

// The bytes values of one column, end to end in memory of their own.
struct CopiedBytes {
  PodBuffer<uint8_t> data;
  PodBuffer<int64_t> lengths;
  void add(const uint8_t* p, size_t n) {
    lengths.push_back(static_cast<int64_t>(n));
    if (n) std::memcpy(data.grow(n), p, n);
  }
};

// A NumPy array over a parse buffer's storage, `rows` x `width` (width < 0: 1-D). Never over null:
// an empty array still gets an address.
template <typename T>
nb::object owned_values(PodBuffer<T>* buffer, size_t rows, int64_t width = -1) {
  T* raw = buffer->release();
  if (raw == nullptr) raw = static_cast<T*>(std::malloc(sizeof(T)));
  if (raw == nullptr) throw std::bad_alloc();
  nb::capsule owner(raw, [](void* p) noexcept { std::free(p); });
  if (width < 0) return nb::cast(nb::ndarray<nb::numpy, T>(raw, {rows}, owner));
  return nb::cast(nb::ndarray<nb::numpy, T>(raw, {rows, static_cast<size_t>(width)}, owner));
}

// ByteSpans over the packed values: starts from their lengths.
nb::object packed_spans(CopiedBytes* v) {
  const size_t n = v->lengths.size();
  PodBuffer<int64_t> starts;
  int64_t* s = starts.grow(n);
  int64_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    s[i] = at;
    at += v->lengths.data()[i];
  }
  const size_t total = v->data.size();
  return nb::cast(ByteSpans{owned_values(&v->data, total), owned_values(&starts, n), owned_values(&v->lengths, n)});
}

// Row splits [0, c0, c0 + c1, ...] of a variable-length column.
nb::object splits_of(const VarColumn& v) {
  PodBuffer<int64_t> splits;
  const size_t n = v.counts.size();
  int64_t* out = splits.grow(n + 1);
  out[0] = 0;
  for (size_t i = 0; i < n; ++i) out[i + 1] = out[i] + v.counts.data()[i];
  return owned_values(&splits, n + 1);
}

}  // namespace

// The columns being filled, one piece after another.
struct ParserObject::FileColumns {
  explicit FileColumns(size_t n) : i64(n), f32(n), bytes(n), var(n), dense(n) {}
  std::vector<PodBuffer<int64_t>> i64;
  std::vector<PodBuffer<float>> f32;
  std::vector<CopiedBytes> bytes;
  std::vector<VarColumn> var;
  std::vector<VarColumn> no_lists;
  std::vector<DenseTarget> dense;
  std::vector<Span> dense_bytes;  // one piece's dense bytes values, every such column's in turn

  // After the first piece (`first` records, `payload` bytes of them, `left` bytes of the range from its
  // start on): room in every column for the records the call is expected to parse, by the first piece's
  // bytes per record and values per byte, up to the call's limits. Growing by doubling instead copies
  // each column about twice over and leaves up to twice its size reserved, past glibc's mmap threshold
  // for large batches (a mapping of its own, a page fault per 4 KiB, unmapped when freed); release()
  // gives back what goes unused. An estimate from bytes present, never from a length field; under twice
  // the first piece, the columns grow as they go.
  void reserve_for_call(size_t first, int64_t payload, int64_t max_records, int64_t max_bytes, uint64_t left) {
    if (payload <= 0 || first == 0) return;
    double bytes = static_cast<double>(left);
    if (max_bytes > 0) bytes = std::min(bytes, static_cast<double>(max_bytes));
    const double records = std::min(static_cast<double>(max_records),
                                    static_cast<double>(first) * bytes / static_cast<double>(payload));
    const double factor = records / static_cast<double>(first);
    if (factor >= 2.0) reserve_scaled(factor * 1.0625);  // a little over: the estimate is a mean
  }

  // Room for `factor` times the values held now, in every column.
  void reserve_scaled(double factor) {
    auto scaled = [factor](auto& buffer) {
      if (!buffer.empty()) buffer.reserve(static_cast<size_t>(static_cast<double>(buffer.size()) * factor));
    };
    for (auto& b : i64) scaled(b);
    for (auto& b : f32) scaled(b);
    for (auto& b : bytes) {
      scaled(b.data);
      scaled(b.lengths);
    }
    for (auto& v : var) {
      scaled(v.int64_values);
      scaled(v.float_values);
      scaled(v.counts);
    }
  }
};

bool ParserObject::parse_piece(const std::vector<Span>& records, FileColumns* out, tfrx::parse::Error* error) {
  const auto& cols = parser_->columns();
  const size_t n = records.size();
  size_t spans = 0;
  for (const tfrx::parse::ColumnSpec& col : cols)
    if (col.dense && col.kind == kBytes) spans += n * static_cast<size_t>(col.count);
  out->dense_bytes.resize(spans);
  size_t at = 0;
  for (size_t c = 0; c < cols.size(); ++c) {
    if (!cols[c].dense) continue;
    const size_t k = n * static_cast<size_t>(cols[c].count);
    if (cols[c].kind == kInt64) {
      out->dense[c].values = out->i64[c].grow(k);
    } else if (cols[c].kind == kFloat) {
      out->dense[c].values = out->f32[c].grow(k);
    } else {
      out->dense[c].values = out->dense_bytes.data() + at;
      at += k;
    }
  }
  if (!parser_->parse_range(records.data(), 0, static_cast<int64_t>(n), out->dense, &out->var, &out->no_lists,
                            error))
    return false;
  // The values still point into the piece: copied out now.
  at = 0;
  for (size_t c = 0; c < cols.size(); ++c) {
    if (cols[c].kind != kBytes) continue;
    CopiedBytes& packed = out->bytes[c];
    if (cols[c].dense) {
      const size_t k = n * static_cast<size_t>(cols[c].count);
      for (size_t j = 0; j < k; ++j) {
        const Span& v = out->dense_bytes[at + j];
        if (v.data == nullptr) {  // the default's v.size-th value
          const std::string& d = default_bytes_[c][v.size];
          packed.add(reinterpret_cast<const uint8_t*>(d.data()), d.size());
        } else {
          packed.add(v.data, v.size);
        }
      }
      at += k;
    } else {
      PodBuffer<Span>& values = out->var[c].bytes_values;
      for (const Span& v : values) packed.add(v.data, v.size);
      values.truncate(0);
    }
  }
  return true;
}

namespace {

// The bytes of [pos, end) of a file, read into one buffer a piece at a time: the buffer holds
// those from pos() on, size() of them.
class Pieces {
 public:
  Pieces(std::vector<uint8_t>* buf, int fd, int64_t pos, int64_t end) : buf_(*buf), fd_(fd), pos_(pos), end_(end) {}

  const uint8_t* data() const { return buf_.data(); }
  size_t size() const { return have_; }
  int64_t pos() const { return pos_; }
  bool done() const { return pos_ >= end_; }
  // The bytes of the range not yet consumed, buffered or not.
  uint64_t left() const { return static_cast<uint64_t>(end_ - pos_); }

  // Reads what follows the buffered bytes, as much as the buffer holds; false when a read fails.
  bool fill(int* error) {
    const uint64_t left = static_cast<uint64_t>(end_ - pos_) - have_;
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buf_.size() - have_, left));
    if (want == 0) return true;
    const int64_t got = read_at(fd_, buf_.data() + have_, want, pos_ + static_cast<int64_t>(have_), error);
    if (got < 0) return false;
    have_ += static_cast<size_t>(got);
    if (static_cast<size_t>(got) < want) end_ = pos_ + static_cast<int64_t>(have_);  // the file is shorter
    return true;
  }

  // The first n buffered bytes are done with; with `rest`, the others too (read again later).
  void consume(size_t n, bool rest) {
    pos_ += static_cast<int64_t>(n);
    have_ = rest ? 0 : have_ - n;
    if (!rest && have_ != 0) std::memmove(buf_.data(), buf_.data() + n, have_);
  }

  // Room for `need` bytes after the buffered ones (a record longer than the buffer); false when the
  // file does not hold them, so that no length read from it sizes the buffer beyond its bytes.
  bool make_room(uint64_t need) {
    if (need > static_cast<uint64_t>(end_ - pos_) - have_) return false;
    if (have_ + need > buf_.size()) buf_.resize(have_ + static_cast<size_t>(need));
    return true;
  }

 private:
  std::vector<uint8_t>& buf_;
  int fd_;
  int64_t pos_;
  int64_t end_;
  size_t have_ = 0;
};

}  // namespace

nb::list ParserObject::file_result(FileColumns* columns, int64_t records) {
  const auto& cols = parser_->columns();
  const size_t rows = static_cast<size_t>(records);
  nb::list out;
  for (size_t c = 0; c < cols.size(); ++c) {
    const tfrx::parse::ColumnSpec& col = cols[c];
    VarColumn& var = columns->var[c];
    nb::object values;
    if (col.kind == kBytes) values = packed_spans(&columns->bytes[c]);
    else if (col.dense && col.kind == kInt64) values = owned_values(&columns->i64[c], rows, col.count);
    else if (col.dense) values = owned_values(&columns->f32[c], rows, col.count);
    else if (col.kind == kInt64) values = owned_values(&var.int64_values, var.int64_values.size());
    else values = owned_values(&var.float_values, var.float_values.size());
    if (col.dense) out.append(values);
    else out.append(nb::cast(RaggedColumn{values, splits_of(var)}));
  }
  return out;
}

namespace {

// The limits of the next scan: the records left to the call, and the payload bytes (max_bytes > 0).
ScanLimits limits_left(int64_t records, int64_t max_bytes, int64_t payload) {
  ScanLimits limits;
  limits.max_records = records;
  if (max_bytes > 0) limits.max_bytes = max_bytes - payload;
  return limits;
}

// After a scan of the buffered bytes, moves past its records; whether to read on. False ends the call,
// with *damaged set when what stopped the scan was damage or a record the file cuts short.
bool move_on(Pieces* pieces, const ScanResult& scan, bool* damaged) {
  const bool whole = scan.status == ScanStatus::kEnd || scan.status == ScanStatus::kLimit;
  pieces->consume(scan.consumed, whole);  // (kLimit: the bytes after the last record are read again next call)
  if (scan.status == ScanStatus::kLimit || (whole && pieces->done())) return false;
  if (whole) return true;
  // kNeedMore: the record at pos() runs past the buffer.
  *damaged = scan.status != ScanStatus::kNeedMore || !pieces->make_room(scan.need);
  return !*damaged;
}

}  // namespace

void ParserObject::read_file(int fd, int64_t offset, int64_t end, int64_t max_records, int64_t max_bytes,
                             FileColumns* columns, FileParse* out) {
  Pieces pieces(&file_buffer_, fd, offset, end);
  std::vector<Span> records;
  Error error;
  int64_t payload = 0;  // bytes of the records parsed so far
  bool more = true, damaged = false;
  while (more && out->records < max_records && (max_bytes <= 0 || payload < max_bytes)) {
    if (!pieces.fill(&out->io_error)) {
      out->status = kFileReadError;
      break;
    }
    if (pieces.size() == 0) break;
    ScanResult scan;
    scan_records(pieces.data(), pieces.size(), true, limits_left(max_records - out->records, max_bytes, payload),
                 &scan);
    records.resize(scan.starts.size());
    for (size_t i = 0; i < records.size(); ++i) {
      records[i] = Span{pieces.data() + scan.starts[i], static_cast<size_t>(scan.lengths[i])};
      payload += scan.lengths[i];
    }
    if (!records.empty() && !parse_piece(records, columns, &error)) {
      error.record += out->records;
      out->result.error = error;
      out->status = kFileParseError;
      break;
    }
    if (out->records == 0) columns->reserve_for_call(records.size(), payload, max_records, max_bytes, pieces.left());
    out->records += static_cast<int64_t>(records.size());
    more = move_on(&pieces, scan, &damaged);
  }
  if (damaged) out->status = kFileDamaged;
  out->next_offset = pieces.pos();
}

FileParse ParserObject::parse_file(int fd, int64_t offset, int64_t end, int64_t max_records, int64_t piece,
                                   int64_t max_bytes) {
  if (sequence_) throw nb::value_error("parse_file: Examples only");
  if (offset < 0 || end < offset || max_records <= 0 || piece < static_cast<int64_t>(kFramingBytes))
    throw nb::value_error("parse_file: needs 0 <= offset <= end, max_records > 0 and piece >= 16");
  const auto& cols = parser_->columns();
  FileColumns columns(cols.size());
  FileParse out;
  {
    nb::gil_scoped_release release;
    std::vector<uint8_t>& buf = file_buffer_;
    if (buf.size() < static_cast<size_t>(piece)) buf.resize(static_cast<size_t>(piece));
    read_file(fd, offset, end, max_records, max_bytes, &columns, &out);
    if (buf.size() > 2 * static_cast<size_t>(piece)) {  // grown for a long record: not kept for the next call
      buf.resize(static_cast<size_t>(piece));
      buf.shrink_to_fit();
    }
  }
  if (out.status != kFileOk) {
    out.records = 0;  // nothing is returned: the caller reads the range again
    return out;
  }
  out.result.columns = file_result(&columns, out.records);
  return out;
}

}  // namespace py
}  // namespace tfrx
