// Record framing for Python: scanning buffers of framed records, framing
// records for writing, and copying records between buffers.
#include <nanobind/ndarray.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "buffer.h"
#include "bytes_objects.h"
#include "framing.h"
#include "numpy_out.h"
#include "results.h"
#include "slot_layout.h"
#include "stream_copy.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tfrx {
namespace py {

namespace {

// What scan_records found (framing.h's ScanResult with NumPy arrays).
struct PyScanResult {
  Int64Array starts, lengths;
  size_t consumed;
  ScanStatus status;
  size_t offset;
  uint64_t need, length;
  uint32_t expected, actual;
  int64_t walked;
};

PyScanResult to_python(ScanResult&& r) {
  return PyScanResult{owned_int64(std::move(r.starts)), owned_int64(std::move(r.lengths)), r.consumed, r.status,
                      r.offset, r.need, r.length, r.expected, r.actual, r.walked};
}

void check_stride(int64_t stride, int64_t skip) {
  if (stride < 1 || skip < 0 || skip >= stride)
    throw nb::value_error("scan: stride must be >= 1 and 0 <= skip < stride");
}

PyScanResult py_scan_records(nb::handle buf, bool verify, int64_t max_records, int64_t max_bytes,
                             int64_t stop_offset, int64_t stride, int64_t skip) {
  check_stride(stride, skip);
  ByteView view(buf);
  ScanLimits limits{max_records, max_bytes, stop_offset, stride, skip};
  ScanResult r;
  {
    nb::gil_scoped_release release;
    scan_records(view.data(), view.size(), verify, limits, &r);
  }
  return to_python(std::move(r));
}

PyScanResult py_walk_records(int fd, int64_t offset, int64_t end, int64_t max_records, int64_t max_bytes,
                             int64_t stop_offset, int64_t stride, int64_t skip) {
  check_stride(stride, skip);
  if (offset < 0) throw nb::value_error("walk_records: offset must be >= 0");
  ScanLimits limits{max_records, max_bytes, stop_offset, stride, skip};
  ScanResult r;
  int error = 0;
  {
    nb::gil_scoped_release release;
    walk_records(fd, offset, end, limits, &r, &error);
  }
  if (error != 0) {
    errno = error;
    PyErr_SetFromErrno(PyExc_OSError);
    throw nb::python_error();
  }
  return to_python(std::move(r));
}

int64_t py_find_header(nb::handle buf, size_t start) {
  ByteView view(buf);
  nb::gil_scoped_release release;
  return find_header(view.data(), view.size(), start);
}

nb::bytes py_frame_records(nb::handle records) {
  nb::object seq = nb::steal(PySequence_Fast(records.ptr(), "frame_records expects a sequence of bytes-like records"));
  if (!seq.is_valid()) throw nb::python_error();
  const Py_ssize_t count = PySequence_Fast_GET_SIZE(seq.ptr());
  PyObject** items = PySequence_Fast_ITEMS(seq.ptr());
  std::vector<Py_buffer> views(static_cast<size_t>(count));
  std::vector<const uint8_t*> ptrs(static_cast<size_t>(count));
  std::vector<size_t> lens(static_cast<size_t>(count));
  Py_ssize_t held = 0;
  struct Release {
    std::vector<Py_buffer>& v;
    Py_ssize_t& n;
    ~Release() {
      for (Py_ssize_t i = 0; i < n; ++i) PyBuffer_Release(&v[i]);
    }
  } release_views{views, held};
  size_t total = 0;
  for (Py_ssize_t i = 0; i < count; ++i) {
    if (PyObject_GetBuffer(items[i], &views[i], PyBUF_SIMPLE) != 0) throw nb::python_error();
    ++held;
    ptrs[i] = static_cast<const uint8_t*>(views[i].buf);
    lens[i] = static_cast<size_t>(views[i].len);
    total += lens[i] + kFramingBytes;
  }
  uint8_t* out;
  nb::bytes result = new_bytes(total, &out);
  {
    nb::gil_scoped_release release;
    frame_records(ptrs.data(), lens.data(), ptrs.size(), out);
  }
  return result;
}

// Frames records[start:] into `out` while they fit; returns the next index and the bytes written.
FrameProgress py_frame_into(nb::handle records, size_t start, nb::handle out) {
  nb::object seq = nb::steal(PySequence_Fast(records.ptr(), "frame_into expects a sequence of bytes-like records"));
  if (!seq.is_valid()) throw nb::python_error();
  const size_t count = static_cast<size_t>(PySequence_Fast_GET_SIZE(seq.ptr()));
  PyObject** items = PySequence_Fast_ITEMS(seq.ptr());
  Py_buffer dst;
  if (PyObject_GetBuffer(out.ptr(), &dst, PyBUF_WRITABLE) != 0) throw nb::python_error();
  uint8_t* w = static_cast<uint8_t*>(dst.buf);
  const size_t capacity = static_cast<size_t>(dst.len);
  size_t used = 0, i = start;
  try {
    for (; i < count; ++i) {
      Py_buffer src;
      if (PyObject_GetBuffer(items[i], &src, PyBUF_SIMPLE) != 0) throw nb::python_error();
      const size_t n = static_cast<size_t>(src.len);
      if (n > capacity - used || capacity - used - n < kFramingBytes) {
        PyBuffer_Release(&src);
        break;
      }
      const uint8_t* p = static_cast<const uint8_t*>(src.buf);
      if (n >= 4096) {
        nb::gil_scoped_release release;
        frame_records(&p, &n, 1, w + used);
      } else {
        frame_records(&p, &n, 1, w + used);
      }
      PyBuffer_Release(&src);
      used += n + kFramingBytes;
    }
  } catch (...) {
    PyBuffer_Release(&dst);
    throw;
  }
  PyBuffer_Release(&dst);
  return FrameProgress{i, used};
}

nb::bytes py_frame_batch(nb::handle data, Int64In starts, Int64In lengths) {
  ByteView view(data);
  check_spans(view.size(), starts, lengths);
  const size_t count = starts.shape(0);
  std::vector<const uint8_t*> ptrs(count);
  std::vector<size_t> lens(count);
  size_t total = 0;
  for (size_t i = 0; i < count; ++i) {
    ptrs[i] = view.data() + starts(i);
    lens[i] = static_cast<size_t>(lengths(i));
    total += lens[i] + kFramingBytes;
  }
  uint8_t* out;
  nb::bytes result = new_bytes(total, &out);
  {
    nb::gil_scoped_release release;
    frame_records(ptrs.data(), lens.data(), count, out);
  }
  return result;
}

// Frames batch records [start, ...) into `out` while they fit; returns the next index and the bytes written.
FrameProgress py_frame_batch_into(nb::handle data, Int64In starts, Int64In lengths, size_t start, nb::handle out) {
  ByteView view(data);
  check_spans(view.size(), starts, lengths);
  Py_buffer dst;
  if (PyObject_GetBuffer(out.ptr(), &dst, PyBUF_WRITABLE) != 0) throw nb::python_error();
  uint8_t* w = static_cast<uint8_t*>(dst.buf);
  const size_t capacity = static_cast<size_t>(dst.len);
  const size_t count = starts.shape(0);
  size_t used = 0, i = start;
  {
    nb::gil_scoped_release release;
    for (; i < count; ++i) {
      const size_t n = static_cast<size_t>(lengths(i));
      if (n > capacity - used || capacity - used - n < kFramingBytes) break;
      const uint8_t* p = view.data() + starts(i);
      frame_records(&p, &n, 1, w + used);
      used += n + kFramingBytes;
    }
  }
  PyBuffer_Release(&dst);
  return FrameProgress{i, used};
}

RecordFraming py_record_framing(nb::handle data) {
  ByteView view(data);
  uint8_t header[kHeaderBytes], footer[kFooterBytes];
  {
    nb::gil_scoped_release release;
    encode_header(view.data(), view.size(), header, footer);
  }
  return RecordFraming{nb::bytes(header, sizeof header), nb::bytes(footer, sizeof footer)};
}

nb::list py_split_records(nb::handle data, Int64In starts, Int64In lengths) {
  ByteView view(data);
  check_spans(view.size(), starts, lengths);
  const size_t count = starts.shape(0);
  nb::list out;
  for (size_t i = 0; i < count; ++i) {
    PyObject* b = PyBytes_FromStringAndSize(reinterpret_cast<const char*>(view.data() + starts(i)),
                                            static_cast<Py_ssize_t>(lengths(i)));
    if (!b) throw nb::python_error();
    out.append(nb::steal(b));
  }
  return out;
}

// Packed bytes columns as 1-D NumPy object arrays, the way the parser returns
// bytes features (a batch's string columns as a shared-memory slot carries
// them). Column c has counts[c] values end to end at data[values_at[c]:] and
// their int64 offsets[counts[c] + 1] (from 0) at data[offsets_at[c]:]. All
// columns share one object arena, and short values repeated across calls
// (categorical codes) come from one cache of bytes objects, each column
// following its own hit rate as in the parser (column c of every call is
// taken to be the same feature). Used with the GIL held only (the module
// does not declare itself free-threaded).
nb::list py_bytes_columns(nb::handle data, Int64In offsets_at, Int64In values_at, Int64In counts) {
  static ShortBytesCache* cache = new ShortBytesCache();  // never freed: its objects may outlive the module
  static std::vector<uint32_t>* skips = new std::vector<uint32_t>();
  ByteView view(data);
  const size_t k = counts.shape(0);
  if (offsets_at.shape(0) != k || values_at.shape(0) != k)
    throw nb::value_error("bytes_columns: offsets_at, values_at and counts must have equal lengths");
  size_t total;
  const char* problem =
      slot::check_columns(view.data(), view.size(), offsets_at.data(), values_at.data(), counts.data(), k, &total);
  if (problem) throw nb::value_error((std::string("bytes_columns: ") + problem).c_str());
  if (skips->size() < k) skips->resize(k, 0);
  ObjectArena arena(total);
  nb::list out;
  for (size_t c = 0; c < k; ++c) {
    const uint8_t* offsets = view.data() + offsets_at(c);
    const uint8_t* values = view.data() + values_at(c);
    out.append(cache->column(&arena, static_cast<size_t>(counts(c)), &(*skips)[c],
                             [&](size_t i, ShortBytesCache* hit) -> PyObject* {
                               int64_t span[2];
                               std::memcpy(span, offsets + 8 * i, 16);
                               const Span s{values + span[0], static_cast<size_t>(span[1] - span[0])};
                               return span_bytes(s, hit, nullptr);
                             }));
  }
  return out;
}

// The values data[starts[i]:starts[i]+lengths[i]] end to end in a new uint8
// array, and their int64 offsets[n + 1] (value i at values[offsets[i]:offsets[i+1]]).
PackedValues py_pack_spans(nb::handle data, Int64In starts, Int64In lengths) {
  ByteView view(data);
  check_spans(view.size(), starts, lengths);
  const size_t count = starts.shape(0);
  void* off_data;
  nb::object offsets = new_array(count + 1, np_dtype_int64, &off_data);
  int64_t* off = static_cast<int64_t*>(off_data);
  off[0] = 0;
  for (size_t i = 0; i < count; ++i) off[i + 1] = off[i] + lengths(i);
  void* out;
  nb::object values = new_array(static_cast<size_t>(off[count]), np_dtype_uint8, &out);
  {
    nb::gil_scoped_release release;
    uint8_t* w = static_cast<uint8_t*>(out);
    for (size_t i = 0; i < count; ++i) std::memcpy(w + off[i], view.data() + starts(i), static_cast<size_t>(lengths(i)));
  }
  return PackedValues{values, offsets};
}

// Bytes columns given as spans (column c's value i is datas[c][starts[c][i] :
// starts[c][i] + lengths[c][i]]) as a shared-memory slot carries them (slot_layout.h).

// The bytes that pack_span_columns writes for columns of these lengths, from an aligned `at`.
size_t py_span_columns_size(nb::list lengths) {
  size_t total = 0;
  for (nb::handle item : lengths) {
    Int64In l = nb::cast<Int64In>(item);
    size_t values = 0;
    for (size_t i = 0; i < l.shape(0); ++i) {
      if (l(i) < 0) throw nb::value_error("span_columns_size: a negative length");
      values += static_cast<size_t>(l(i));
    }
    total += slot::column_size(l.shape(0), values);
  }
  return total;
}

// Writes the columns into `out` from byte `at` on; returns their flat int64
// (offsets_at, values_at, count) per column, the table bytes_columns reads.
nb::object py_pack_span_columns(nb::handle out, size_t at, nb::list datas, nb::list starts, nb::list lengths) {
  const size_t k = nb::len(datas);
  if (nb::len(starts) != k || nb::len(lengths) != k)
    throw nb::value_error("pack_span_columns: datas, starts and lengths must have equal lengths");
  const ByteViews views(datas);
  std::vector<Int64In> s, l;
  std::vector<size_t> counts(k), value_bytes(k);
  for (size_t c = 0; c < k; ++c) {
    s.push_back(nb::cast<Int64In>(starts[c]));
    l.push_back(nb::cast<Int64In>(lengths[c]));
    if (s[c].shape(0) != l[c].shape(0)) throw nb::value_error("pack_span_columns: starts and lengths differ in length");
    check_spans(views[c].size(), s[c], l[c]);
    counts[c] = s[c].shape(0);
    for (size_t i = 0; i < counts[c]; ++i) value_bytes[c] += static_cast<size_t>(l[c](i));
  }
  void* table_data;
  nb::object table = new_array(3 * k, np_dtype_int64, &table_data);
  int64_t* t = static_cast<int64_t*>(table_data);
  const size_t end = slot::place_columns(at, counts.data(), value_bytes.data(), k, t);
  Py_buffer dst;
  if (PyObject_GetBuffer(out.ptr(), &dst, PyBUF_WRITABLE) != 0) throw nb::python_error();
  if (static_cast<size_t>(dst.len) < end) {
    PyBuffer_Release(&dst);
    throw nb::value_error("pack_span_columns: the columns do not fit the buffer");
  }
  {
    nb::gil_scoped_release release;
    uint8_t* base = static_cast<uint8_t*>(dst.buf);
    for (size_t c = 0; c < k; ++c) slot::write_column(base, t + 3 * c, views[c].data(), s[c].data(), l[c].data());
  }
  PyBuffer_Release(&dst);
  return table;
}

// Copies records out of several buffers into one new uint8 array: record i is
// datas[chunks[i]][starts[i] : starts[i] + lengths[i]]; they are laid end to end.
// With `out` (a writable buffer of at least the total length), the records are
// written there and `out` is returned instead of a new array. With `stream`,
// spans of 4 KiB and more are written with non-temporal stores (stream_copy.h):
// for a destination that another process reads later, not this core soon.
nb::object py_gather_spans(nb::list datas, Int64In chunks, Int64In starts, Int64In lengths, nb::handle out_buf,
                           bool stream) {
  const size_t count = starts.shape(0);
  if (chunks.shape(0) != count || lengths.shape(0) != count)
    throw nb::value_error("gather_spans: chunks, starts and lengths must have equal lengths");
  const ByteViews views(datas);
  std::vector<const uint8_t*> from(count);
  size_t total = 0;
  for (size_t i = 0; i < count; ++i) {
    from[i] = views.span(chunks(i), starts(i), lengths(i), "gather_spans");
    total += static_cast<size_t>(lengths(i));
  }
  ByteDestination dst(out_buf, total, "gather_spans");
  {
    nb::gil_scoped_release release;
    uint8_t* w = dst.data;
    for (size_t i = 0; i < count; ++i) {
      const size_t n = static_cast<size_t>(lengths(i));
      if (stream && n >= 4096) copy_streaming(w, from[i], n);
      else if (n) std::memcpy(w, from[i], n);
      w += n;
    }
  }
  return dst.array;
}

}  // namespace

void bind_framing(nb::module_& m) {
  nb::enum_<ScanStatus>(m, "ScanStatus", nb::is_arithmetic(), "What stopped a scan_records call (framing.h).")
      .value("END", ScanStatus::kEnd, "every byte consumed: the buffer ends on a record boundary")
      .value("NEED_MORE", ScanStatus::kNeedMore, "the record at `offset` is incomplete; `need` more bytes complete it")
      .value("LENGTH_CRC", ScanStatus::kLengthCrc, "the header at `offset` fails its length CRC")
      .value("DATA_CRC", ScanStatus::kDataCrc, "the record at `offset` fails its data CRC")
      .value("LIMIT", ScanStatus::kLimit, "stopped by max_records, max_bytes or stop_offset");
  nb::class_<PyScanResult>(m, "ScanResult", "The records scan_records found and what stopped it.")
      .def_prop_ro("starts", [](const PyScanResult& r) { return r.starts; }, nb::rv_policy::automatic,
                   "int64 offset of each complete record's data")
      .def_prop_ro("lengths", [](const PyScanResult& r) { return r.lengths; }, nb::rv_policy::automatic,
                   "int64 length of each complete record")
      .def_ro("consumed", &PyScanResult::consumed, "bytes of the complete records and their framing")
      .def_ro("status", &PyScanResult::status, "what stopped the scan at `offset`")
      .def_ro("offset", &PyScanResult::offset, "where the scan stopped (a header offset)")
      .def_ro("need", &PyScanResult::need, "NEED_MORE: bytes missing after the end of the buffer")
      .def_ro("length", &PyScanResult::length, "the length field of the record at `offset`, when read")
      .def_ro("expected", &PyScanResult::expected, "LENGTH_CRC / DATA_CRC: the masked CRC stored in the file")
      .def_ro("actual", &PyScanResult::actual, "LENGTH_CRC / DATA_CRC: the masked CRC of the bytes")
      .def_ro("walked", &PyScanResult::walked, "records stepped over or kept before `offset`");
  m.def("scan_records", &py_scan_records, "buf"_a, "verify"_a = true, "max_records"_a = -1, "max_bytes"_a = -1,
        "stop_offset"_a = -1, "stride"_a = 1, "skip"_a = 0,
        "Walks TFRecord framing in `buf` and returns a ScanResult: every complete record up to where\n"
        "the scan stopped, and why (checking data CRCs when `verify`). With `stride`, only every\n"
        "stride-th record is returned, the first after `skip` (< stride) records; the others are stepped\n"
        "over on their checked length, their data CRCs unread; the limits count the records returned.");
  m.def("walk_records", &py_walk_records, "fd"_a, "offset"_a, "end"_a, "max_records"_a = -1, "max_bytes"_a = -1,
        "stop_offset"_a = -1, "stride"_a = 1, "skip"_a = 0,
        "scan_records over the open file `fd` from the header at byte `offset` to byte `end` (its size),\n"
        "reading only the 12-byte headers (positioned reads): `starts` are the header offsets of the\n"
        "records kept (every stride-th, after `skip`), `offset` and `stop_offset` count from `offset`.\n"
        "The payloads are not read or checked: gather_records reads the kept ones. OSError on a failed read.");
  m.def("find_header", &py_find_header, "buf"_a, "start"_a = 0,
        "First offset >= start of a 12-byte header whose length CRC validates and whose length is below 2^48, or -1.");
  m.def("frame_records", &py_frame_records, "records"_a,
        "TFRecord framing of a sequence of bytes-like records, concatenated into one bytes object.");
  m.def("frame_batch", &py_frame_batch, "data"_a, "starts"_a, "lengths"_a,
        "TFRecord framing of records data[starts[i]:starts[i]+lengths[i]], as one bytes object.");
  m.def("frame_into", &py_frame_into, "records"_a, "start"_a, "out"_a,
        "Frames records[start:] into the writable buffer `out` while they fit.\n"
        "Returns a FrameProgress: the index of the first record not framed, and the bytes written.");
  m.def("frame_batch_into", &py_frame_batch_into, "data"_a, "starts"_a, "lengths"_a, "start"_a, "out"_a,
        "frame_into for records data[starts[i]:starts[i]+lengths[i]], i >= start.");
  m.def("record_framing", &py_record_framing, "data"_a,
        "The RecordFraming (12-byte header, 4-byte footer) of one record.");
  m.def("split_records", &py_split_records, "data"_a, "starts"_a, "lengths"_a,
        "A list of bytes objects, data[starts[i]:starts[i]+lengths[i]].");
  m.def(
      "pack_spans",
      [](nb::handle data, Int64In starts, Int64In lengths) {
        init_numpy();
        return py_pack_spans(data, starts, lengths);
      },
      "data"_a, "starts"_a, "lengths"_a,
      "PackedValues: data[starts[i]:starts[i]+lengths[i]] end to end in a new uint8 array, and int64 offsets[n + 1].");
  m.def("bytes_columns", &py_bytes_columns, "data"_a, "offsets_at"_a, "values_at"_a, "counts"_a,
        "Packed bytes columns as 1-D object arrays: column c's counts[c] values end to end at data[values_at[c]:],\n"
        "their int64 offsets (counts[c] + 1 of them, from 0) at data[offsets_at[c]:]; short repeated values shared.");
  m.def(
      "buffer_address",
      [](nb::handle obj) {
        ByteView view(obj);
        return reinterpret_cast<uintptr_t>(view.data());
      },
      "obj"_a, "The address of a C-contiguous buffer's first byte (cheaper than NumPy's __array_interface__).");
  m.def("span_columns_size", &py_span_columns_size, "lengths"_a,
        "The bytes pack_span_columns writes for columns with these int64 value lengths (from an aligned start).");
  m.def(
      "pack_span_columns",
      [](nb::handle out, size_t at, nb::list datas, nb::list starts, nb::list lengths) {
        init_numpy();
        return py_pack_span_columns(out, at, datas, starts, lengths);
      },
      "out"_a, "at"_a, "datas"_a, "starts"_a, "lengths"_a,
      "Bytes columns given as spans (value i of column c: datas[c][starts[c][i]:starts[c][i]+lengths[c][i]])\n"
      "written into `out` from byte `at` on, per column its int64 offsets (n + 1, from 0) then its values,\n"
      "each part 64-byte aligned. Returns the flat int64 (offsets_at, values_at, count) per column.");
  m.def(
      "gather_spans",
      [](nb::list datas, Int64In chunks, Int64In starts, Int64In lengths, nb::handle out, bool stream) {
        init_numpy();
        return py_gather_spans(datas, chunks, starts, lengths, out, stream);
      },
      "datas"_a, "chunks"_a, "starts"_a, "lengths"_a, "out"_a = nb::none(), "stream"_a = false,
      "The records datas[chunks[i]][starts[i]:starts[i]+lengths[i]] end to end, in a new uint8 array or in `out`.");
}

}  // namespace py
}  // namespace tfrx
