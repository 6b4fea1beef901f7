// The parser as a Python object (`ParserCore`): named column specs in, one
// ParseResult out. Owns the per-parser state that makes repeated calls cheap:
// the size hints of the previous call, the short-bytes cache.
//
// Output per Example column: dense numeric -> a [batch, count] array; dense
// bytes -> a flat object array (or ByteSpans); variable length -> a
// (values, row_splits) tuple. Per sequence column: (values, step_splits,
// record_splits). Bytes values come as Python bytes, or with `views` as
// ByteSpans: starts and lengths into the input buffer (no copy) when every
// value lies in it, else into one new buffer the values are packed into.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bytes_objects.h"
#include "parse.h"
#include "results.h"
#include "shuffle.h"

namespace tfrx {
namespace py {

namespace nb = nanobind;

// One requested Example (or context) feature. Defaults come as a sequence of
// `count` values (int64, float or bytes), or for float columns as float32
// bytes so that every bit pattern (a signalling NaN included) reaches the
// output unchanged. `skip_empty` (variable-length columns only) makes an
// empty Feature neither override an earlier occurrence of the key nor count
// as present, as TensorFlow does for dense features and FixedLenSequenceFeature.
struct ColumnSpec {
  ColumnSpec(std::string key, tfrx::parse::Kind kind, bool dense, int64_t count, nb::handle default_value,
             bool skip_empty);
  tfrx::parse::ColumnSpec spec;
  std::vector<std::string> default_bytes;
  bool skip_empty = false;
};

// Bytes values as spans of `data` (a buffer object): value i is
// data[starts[i] : starts[i] + lengths[i]].
struct ByteSpans {
  nb::object data;
  nb::object starts;
  nb::object lengths;
};

struct ParseResult {
  nb::list columns;
  nb::list sequence_columns;
  std::optional<tfrx::parse::Error> error;
};

// What parse_file read: the columns of `records` records, and the offset of the next record's header.
// A status other than kFileOk leaves the columns empty: the caller reads the range again another way,
// which names the damage (file, record, byte offset) or the parse error.
enum FileStatus : int { kFileOk = 0, kFileDamaged = 1, kFileParseError = 2, kFileReadError = 3 };
struct FileParse {
  ParseResult result;
  int64_t records = 0;
  int64_t next_offset = 0;
  int status = kFileOk;
  int io_error = 0;  // kFileReadError: errno of the failed read
};

class ParserObject {
 public:
  ParserObject(const std::vector<const ColumnSpec*>& columns,
               std::vector<tfrx::parse::SequenceColumnSpec> sequence_columns, bool sequence);

  // Records laid out as data[starts[i] : starts[i] + lengths[i]].
  ParseResult parse_buffer(nb::handle data, nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig> starts,
                           nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig> lengths, int threads, bool views);

  // Records as a sequence of bytes-like objects (no copies of them).
  ParseResult parse_list(nb::handle records, int threads, bool views);

  // Records a shuffle buffer moved out (shuffle.h), each in its own allocation: parsed where they are.
  ParseResult parse_records(const tfrx::RecordSet& records, int threads, bool views);

  // Records in runs in several buffers (record i is buffers[which[i]][starts[i] : starts[i] + lengths[i]],
  // buffer.h's ByteViews): parsed where they are.
  ParseResult parse_spans(nb::handle buffers, nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig> which,
                          nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig> starts,
                          nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig> lengths, int threads, bool views);

  // The records of an uncompressed TFRecord file from the header at byte `offset` up to byte `end`, at
  // most `max_records` of them (and, max_bytes > 0, none more once their payloads reach max_bytes):
  // read with positioned reads of `fd` in pieces of `piece` bytes into one buffer that is reused, both
  // CRCs checked, each piece parsed while it is in cache, bytes values copied out (as ByteSpans over
  // buffers of their own) before the next piece is read. Examples only (GIL released). The buffer grows
  // past `piece` only for a record longer than it, never beyond the bytes the file holds.
  FileParse parse_file(int fd, int64_t offset, int64_t end, int64_t max_records, int64_t piece, int64_t max_bytes);

 private:
  using Span = tfrx::parse::Span;
  // Where the records live: one buffer (parse_buffer) or none (parse_list).
  struct Input {
    const uint8_t* base = nullptr;
    size_t size = 0;
    nb::handle owner;
  };
  // Sizes a column gathered in the previous call (all chunks together).
  struct SizeHint {
    size_t values = 0, counts = 0, steps = 0;
  };

  ParseResult run(const std::vector<Span>& records, int threads, bool views, const Input& input);
  // parse_file's steps (parser_file.cpp): one piece's records parsed into the columns being filled.
  struct FileColumns;
  bool parse_piece(const std::vector<Span>& records, FileColumns* out, tfrx::parse::Error* error);
  nb::list file_result(FileColumns* columns, int64_t records);
  void read_file(int fd, int64_t offset, int64_t end, int64_t max_records, int64_t max_bytes, FileColumns* columns,
                 FileParse* out);
  // One bytes column of n values, span(i) giving value i (a null-data span
  // of size j standing for defaults[j]).
  template <typename SpanAt>
  nb::object bytes_column(size_t n, SpanAt span, const std::vector<std::string>* defaults, ObjectArena* arena,
                          uint32_t* skip, BytesFiller* filler, bool views, const Input& input);

  template <typename Room>
  static void reserve_like(tfrx::parse::VarColumn* v, tfrx::parse::Kind kind, const SizeHint& h, Room room);

  std::unique_ptr<tfrx::parse::Parser> parser_;
  std::vector<SizeHint> hints_;
  int64_t previous_bytes_ = 0;
  std::vector<std::vector<std::string>> default_bytes_;
  ShortBytesCache cache_;
  std::vector<uint32_t> skip_;  // per column, then per sequence column: batches left without the cache
  bool sequence_ = false;
  std::vector<uint8_t> file_buffer_;  // parse_file's pieces
};

// COO indices for a SparseArray from row splits (a parse result's, or a
// caller's through SparseArray.from_row_splits: checked before use).
SparseIndices sparse_indices(nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig> outer,
                             std::optional<nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig>> inner,
                             bool with_indices);

}  // namespace py
}  // namespace tfrx
