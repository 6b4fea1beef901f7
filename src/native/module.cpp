// Python bindings for the native core. Only binding code lives here; the work
// is in the concern-specific files (crc32c, framing, example codec, parser).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <string>
#include <utility>
#include <vector>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <new>
#include <thread>

#include "allocator.h"
#include "buffer.h"
#include "crc32c.h"
#include "framing.h"
#include "example_decode.h"
#include "example_encode.h"
#include "parse.h"
#include "index.h"
#include "jpeg_partial_bind.h"
#include "resize.h"
#include "workers.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// ---------------------------------------------------------------- crc32c
uint32_t py_crc32c(nb::handle data, uint32_t value) {
  tfrx::ByteView view(data);
  nb::gil_scoped_release release;
  return tfrx::crc32c_extend(value, view.data(), view.size());
}

uint32_t py_crc32c_portable(nb::handle data, uint32_t value) {
  tfrx::ByteView view(data);
  nb::gil_scoped_release release;
  return tfrx::crc32c_extend_portable(value, view.data(), view.size());
}

uint32_t py_masked_crc32c(nb::handle data) {
  tfrx::ByteView view(data);
  nb::gil_scoped_release release;
  return tfrx::crc32c_mask(tfrx::crc32c(view.data(), view.size()));
}


// ---------------------------------------------------------------- framing
using Int64Array = nb::ndarray<nb::numpy, int64_t, nb::ndim<1>>;
using Int64In = nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// Hands a vector's memory to NumPy; the capsule frees it with the array.
Int64Array owned_int64(std::vector<int64_t>&& v) {
  auto* heap = new std::vector<int64_t>(std::move(v));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<int64_t>*>(p); });
  return Int64Array(heap->data(), {heap->size()}, owner);
}

nb::tuple py_scan_records(nb::handle buf, bool verify, int64_t max_records, int64_t max_bytes,
                          int64_t stop_offset) {
  tfrx::ByteView view(buf);
  tfrx::ScanLimits limits{max_records, max_bytes, stop_offset};
  tfrx::ScanResult r;
  {
    nb::gil_scoped_release release;
    tfrx::scan_records(view.data(), view.size(), verify, limits, &r);
  }
  return nb::make_tuple(owned_int64(std::move(r.starts)), owned_int64(std::move(r.lengths)),
                        r.consumed, static_cast<int>(r.status), r.offset, r.need, r.length,
                        r.expected, r.actual);
}

int64_t py_find_header(nb::handle buf, size_t start) {
  tfrx::ByteView view(buf);
  nb::gil_scoped_release release;
  return tfrx::find_header(view.data(), view.size(), start);
}

// A new bytes object of size n, filled in place before anyone else sees it.
nb::bytes new_bytes(size_t n, uint8_t** data) {
  PyObject* obj = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(n));
  if (!obj) throw nb::python_error();
  *data = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(obj));
  return nb::steal<nb::bytes>(obj);
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
    total += lens[i] + tfrx::kFramingBytes;
  }
  uint8_t* out;
  nb::bytes result = new_bytes(total, &out);
  {
    nb::gil_scoped_release release;
    tfrx::frame_records(ptrs.data(), lens.data(), ptrs.size(), out);
  }
  return result;
}

// Frames records[start:] into `out` while they fit; returns (next index, bytes written).
nb::tuple py_frame_into(nb::handle records, size_t start, nb::handle out) {
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
      if (n > capacity - used || capacity - used - n < tfrx::kFramingBytes) {
        PyBuffer_Release(&src);
        break;
      }
      const uint8_t* p = static_cast<const uint8_t*>(src.buf);
      if (n >= 4096) {
        nb::gil_scoped_release release;
        tfrx::frame_records(&p, &n, 1, w + used);
      } else {
        tfrx::frame_records(&p, &n, 1, w + used);
      }
      PyBuffer_Release(&src);
      used += n + tfrx::kFramingBytes;
    }
  } catch (...) {
    PyBuffer_Release(&dst);
    throw;
  }
  PyBuffer_Release(&dst);
  return nb::make_tuple(i, used);
}

void check_spans(size_t size, const Int64In& starts, const Int64In& lengths) {
  if (starts.shape(0) != lengths.shape(0)) throw nb::value_error("starts and lengths differ in length");
  for (size_t i = 0; i < starts.shape(0); ++i) {
    const int64_t s = starts(i), n = lengths(i);
    if (s < 0 || n < 0 || static_cast<uint64_t>(s) > size || static_cast<uint64_t>(n) > size - static_cast<uint64_t>(s))
      throw nb::value_error("a record lies outside the data buffer");
  }
}

nb::bytes py_frame_batch(nb::handle data, Int64In starts, Int64In lengths) {
  tfrx::ByteView view(data);
  check_spans(view.size(), starts, lengths);
  const size_t count = starts.shape(0);
  std::vector<const uint8_t*> ptrs(count);
  std::vector<size_t> lens(count);
  size_t total = 0;
  for (size_t i = 0; i < count; ++i) {
    ptrs[i] = view.data() + starts(i);
    lens[i] = static_cast<size_t>(lengths(i));
    total += lens[i] + tfrx::kFramingBytes;
  }
  uint8_t* out;
  nb::bytes result = new_bytes(total, &out);
  {
    nb::gil_scoped_release release;
    tfrx::frame_records(ptrs.data(), lens.data(), count, out);
  }
  return result;
}

// Frames batch records [start, ...) into `out` while they fit; returns (next index, bytes written).
nb::tuple py_frame_batch_into(nb::handle data, Int64In starts, Int64In lengths, size_t start, nb::handle out) {
  tfrx::ByteView view(data);
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
      if (n > capacity - used || capacity - used - n < tfrx::kFramingBytes) break;
      const uint8_t* p = view.data() + starts(i);
      tfrx::frame_records(&p, &n, 1, w + used);
      used += n + tfrx::kFramingBytes;
    }
  }
  PyBuffer_Release(&dst);
  return nb::make_tuple(i, used);
}

nb::tuple py_record_framing(nb::handle data) {
  tfrx::ByteView view(data);
  uint8_t header[tfrx::kHeaderBytes], footer[tfrx::kFooterBytes];
  {
    nb::gil_scoped_release release;
    tfrx::encode_header(view.data(), view.size(), header, footer);
  }
  return nb::make_tuple(nb::bytes(header, sizeof header), nb::bytes(footer, sizeof footer));
}

nb::list py_split_records(nb::handle data, Int64In starts, Int64In lengths) {
  tfrx::ByteView view(data);
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

// ---------------------------------------------------------------- example codec
namespace ex = tfrx::example;

// NumPy is reached through its Python API (np.empty + the buffer protocol) so
// the build needs no NumPy headers; both objects are fetched once and kept.
PyObject* np_empty = nullptr;
PyObject* np_dtype_int64 = nullptr;
PyObject* np_dtype_float32 = nullptr;
PyObject* np_dtype_uint8 = nullptr;

void init_numpy() {
  if (np_empty) return;
  // Calls into Python below may let another thread run: np_empty, the flag the
  // other threads test, is published only once everything else is set.
  nb::module_ np = nb::module_::import_("numpy");
  PyObject* empty = np.attr("empty").inc_ref().ptr();
  PyObject* i64 = np.attr("dtype")("int64").inc_ref().ptr();
  PyObject* f32 = np.attr("dtype")("float32").inc_ref().ptr();
  PyObject* u8 = np.attr("dtype")("uint8").inc_ref().ptr();
  if (np_empty) return;  // another thread finished first; keep its objects
  np_dtype_int64 = i64;
  np_dtype_float32 = f32;
  np_dtype_uint8 = u8;
  np_empty = empty;
}

// A new, owned, C-contiguous 1-D NumPy array and a pointer to its data. The
// pointer is read from the ndarray object's `data` field, which follows the
// object header in every NumPy release (what PyArray_DATA reads), saving a
// buffer-protocol round trip per array.
nb::object new_array(size_t n, PyObject* dtype, void** data) {
  PyObject* len = PyLong_FromSize_t(n);
  if (!len) throw nb::python_error();
  PyObject* args[2] = {len, dtype};
  PyObject* arr = PyObject_Vectorcall(np_empty, args, 2, nullptr);
  Py_DECREF(len);
  if (!arr) throw nb::python_error();
  struct ArrayHead {
    PyObject_HEAD
    char* data;
  };
  *data = reinterpret_cast<ArrayHead*>(arr)->data;
  return nb::steal(arr);
}


// Copies records out of several buffers into one new uint8 array: record i is
// datas[chunks[i]][starts[i] : starts[i] + lengths[i]]; they are laid end to end.
// With `out` (a writable buffer of at least the total length), the records are
// written there and `out` is returned instead of a new array.
nb::object py_gather_spans(nb::list datas, Int64In chunks, Int64In starts, Int64In lengths, nb::handle out_buf) {
  const size_t count = starts.shape(0);
  if (chunks.shape(0) != count || lengths.shape(0) != count)
    throw nb::value_error("gather_spans: chunks, starts and lengths must have equal lengths");
  std::vector<std::unique_ptr<tfrx::ByteView>> views;
  const size_t nbuf = nb::len(datas);
  views.reserve(nbuf);
  for (size_t k = 0; k < nbuf; ++k) views.emplace_back(new tfrx::ByteView(datas[k]));
  size_t total = 0;
  for (size_t i = 0; i < count; ++i) {
    const int64_t c = chunks(i), s = starts(i), n = lengths(i);
    if (c < 0 || static_cast<size_t>(c) >= nbuf) throw nb::index_error("gather_spans: chunk index out of range");
    if (s < 0 || n < 0 || static_cast<size_t>(s) > views[c]->size() || static_cast<size_t>(n) > views[c]->size() - s)
      throw nb::value_error("gather_spans: a record lies outside its buffer");
    total += static_cast<size_t>(n);
  }
  void* out = nullptr;
  nb::object arr;
  Py_buffer dst{};
  bool have_dst = false;
  if (!out_buf.is_none()) {
    if (PyObject_GetBuffer(out_buf.ptr(), &dst, PyBUF_WRITABLE) != 0) throw nb::python_error();
    have_dst = true;
    if (static_cast<size_t>(dst.len) < total) {
      PyBuffer_Release(&dst);
      throw nb::value_error("gather_spans: out is smaller than the records");
    }
    out = dst.buf;
    arr = nb::borrow(out_buf);
  } else {
    arr = new_array(total, np_dtype_uint8, &out);
  }
  {
    nb::gil_scoped_release release;
    uint8_t* w = static_cast<uint8_t*>(out);
    for (size_t i = 0; i < count; ++i) {
      const size_t n = static_cast<size_t>(lengths(i));
      if (n) std::memcpy(w, views[chunks(i)]->data() + starts(i), n);
      w += n;
    }
  }
  if (have_dst) PyBuffer_Release(&dst);
  return arr;
}


// The draws of the window shuffle (tfrx/data/shuffle.py) on record numbers:
// before every draw the buffer is refilled up to `size` from next_id..read_end;
// a draw takes buffer[int(u * fill)] and moves the last element into its slot.
// Stops after `count` outputs, or when it needs more records (status 1: read
// more, or mark the input exhausted) or more uniform draws (status 2), or when
// an exhausted input's buffer is empty (status 3).
// Returns (status, outputs written, fill, uniforms used, next_id).
nb::tuple py_shuffle_draws(nb::ndarray<int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> buffer, int64_t fill,
                           nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu> uniforms,
                           int64_t upos, int64_t next_id, int64_t read_end, bool exhausted,
                           nb::ndarray<int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> out, int64_t count) {
  const int64_t size = static_cast<int64_t>(buffer.shape(0));
  const int64_t nu = static_cast<int64_t>(uniforms.shape(0));
  if (count > static_cast<int64_t>(out.shape(0)) || fill < 0 || fill > size || upos < 0 || upos > nu)
    throw nb::value_error("shuffle_draws: inconsistent arguments");
  int64_t* b = buffer.data();
  int64_t* o = out.data();
  const double* u = uniforms.data();
  int64_t n = 0;
  int status = 0;
  while (n < count) {
    while (fill < size && next_id < read_end) b[fill++] = next_id++;
    if (fill < size && !exhausted) { status = 1; break; }
    if (fill == 0) { status = 3; break; }
    if (upos >= nu) { status = 2; break; }
    const int64_t i = static_cast<int64_t>(u[upos++] * static_cast<double>(fill));
    o[n++] = b[i];
    b[i] = b[fill - 1];
    --fill;
  }
  return nb::make_tuple(status, n, fill, upos, next_id);
}

[[noreturn]] void raise_decode_error(const char* message_type, size_t offset, const char* what) {
  nb::object cls = nb::module_::import_("tfrx.errors").attr("DecodeError");
  std::string msg = std::string("invalid ") + message_type + " at byte " + std::to_string(offset) + ": " + what;
  nb::object exc = cls(nb::str(msg.c_str()), "offset"_a = offset);
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw nb::python_error();
}

nb::object feature_value(uint8_t kind, const ex::Chunk* b, const ex::Chunk* e) {
  size_t n = ex::count_values(kind, b, e);
  void* data;
  switch (kind) {
    case ex::kInt64: {
      nb::object arr = new_array(n, np_dtype_int64, &data);
      ex::copy_int64s(b, e, static_cast<int64_t*>(data), n);
      return arr;
    }
    case ex::kFloat: {
      nb::object arr = new_array(n, np_dtype_float32, &data);
      ex::copy_floats(b, e, static_cast<float*>(data));
      return arr;
    }
    case ex::kBytes: {
      PyObject* list = PyList_New(static_cast<Py_ssize_t>(n));
      if (!list) throw nb::python_error();
      nb::object result = nb::steal(list);
      Py_ssize_t i = 0;
      for (const ex::Chunk* c = b; c < e; ++c) {
        PyObject* item = PyBytes_FromStringAndSize(reinterpret_cast<const char*>(c->data),
                                                   static_cast<Py_ssize_t>(c->size));
        if (!item) throw nb::python_error();
        PyList_SET_ITEM(list, i++, item);
      }
      return result;
    }
    default:
      return nb::none();
  }
}

// Feature names repeat from record to record in the same order, so the str
// object made for the name at each position is kept and reused when the next
// record has the same bytes there (saving the UTF-8 decode and the hash).
// Only touched with the GIL held.
struct KeyCache {
  static constexpr size_t kSlots = 512;
  std::vector<std::string> bytes;
  std::vector<PyObject*> names;  // owned references, kept for the life of the process

  PyObject* lookup(size_t position, const uint8_t* key, size_t n) {
    if (position < bytes.size() && bytes[position].size() == n &&
        (n == 0 || std::memcmp(bytes[position].data(), key, n) == 0))
      return names[position];
    return nullptr;
  }

  void store(size_t position, const uint8_t* key, size_t n, PyObject* name) {
    if (position >= kSlots || n > 256) return;
    if (position >= bytes.size()) {
      bytes.resize(position + 1);
      names.resize(position + 1, nullptr);
    }
    bytes[position].assign(reinterpret_cast<const char*>(key), n);
    Py_XDECREF(names[position]);
    Py_INCREF(name);
    names[position] = name;
  }
};

KeyCache context_keys, feature_list_keys;

// Map keys are proto3 strings: protobuf rejects invalid UTF-8 in them, and so do we.
nb::object entry_key(const ex::Entry& entry, const uint8_t* base, const char* message_type, KeyCache& cache,
                     size_t position) {
  if (PyObject* hit = cache.lookup(position, entry.key, entry.key_size)) return nb::borrow(hit);
  PyObject* key = PyUnicode_DecodeUTF8(reinterpret_cast<const char*>(entry.key),
                                       static_cast<Py_ssize_t>(entry.key_size), nullptr);
  if (!key) {
    PyErr_Clear();
    size_t offset = entry.key ? static_cast<size_t>(entry.key - base) : 0;
    raise_decode_error(message_type, offset, "feature name is not valid UTF-8");
  }
  cache.store(position, entry.key, entry.key_size, key);
  return nb::steal(key);
}

// Later entries replace earlier ones with the same key (protobuf map merge);
// an empty Feature (no kind) removes the key unless keep_empty maps it to None.
void set_entry(nb::dict& out, nb::object key, nb::object value, bool keep, bool absent) {
  if (absent && !keep) {
    if (PyDict_Contains(out.ptr(), key.ptr()) == 1) PyDict_DelItem(out.ptr(), key.ptr());
    return;
  }
  if (PyDict_SetItem(out.ptr(), key.ptr(), value.ptr()) != 0) throw nb::python_error();
}

nb::dict features_dict(const std::vector<ex::Entry>& entries, const std::vector<ex::Chunk>& chunks,
                       const uint8_t* base, bool keep_empty, const char* message_type) {
  nb::dict out;
  const ex::Chunk* c = chunks.data();
  size_t position = 0;
  for (const ex::Entry& entry : entries) {
    nb::object key = entry_key(entry, base, message_type, context_keys, position++);
    set_entry(out, key, feature_value(entry.kind, c + entry.begin, c + entry.end), keep_empty,
              entry.kind == ex::kNone);
  }
  return out;
}

// A per-thread decoded view whose vectors keep their capacity between calls.
// A call made while another is still building its dict on the same thread
// (a finalizer run by the garbage collector, say) gets a fresh one instead.
template <typename View>
struct ReusedView {
  static View& shared() {
    thread_local View view;
    return view;
  }
  static bool& busy() {
    thread_local bool flag = false;
    return flag;
  }
  View fresh;
  bool owner;
  View& view;
  ReusedView() : owner(!busy()), view(owner ? shared() : fresh) { busy() = true; }
  ~ReusedView() {
    if (owner) busy() = false;
  }
};

// The wire pass runs without the GIL for records this large; for small ones
// releasing and taking it back would cost more than the pass. Building the
// Python objects needs the GIL either way.
constexpr size_t kReleaseGilBytes = 64 * 1024;

nb::dict py_decode_example(nb::handle data, bool keep_empty) {
  init_numpy();
  tfrx::ByteView view(data);
  ReusedView<ex::ExampleView> reused;
  ex::ExampleView& decoded = reused.view;
  ex::DecodeError err;
  bool ok;
  if (view.size() >= kReleaseGilBytes) {
    nb::gil_scoped_release release;
    ok = ex::decode_example(view.data(), view.size(), &decoded, &err);
  } else {
    ok = ex::decode_example(view.data(), view.size(), &decoded, &err);
  }
  if (!ok) raise_decode_error("Example", err.offset, err.what);
  return features_dict(decoded.features, decoded.chunks, view.data(), keep_empty, "Example");
}

nb::tuple py_decode_sequence_example(nb::handle data, bool keep_empty) {
  init_numpy();
  tfrx::ByteView view(data);
  ReusedView<ex::SequenceExampleView> reused;
  ex::SequenceExampleView& decoded = reused.view;
  ex::DecodeError err;
  bool ok;
  if (view.size() >= kReleaseGilBytes) {
    nb::gil_scoped_release release;
    ok = ex::decode_sequence_example(view.data(), view.size(), &decoded, &err);
  } else {
    ok = ex::decode_sequence_example(view.data(), view.size(), &decoded, &err);
  }
  if (!ok) raise_decode_error("SequenceExample", err.offset, err.what);
  nb::dict context =
      features_dict(decoded.context, decoded.chunks, view.data(), keep_empty, "SequenceExample");
  nb::dict lists;
  const ex::Chunk* c = decoded.chunks.data();
  size_t position = 0;
  for (const ex::Entry& entry : decoded.feature_lists) {
    nb::object key = entry_key(entry, view.data(), "SequenceExample", feature_list_keys, position++);
    nb::list steps;
    for (uint32_t s = entry.begin; s < entry.end; ++s) {
      const ex::Step& step = decoded.steps[s];
      steps.append(feature_value(step.kind, c + step.begin, c + step.end));
    }
    if (PyDict_SetItem(lists.ptr(), key.ptr(), steps.ptr()) != 0) throw nb::python_error();
  }
  return nb::make_tuple(context, lists);
}

// Packs a list of bytes into (uint8 data, int64 offsets[n + 1]); raises
// TypeError at the first item that is not exactly bytes, so the caller can
// fall back to its general conversion.
nb::tuple py_pack_bytes(nb::handle items) {
  init_numpy();
  PyObject* seq = PySequence_Fast(items.ptr(), "pack_bytes needs a sequence");
  if (!seq) throw nb::python_error();
  nb::object keep = nb::steal(seq);
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  PyObject** objs = PySequence_Fast_ITEMS(seq);
  void* off_data;
  nb::object offsets = new_array(static_cast<size_t>(n) + 1, np_dtype_int64, &off_data);
  int64_t* off = static_cast<int64_t*>(off_data);
  off[0] = 0;
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!PyBytes_CheckExact(objs[i])) throw nb::type_error("not bytes");
    off[i + 1] = off[i] + PyBytes_GET_SIZE(objs[i]);
  }
  void* data;
  nb::object packed = new_array(static_cast<size_t>(off[n]), np_dtype_uint8, &data);
  uint8_t* out = static_cast<uint8_t*>(data);
  for (Py_ssize_t i = 0; i < n; ++i)
    std::memcpy(out + off[i], PyBytes_AS_STRING(objs[i]), static_cast<size_t>(off[i + 1] - off[i]));
  return nb::make_tuple(packed, offsets);
}

// Columns arrive from tfrx.example as tuples
// (key, kind, values, offsets|None, splits, steps|None, present|None) of
// C-contiguous buffers with the dtypes example.py guarantees.
struct ColumnSet {
  std::vector<ex::Column> columns;
  std::vector<std::unique_ptr<tfrx::ByteView>> views;

  const tfrx::ByteView* view(nb::handle obj) {
    if (obj.is_none()) return nullptr;
    views.push_back(std::make_unique<tfrx::ByteView>(obj));
    return views.back().get();
  }

  void load(nb::handle spec) {
    for (nb::handle item : spec) {
      if (!PyTuple_Check(item.ptr()) || PyTuple_GET_SIZE(item.ptr()) != 7)
        throw nb::type_error("a column spec is a tuple of 7 fields");
      nb::tuple t = nb::borrow<nb::tuple>(item);
      ex::Column c;
      Py_ssize_t key_size;
      const char* key = PyUnicode_AsUTF8AndSize(t[0].ptr(), &key_size);
      if (!key) throw nb::python_error();
      c.key.assign(key, static_cast<size_t>(key_size));
      c.kind = nb::cast<uint8_t>(t[1]);
      const tfrx::ByteView* v = view(t[2]);
      if (!v) throw nb::value_error("column values missing");
      c.values = v->data();
      size_t width = c.kind == ex::kInt64 ? 8 : c.kind == ex::kFloat ? 4 : 1;
      if (v->size() % width) throw nb::value_error("column values buffer has a partial element");
      c.values_size = v->size() / width;
      if (const tfrx::ByteView* o = view(t[3])) {
        c.offsets = reinterpret_cast<const int64_t*>(o->data());
        c.offsets_size = o->size() / 8;
      }
      if (const tfrx::ByteView* sp = view(t[4])) {
        c.splits = reinterpret_cast<const int64_t*>(sp->data());
        c.splits_size = sp->size() / 8;
      }
      if (const tfrx::ByteView* st = view(t[5])) {
        c.steps = reinterpret_cast<const int64_t*>(st->data());
        c.steps_size = st->size() / 8;
      }
      if (const tfrx::ByteView* pr = view(t[6])) {
        c.present = pr->data();
        c.present_size = pr->size();
      }
      if (!c.splits) throw nb::value_error("column row splits missing");
      columns.push_back(std::move(c));
    }
  }
};

// write_fn(out, sizes) fills out[i] with sizes[i] bytes.
template <typename SizesFn, typename WriteFn>
nb::object encode_rows(size_t rows, bool as_batch, SizesFn sizes_fn, WriteFn write_fn) {
  init_numpy();
  void* lengths_data;
  nb::object lengths = new_array(rows, np_dtype_int64, &lengths_data);
  int64_t* sizes = static_cast<int64_t*>(lengths_data);
  {
    nb::gil_scoped_release release;
    sizes_fn(sizes);
  }
  std::vector<uint8_t*> out(rows);
  if (as_batch) {
    void* starts_data;
    nb::object starts = new_array(rows, np_dtype_int64, &starts_data);
    int64_t* st = static_cast<int64_t*>(starts_data);
    size_t total = 0;
    for (size_t i = 0; i < rows; ++i) {
      st[i] = static_cast<int64_t>(total);
      total += static_cast<size_t>(sizes[i]);
    }
    void* buf;
    nb::object data = new_array(total, np_dtype_uint8, &buf);
    for (size_t i = 0; i < rows; ++i) out[i] = static_cast<uint8_t*>(buf) + st[i];
    {
      nb::gil_scoped_release release;
      write_fn(out.data(), sizes);
    }
    return nb::make_tuple(data, starts, lengths);
  }
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(rows));
  if (!list) throw nb::python_error();
  nb::object result = nb::steal(list);
  for (size_t i = 0; i < rows; ++i) {
    PyObject* b = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(sizes[i]));
    if (!b) throw nb::python_error();
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), b);
    out[i] = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(b));
  }
  {
    // The bytes objects are new and referenced only by this list: safe to fill without the GIL.
    nb::gil_scoped_release release;
    write_fn(out.data(), sizes);
  }
  return result;
}

nb::object py_encode_examples(nb::handle features, size_t rows, bool as_batch) {
  ColumnSet set;
  set.load(features);
  std::string problem = ex::validate_columns(set.columns, rows, false);
  if (!problem.empty()) throw nb::value_error(problem.c_str());
  const auto& cols = set.columns;
  ex::EncodeScratch scratch;
  return encode_rows(
      rows, as_batch, [&](int64_t* sizes) { ex::example_sizes(cols, rows, sizes, &scratch); },
      [&](uint8_t* const* out, const int64_t* sizes) { ex::write_examples(cols, rows, &scratch, sizes, out); });
}

nb::object py_encode_sequence_examples(nb::handle context, nb::handle feature_lists, size_t rows,
                                       bool as_batch) {
  ColumnSet ctx, lists;
  ctx.load(context);
  lists.load(feature_lists);
  std::string problem = ex::validate_columns(ctx.columns, rows, false);
  if (problem.empty()) problem = ex::validate_columns(lists.columns, rows, true);
  if (!problem.empty()) throw nb::value_error(problem.c_str());
  const auto& c = ctx.columns;
  const auto& l = lists.columns;
  ex::EncodeScratch scratch;
  return encode_rows(
      rows, as_batch, [&](int64_t* sizes) { ex::sequence_example_sizes(c, l, rows, sizes, &scratch); },
      [&](uint8_t* const* out, const int64_t* sizes) {
        ex::write_sequence_examples(c, l, rows, &scratch, sizes, out);
      });
}
// ---------------------------------------------------------------- parser
namespace parser {

using tfrx::parse::Span;

// Output buffers are 64-byte aligned: XLA (JAX) adopts such buffers through
// DLPack without copying, and SIMD loads in consumers stay aligned.
constexpr std::align_val_t kOutputAlignment{64};

// Large output buffers are recycled: when NumPy frees an array the buffer
// returns here (up to kMaxHeld bytes in all) and the next parse call reuses
// it, instead of asking the kernel for fresh zeroed pages batch after batch,
// which costs as much as parsing for numeric workloads.
class BufferPool {
 public:
  static constexpr size_t kMinPooled = 64 * 1024;
  static constexpr size_t kMaxHeld = size_t{64} << 20;

  static size_t size_class(size_t bytes) {
    if (bytes < kMinPooled) return std::max<size_t>(bytes, 64);
    size_t c = kMinPooled;
    while (c < bytes) c <<= 1;
    return c;
  }

  void* get(size_t cls) {
    if (cls >= kMinPooled) {
      std::lock_guard<std::mutex> lock(mu_);
      for (size_t i = free_.size(); i-- > 0;) {
        if (free_[i].first == cls) {
          void* p = free_[i].second;
          free_[i] = free_.back();
          free_.pop_back();
          held_ -= cls;
          return p;
        }
      }
    }
    return ::operator new[](cls, kOutputAlignment);
  }

  void put(void* p, size_t cls) noexcept {
    if (cls >= kMinPooled) {
      std::lock_guard<std::mutex> lock(mu_);
      if (held_ + cls <= kMaxHeld) {
        try {
          free_.emplace_back(cls, p);
          held_ += cls;
          return;
        } catch (...) {
        }
      }
    }
    ::operator delete[](p, kOutputAlignment);
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<size_t, void*>> free_;
  size_t held_ = 0;
};

BufferPool& buffer_pool() {
  static BufferPool* pool = new BufferPool();  // never destroyed: capsules may outlive statics
  return *pool;
}

struct AlignedFree {
  size_t size_class = 0;
  void operator()(void* p) const noexcept { buffer_pool().put(p, size_class); }
};

template <typename T>
std::unique_ptr<T[], AlignedFree> aligned_buffer(size_t n) {
  size_t cls = BufferPool::size_class(sizeof(T) * std::max<size_t>(n, 1));
  return std::unique_ptr<T[], AlignedFree>(static_cast<T*>(buffer_pool().get(cls)), AlignedFree{cls});
}

struct PooledOwner {
  void* data;
  size_t size_class;
};

template <typename T>
nb::ndarray<nb::numpy, T> owned_array(std::unique_ptr<T[], AlignedFree> data, std::initializer_list<size_t> shape) {
  size_t cls = data.get_deleter().size_class;
  T* raw = data.release();
  auto* owner_state = new PooledOwner{raw, cls};
  nb::capsule owner(owner_state, [](void* p) noexcept {
    auto* o = static_cast<PooledOwner*>(p);
    buffer_pool().put(o->data, o->size_class);
    delete o;
  });
  return nb::ndarray<nb::numpy, T>(raw, shape, owner);
}

// A NumPy array over a parse buffer's own storage: no copy out of it.
template <typename T>
nb::object released_array(tfrx::parse::PodBuffer<T>* buffer) {
  const size_t n = buffer->size();
  T* raw = buffer->release();
  nb::capsule owner(raw, [](void* p) noexcept { std::free(p); });
  return nb::cast(nb::ndarray<nb::numpy, T>(raw, {n}, owner));
}

// Every bytes output of one parse call lives in one NumPy object array and
// each column gets a slice of it: one array allocation per call instead of a
// list plus a conversion per column.
class ObjectArena {
 public:
  explicit ObjectArena(size_t total) {
    array_ = nb::module_::import_("numpy").attr("empty")(total, "object");
    nb::object data = array_.attr("__array_interface__")["data"];
    slots_ = reinterpret_cast<PyObject**>(nb::cast<uintptr_t>(data[0]));
  }

  template <typename Make>
  nb::object take(size_t n, Make&& make) {
    for (size_t i = 0; i < n; ++i) {
      PyObject* b = make(i);
      if (!b) throw nb::python_error();
      PyObject* old = slots_[at_ + i];
      slots_[at_ + i] = b;
      Py_XDECREF(old);
    }
    nb::object slice = nb::steal(PySlice_New(nb::int_(at_).ptr(), nb::int_(at_ + n).ptr(), nullptr));
    at_ += n;
    return nb::steal(PyObject_GetItem(array_.ptr(), slice.ptr()));
  }

 private:
  nb::object array_;
  PyObject** slots_ = nullptr;
  size_t at_ = 0;
};

// Categorical columns repeat a few short values (codes, hashed ids) across
// records and batches. Values of 2 to 8 bytes are looked up in a small
// direct-mapped cache of bytes objects kept by the parser: a hit hands out
// the same immutable object again instead of allocating (and later freeing)
// a new one. CPython already shares the empty and one-byte bytes objects.
// A column whose values rarely repeat (under one hit in 8 values) skips the
// cache for its next 16 batches, then tries again. Used only with the GIL held.
class ShortBytesCache {
 public:
  ShortBytesCache() = default;
  ShortBytesCache(const ShortBytesCache&) = delete;
  ShortBytesCache& operator=(const ShortBytesCache&) = delete;
  ~ShortBytesCache() {
    if (!Py_IsInitialized()) return;
    for (Slot& s : slots_) Py_XDECREF(s.object);
  }

  PyObject* get(const uint8_t* p, size_t n) {
    if (n < 2 || n > 8) return PyBytes_FromStringAndSize(reinterpret_cast<const char*>(p), static_cast<Py_ssize_t>(n));
    uint64_t word = 0;
    if (n == 8) {
      std::memcpy(&word, p, 8);
    } else {
      for (size_t i = 0; i < n; ++i) word |= uint64_t{p[i]} << (8 * i);
    }
    const size_t h = static_cast<size_t>(((word + n) * 0x9e3779b97f4a7c15ull) >> (64 - kBits));
    Slot& s = slots_[h];
    if (s.object != nullptr && s.word == word && s.size == n) {
      Py_INCREF(s.object);
      ++hits_;
      return s.object;
    }
    PyObject* b = PyBytes_FromStringAndSize(reinterpret_cast<const char*>(p), static_cast<Py_ssize_t>(n));
    if (b == nullptr) return nullptr;
    Py_INCREF(b);
    PyObject* old = s.object;
    s = Slot{word, n, b};
    Py_XDECREF(old);
    return b;
  }

 private:
  static constexpr int kBits = 10;
  struct Slot {
    uint64_t word = 0;
    size_t size = 0;
    PyObject* object = nullptr;
  };
  std::array<Slot, size_t{1} << kBits> slots_{};
  size_t hits_ = 0;

 public:
  // Makes n objects of one column with make(i, cache or null), following
  // and updating that column's `skip` count.
  template <typename Make>
  nb::object column(ObjectArena* arena, size_t n, uint32_t* skip, Make&& make) {
    if (*skip > 0) {
      --*skip;
      return arena->take(n, [&](size_t i) { return make(i, static_cast<ShortBytesCache*>(nullptr)); });
    }
    const size_t before = hits_;
    nb::object out = arena->take(n, [&](size_t i) { return make(i, this); });
    if (8 * (hits_ - before) < n) *skip = 16;
    return out;
  }
};

inline PyObject* span_bytes(const Span& s, ShortBytesCache* cache) {
  if (cache == nullptr)
    return PyBytes_FromStringAndSize(reinterpret_cast<const char*>(s.data), static_cast<Py_ssize_t>(s.size));
  return cache->get(s.data, s.size);
}

// Concatenates the per-chunk values of one column into one owned array (or list of bytes).
nb::object merge_values(tfrx::parse::Kind kind, std::vector<std::vector<tfrx::parse::VarColumn>>& chunks,
                        size_t col, ObjectArena* arena, ShortBytesCache* cache, uint32_t* skip) {
  size_t total = 0;
  for (const auto& ch : chunks) total += ch[col].size();
  // One chunk: its buffer becomes the output as it is.
  if (chunks.size() == 1 && total > 0) {
    if (kind == tfrx::parse::kInt64) return released_array(&chunks[0][col].int64_values);
    if (kind == tfrx::parse::kFloat) return released_array(&chunks[0][col].float_values);
  }
  if (kind == tfrx::parse::kInt64) {
    auto buffer = aligned_buffer<int64_t>(total);
    int64_t* out = buffer.get();
    size_t at = 0;
    for (const auto& ch : chunks) {
      const auto& v = ch[col].int64_values;
      if (!v.empty()) std::memcpy(out + at, v.data(), 8 * v.size());
      at += v.size();
    }
    return nb::cast(owned_array<int64_t>(std::move(buffer), {total}));
  }
  if (kind == tfrx::parse::kFloat) {
    auto buffer = aligned_buffer<float>(total);
    float* out = buffer.get();
    size_t at = 0;
    for (const auto& ch : chunks) {
      const auto& v = ch[col].float_values;
      if (!v.empty()) std::memcpy(out + at, v.data(), 4 * v.size());
      at += v.size();
    }
    return nb::cast(owned_array<float>(std::move(buffer), {total}));
  }
  std::vector<const Span*> flat;
  flat.reserve(total);
  for (const auto& ch : chunks)
    for (const Span& sp : ch[col].bytes_values) flat.push_back(&sp);
  return cache->column(arena, total, skip, [&](size_t i, ShortBytesCache* c) { return span_bytes(*flat[i], c); });
}

// Row splits [0, c0, c0+c1, ...] from counts gathered chunk by chunk.
nb::object merge_splits(const std::vector<std::vector<tfrx::parse::VarColumn>>& chunks, size_t col, bool steps) {
  size_t total = 0;
  for (const auto& ch : chunks) total += (steps ? ch[col].step_counts : ch[col].counts).size();
  auto buffer = aligned_buffer<int64_t>(total + 1);
  int64_t* out = buffer.get();
  out[0] = 0;
  size_t at = 0;
  for (const auto& ch : chunks) {
    for (int64_t c : (steps ? ch[col].step_counts : ch[col].counts)) {
      out[at + 1] = out[at] + c;
      ++at;
    }
  }
  return nb::cast(owned_array<int64_t>(std::move(buffer), {total + 1}));
}

class PyParser {
 public:
  // columns: (key, kind, dense, count, default or None) tuples;
  // sequence_columns: (key, kind, step_count, required) tuples.
  PyParser(nb::list columns, nb::list sequence_columns, bool sequence) {
    std::vector<tfrx::parse::ColumnSpec> cols;
    for (nb::handle item : columns) {
      nb::tuple t = nb::cast<nb::tuple>(item);
      tfrx::parse::ColumnSpec c;
      c.key = nb::cast<std::string>(t[0]);
      c.kind = static_cast<tfrx::parse::Kind>(nb::cast<int>(t[1]));
      c.dense = nb::cast<bool>(t[2]);
      c.count = nb::cast<int64_t>(t[3]);
      std::vector<std::string> defaults;
      if (!t[4].is_none() && c.kind == tfrx::parse::kFloat && PyBytes_Check(t[4].ptr())) {
        // Float defaults come as float32 bytes so that every bit pattern
        // (a signalling NaN included) reaches the output unchanged.
        c.has_default = true;
        char* p;
        Py_ssize_t len;
        if (PyBytes_AsStringAndSize(t[4].ptr(), &p, &len) != 0) throw nb::python_error();
        c.default_float.resize(static_cast<size_t>(len) / sizeof(float));
        if (len) std::memcpy(c.default_float.data(), p, c.default_float.size() * sizeof(float));
        if (c.dense && static_cast<int64_t>(c.default_float.size()) != c.count)
          throw nb::value_error("default value size does not match the feature's shape");
      } else if (!t[4].is_none()) {
        c.has_default = true;
        for (nb::handle v : t[4]) {
          if (c.kind == tfrx::parse::kInt64) c.default_int64.push_back(nb::cast<int64_t>(v));
          else if (c.kind == tfrx::parse::kFloat) c.default_float.push_back(nb::cast<float>(v));
          else {
            char* p;
            Py_ssize_t len;
            if (PyBytes_AsStringAndSize(v.ptr(), &p, &len) != 0) throw nb::python_error();
            defaults.emplace_back(p, static_cast<size_t>(len));
          }
        }
        size_t got = c.kind == tfrx::parse::kInt64 ? c.default_int64.size()
                     : c.kind == tfrx::parse::kFloat ? c.default_float.size() : defaults.size();
        if (c.dense && static_cast<int64_t>(got) != c.count)
          throw nb::value_error("default value size does not match the feature's shape");
      }
      default_bytes_.push_back(std::move(defaults));
      cols.push_back(std::move(c));
    }
    std::vector<tfrx::parse::SequenceColumnSpec> seq;
    for (nb::handle item : sequence_columns) {
      nb::tuple t = nb::cast<nb::tuple>(item);
      tfrx::parse::SequenceColumnSpec c;
      c.key = nb::cast<std::string>(t[0]);
      c.kind = static_cast<tfrx::parse::Kind>(nb::cast<int>(t[1]));
      c.step_count = nb::cast<int64_t>(t[2]);
      c.required = nb::cast<bool>(t[3]);
      seq.push_back(std::move(c));
    }
    skip_.assign(cols.size() + seq.size(), 0);
    hints_.assign(cols.size() + seq.size(), SizeHint{});
    parser_ = std::make_unique<tfrx::parse::Parser>(std::move(cols), std::move(seq), sequence);
  }

  // Records laid out as data[starts[i] : starts[i] + lengths[i]].
  nb::tuple parse_buffer(nb::handle data, nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig> starts,
                         nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig> lengths, int threads) {
    tfrx::ByteView view(data);
    size_t n = starts.shape(0);
    if (lengths.shape(0) != n) throw nb::value_error("starts and lengths differ in length");
    std::vector<Span> records(n);
    const int64_t* s = starts.data();
    const int64_t* l = lengths.data();
    for (size_t i = 0; i < n; ++i) {
      if (s[i] < 0 || l[i] < 0 || static_cast<uint64_t>(s[i]) + static_cast<uint64_t>(l[i]) > view.size())
        throw nb::value_error("a record lies outside the data buffer");
      records[i] = Span{view.data() + s[i], static_cast<size_t>(l[i])};
    }
    return run(records, threads);
  }

  // Records as a sequence of bytes-like objects (no copies).
  nb::tuple parse_list(nb::handle seq, int threads) {
    PyObject* fast = PySequence_Fast(seq.ptr(), "records must be a sequence of bytes");
    if (!fast) throw nb::python_error();
    nb::object keep = nb::steal(fast);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject** items = PySequence_Fast_ITEMS(fast);
    std::vector<Span> records(static_cast<size_t>(n));
    std::vector<std::unique_ptr<tfrx::ByteView>> views;
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* o = items[i];
      if (PyBytes_Check(o)) {
        records[i] = Span{reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(o)), static_cast<size_t>(PyBytes_GET_SIZE(o))};
      } else {
        views.push_back(std::make_unique<tfrx::ByteView>(nb::handle(o)));
        records[i] = Span{views.back()->data(), views.back()->size()};
      }
    }
    return run(records, threads);
  }

 private:
  nb::tuple run(const std::vector<Span>& records, int threads) {
    using namespace tfrx::parse;
    const auto& cols = parser_->columns();
    const auto& seq_cols = parser_->sequence_columns();
    const int64_t n = static_cast<int64_t>(records.size());
    int64_t total_bytes = 0;
    for (const Span& r : records) total_bytes += static_cast<int64_t>(r.size);

    // Dense outputs are allocated up front; every chunk writes its own rows.
    std::vector<DenseTarget> dense(cols.size());
    std::vector<std::unique_ptr<int64_t[], AlignedFree>> dense_i64(cols.size());
    std::vector<std::unique_ptr<float[], AlignedFree>> dense_f32(cols.size());
    std::vector<std::unique_ptr<Span[]>> dense_bytes(cols.size());
    for (size_t c = 0; c < cols.size(); ++c) {
      if (!cols[c].dense) continue;
      size_t size = std::max<size_t>(static_cast<size_t>(n * cols[c].count), 1);
      if (cols[c].kind == kInt64) {
        dense_i64[c] = aligned_buffer<int64_t>(size);
        dense[c].values = dense_i64[c].get();
      } else if (cols[c].kind == kFloat) {
        dense_f32[c] = aligned_buffer<float>(size);
        dense[c].values = dense_f32[c].get();
      } else {
        dense_bytes[c].reset(new Span[size]);
        dense[c].values = dense_bytes[c].get();
      }
    }

    int k = plan_chunks(n, total_bytes, threads);
    std::vector<std::vector<VarColumn>> var(k), seq_var(k);
    for (int i = 0; i < k; ++i) {
      var[i] = std::vector<VarColumn>(cols.size());
      seq_var[i] = std::vector<VarColumn>(seq_cols.size());
    }
    std::vector<Error> errors(k);
    {
      nb::gil_scoped_release release;
      // Variable-length columns start with room for what the previous call
      // gathered per byte of input, so that they rarely grow (and copy) on
      // the way; the buffers become the outputs and are not reused.
      if (previous_bytes_ > 0) {
        for (int i = 0; i < k; ++i) {
          const int64_t begin = n * i / k, end = n * (i + 1) / k;
          int64_t bytes = 0;
          for (int64_t r = begin; r < end; ++r) bytes += static_cast<int64_t>(records[r].size);
          const double share = static_cast<double>(bytes) / static_cast<double>(previous_bytes_);
          auto room = [share](size_t previous) { return static_cast<size_t>(share * 1.125 * previous) + 64; };
          for (size_t c = 0; c < cols.size(); ++c)
            if (!cols[c].dense) reserve_like(&var[i][c], cols[c].kind, hints_[c], room);
          for (size_t c = 0; c < seq_cols.size(); ++c)
            reserve_like(&seq_var[i][c], seq_cols[c].kind, hints_[cols.size() + c], room);
        }
      }
      auto work = [&](int i) {
        int64_t begin = n * i / k, end = n * (i + 1) / k;
        parser_->parse_range(records.data(), begin, end, dense, &var[i], &seq_var[i], &errors[i]);
      };
      tfrx::run_chunks(k, work);
    }
    for (const Error& e : errors) {
      if (e.code != kOk) {
        return nb::make_tuple(nb::none(), nb::none(),
                              nb::make_tuple(e.code, e.record, e.column, e.in_sequence, e.step, e.expected, e.actual,
                                             e.offset));
      }
    }

    previous_bytes_ = total_bytes;
    for (size_t c = 0; c < cols.size() + seq_cols.size(); ++c) {
      SizeHint h;
      for (int i = 0; i < k; ++i) {
        const VarColumn& v = c < cols.size() ? var[i][c] : seq_var[i][c - cols.size()];
        h.values += v.size();
        h.counts += v.counts.size();
        h.steps += v.step_counts.size();
      }
      hints_[c] = h;
    }

    size_t object_total = 0;
    for (size_t c = 0; c < cols.size(); ++c) {
      if (cols[c].kind != kBytes) continue;
      if (cols[c].dense) object_total += static_cast<size_t>(n * cols[c].count);
      else for (const auto& ch : var) object_total += ch[c].bytes_values.size();
    }
    for (size_t c = 0; c < seq_cols.size(); ++c) {
      if (seq_cols[c].kind != kBytes) continue;
      for (const auto& ch : seq_var) object_total += ch[c].bytes_values.size();
    }
    ObjectArena arena(object_total);

    nb::list out;
    for (size_t c = 0; c < cols.size(); ++c) {
      const ColumnSpec& col = cols[c];
      if (col.dense) {
        size_t rows = static_cast<size_t>(n), width = static_cast<size_t>(col.count);
        if (col.kind == kInt64) {
          out.append(owned_array<int64_t>(std::move(dense_i64[c]), {rows, width}));
        } else if (col.kind == kFloat) {
          out.append(owned_array<float>(std::move(dense_f32[c]), {rows, width}));
        } else {
          const Span* spans = dense_bytes[c].get();
          const std::vector<std::string>& defaults = default_bytes_[c];
          out.append(cache_.column(&arena, rows * width, &skip_[c], [&](size_t i, ShortBytesCache* cache) -> PyObject* {
            const Span& sp = spans[i];
            if (sp.data == nullptr) {
              const std::string& d = defaults[sp.size];
              return PyBytes_FromStringAndSize(d.data(), static_cast<Py_ssize_t>(d.size()));
            }
            return span_bytes(sp, cache);
          }));
        }
      } else {
        out.append(nb::make_tuple(merge_values(col.kind, var, c, &arena, &cache_, &skip_[c]), merge_splits(var, c, false)));
      }
    }
    nb::list seq_out;
    for (size_t c = 0; c < seq_cols.size(); ++c) {
      seq_out.append(nb::make_tuple(merge_values(seq_cols[c].kind, seq_var, c, &arena, &cache_, &skip_[cols.size() + c]), merge_splits(seq_var, c, false),
                                    merge_splits(seq_var, c, true)));
    }
    return nb::make_tuple(out, seq_out, nb::none());
  }

  // Sizes a column gathered in the previous call (all chunks together).
  struct SizeHint {
    size_t values = 0, counts = 0, steps = 0;
  };

  template <typename Room>
  static void reserve_like(tfrx::parse::VarColumn* v, tfrx::parse::Kind kind, const SizeHint& h, Room room) {
    if (h.values > 0) {
      // Packed int64 runs reserve one value per byte of the run while they
      // decode: leave room for the longest such run beyond the values.
      if (kind == tfrx::parse::kInt64) v->int64_values.reserve(room(h.values) + 4096);
      else if (kind == tfrx::parse::kFloat) v->float_values.reserve(room(h.values));
      else v->bytes_values.reserve(room(h.values));
    }
    if (h.counts > 0) v->counts.reserve(room(h.counts));
    if (h.steps > 0) v->step_counts.reserve(room(h.steps));
  }

  std::unique_ptr<tfrx::parse::Parser> parser_;
  std::vector<SizeHint> hints_;
  int64_t previous_bytes_ = 0;
  std::vector<std::vector<std::string>> default_bytes_;
  ShortBytesCache cache_;
  std::vector<uint32_t> skip_;  // per column, then per sequence column: batches left without the cache
};

// Whether `n` splits start at >= 0 and never decrease.
bool valid_splits(const int64_t* s, size_t n) {
  if (n == 0) return true;
  if (s[0] < 0) return false;
  for (size_t i = 1; i < n; ++i)
    if (s[i] < s[i - 1]) return false;
  return true;
}

// COO indices for a SparseArray from row splits (a parse result's, or a
// caller's through SparseArray.from_row_splits: checked before use).
nb::tuple py_sparse_indices(nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig> outer,
                            std::optional<nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig>> inner,
                            bool with_indices) {
  size_t rows = outer.shape(0) == 0 ? 0 : outer.shape(0) - 1;
  const int64_t* o = outer.data();
  const int64_t* in = inner ? inner->data() : nullptr;
  if (!valid_splits(o, outer.shape(0))) throw nb::value_error("row splits must be non-negative and non-decreasing");
  int64_t nnz = rows ? o[rows] - o[0] : 0;
  if (in != nullptr) {
    if (rows && static_cast<uint64_t>(o[rows]) >= inner->shape(0))
      throw nb::value_error("the outer row splits reach past the inner ones");
    if (rows && !valid_splits(in + o[0], static_cast<size_t>(o[rows] - o[0]) + 1))
      throw nb::value_error("row splits must be non-negative and non-decreasing");
    nnz = rows ? in[o[rows]] - in[o[0]] : 0;
  }
  size_t width = in ? 3 : 2;
  auto shape = aligned_buffer<int64_t>(width);
  std::unique_ptr<int64_t[], AlignedFree> buffer;
  if (with_indices) buffer = aligned_buffer<int64_t>((static_cast<size_t>(nnz) + tfrx::parse::kIndexChunk - 1) * width);
  {
    nb::gil_scoped_release release;
    const auto r = static_cast<int64_t>(rows);
    if (with_indices) tfrx::parse::sparse_indices(o, r, in, buffer.get());
    shape[0] = r;
    shape[1] = tfrx::parse::max_row_length(o, r);
    // The inner level spans the steps of every row: o[0] .. o[rows].
    if (in != nullptr) shape[2] = rows ? tfrx::parse::max_row_length(in + o[0], o[rows] - o[0]) : 0;
  }
  nb::object indices = nb::none();
  if (with_indices) indices = nb::cast(owned_array<int64_t>(std::move(buffer), {static_cast<size_t>(nnz), width}));
  return nb::make_tuple(indices, owned_array<int64_t>(std::move(shape), {width}));
}

}  // namespace parser

}  // namespace

NB_MODULE(_native, m) {
  m.doc() = "tfrx native core: CRC32C, record framing, Example codec and parser";
#ifndef TFRX_LEAK_WARNINGS
  // nanobind reports objects still alive when the interpreter tears the
  // module down; a parser kept by something finalised that late (a closure in
  // gc.callbacks, an atexit hook, a daemon thread) is not a leak, and the
  // report would end a user's clean run with a warning. Sanitizer builds keep
  // the reports.
  nb::set_leak_warnings(false);
#endif
  tfrx::bind_jpeg_partial(m);

  // ------------------------------------------------------------ crc32c
  m.def("crc32c", &py_crc32c, "data"_a, "value"_a = 0,
        "CRC-32C of a buffer, extending `value` (the CRC of preceding bytes).");
  m.def("crc32c_portable", &py_crc32c_portable, "data"_a, "value"_a = 0,
        "CRC-32C computed by the portable table-driven fallback.");
  m.def("masked_crc32c", &py_masked_crc32c, "data"_a,
        "TFRecord's masked CRC-32C of a buffer.");
  m.def("crc32c_mask", &tfrx::crc32c_mask, "crc"_a);
  m.def("crc32c_unmask", &tfrx::crc32c_unmask, "masked"_a);
  m.def("crc32c_backend", &tfrx::crc32c_backend,
        "The CRC-32C implementation chosen for this CPU.");

  // ------------------------------------------------------------ allocator
  m.def("malloc_tunable", &tfrx::malloc_tunable, "Whether the C library is glibc (see set_malloc_thresholds).");
  m.def("set_malloc_thresholds", &tfrx::set_malloc_thresholds, "mmap_threshold"_a, "trim_threshold"_a,
        "Sets glibc malloc's M_MMAP_THRESHOLD and M_TRIM_THRESHOLD; False where not glibc or refused.");

  // ------------------------------------------------------------ framing
  m.attr("SCAN_END") = static_cast<int>(tfrx::ScanStatus::kEnd);
  m.attr("SCAN_NEED_MORE") = static_cast<int>(tfrx::ScanStatus::kNeedMore);
  m.attr("SCAN_LENGTH_CRC") = static_cast<int>(tfrx::ScanStatus::kLengthCrc);
  m.attr("SCAN_DATA_CRC") = static_cast<int>(tfrx::ScanStatus::kDataCrc);
  m.attr("SCAN_LIMIT") = static_cast<int>(tfrx::ScanStatus::kLimit);
  m.def("scan_records", &py_scan_records, "buf"_a, "verify"_a = true, "max_records"_a = -1,
        "max_bytes"_a = -1, "stop_offset"_a = -1,
        "Walks TFRecord framing in `buf`. Returns (starts, lengths, consumed, status, offset, need,\n"
        "length, expected, actual): int64 arrays with the data offset and length of every complete\n"
        "record, the bytes they span, a SCAN_* status for what stopped the scan at `offset`, the\n"
        "bytes missing for SCAN_NEED_MORE, the length field read there, and the stored (expected)\n"
        "and computed (actual) masked CRCs for SCAN_LENGTH_CRC / SCAN_DATA_CRC.");
  m.def("find_header", &py_find_header, "buf"_a, "start"_a = 0,
        "First offset >= start of a 12-byte header whose length CRC validates and whose length is below 2^48, or -1.");
  m.def("frame_records", &py_frame_records, "records"_a,
        "TFRecord framing of a sequence of bytes-like records, concatenated into one bytes object.");
  m.def("frame_batch", &py_frame_batch, "data"_a, "starts"_a, "lengths"_a,
        "TFRecord framing of records data[starts[i]:starts[i]+lengths[i]], as one bytes object.");
  m.def("frame_into", &py_frame_into, "records"_a, "start"_a, "out"_a,
        "Frames records[start:] into the writable buffer `out` while they fit.\n"
        "Returns (index of the first record not framed, bytes written).");
  m.def("frame_batch_into", &py_frame_batch_into, "data"_a, "starts"_a, "lengths"_a, "start"_a, "out"_a,
        "frame_into for records data[starts[i]:starts[i]+lengths[i]], i >= start.");
  m.def("record_framing", &py_record_framing, "data"_a,
        "The 12-byte header and 4-byte footer that frame one record.");
  m.def("split_records", &py_split_records, "data"_a, "starts"_a, "lengths"_a,
        "A list of bytes objects, data[starts[i]:starts[i]+lengths[i]].");
  m.def("shuffle_draws", &py_shuffle_draws, "buffer"_a, "fill"_a, "uniforms"_a, "upos"_a, "next_id"_a,
        "read_end"_a, "exhausted"_a, "out"_a, "count"_a,
        "The window shuffle's draws on record numbers; returns (status, n, fill, upos, next_id).");
  m.def("gather_spans", [](nb::list datas, Int64In chunks, Int64In starts, Int64In lengths, nb::handle out) {
          init_numpy();
          return py_gather_spans(datas, chunks, starts, lengths, out);
        }, "datas"_a, "chunks"_a, "starts"_a, "lengths"_a, "out"_a = nb::none(),
        "The records datas[chunks[i]][starts[i]:starts[i]+lengths[i]] end to end, in a new uint8 array or in `out`.");

  // ------------------------------------------------------------ example codec
  m.def("decode_example", &py_decode_example, "data"_a, nb::kw_only(), "keep_empty"_a = false,
        "Decodes a serialized tf.train.Example into {name: int64/float32 array or list of bytes}.");
  m.def("decode_sequence_example", &py_decode_sequence_example, "data"_a, nb::kw_only(),
        "keep_empty"_a = false,
        "Decodes a serialized tf.train.SequenceExample into (context, feature_lists) dicts.");
  m.def("pack_bytes", &py_pack_bytes, "items"_a,
        "Packs a list of bytes into (uint8 data, int64 offsets); TypeError if an item is not bytes.");
  m.def("encode_examples", &py_encode_examples, "features"_a, "rows"_a, "as_batch"_a = false,
        "Serializes rows of prepared columns as tf.train.Example (see tfrx.encode_examples).");
  m.def("encode_sequence_examples", &py_encode_sequence_examples, "context"_a, "feature_lists"_a,
        "rows"_a, "as_batch"_a = false,
        "Serializes rows of prepared columns as tf.train.SequenceExample.");

  // ------------------------------------------------------------ parser
  nb::class_<parser::PyParser>(m, "ParserCore",
                               "Spec-driven Example/SequenceExample parser (driven by tfrx.parsing).")
      .def(nb::init<nb::list, nb::list, bool>(), "columns"_a, "sequence_columns"_a, "sequence"_a)
      .def("parse_buffer", &parser::PyParser::parse_buffer, "data"_a, "starts"_a, "lengths"_a, "threads"_a)
      .def("parse_list", &parser::PyParser::parse_list, "records"_a, "threads"_a);
  m.def("sparse_indices", &parser::py_sparse_indices, "outer"_a, "inner"_a = nb::none(), "with_indices"_a = true,
        "(indices, dense_shape) of ragged parse results: COO indices [row, pos] (or [row, step, pos]\n"
        "with inner splits; None unless with_indices) and the int64 [rows, longest row] (or\n"
        "[rows, most steps, longest step]). ValueError for splits that are negative, decrease or\n"
        "do not fit each other.");

  // ------------------------------------------------------------ index
  m.attr("GATHER_OK") = static_cast<int>(tfrx::GatherStatus::kOk);
  m.attr("GATHER_OUT_OF_RANGE") = static_cast<int>(tfrx::GatherStatus::kOutOfRange);
  m.attr("GATHER_LENGTH") = static_cast<int>(tfrx::GatherStatus::kLength);
  m.attr("GATHER_LENGTH_CRC") = static_cast<int>(tfrx::GatherStatus::kLengthCrc);
  m.attr("GATHER_DATA_CRC") = static_cast<int>(tfrx::GatherStatus::kDataCrc);
  m.attr("GATHER_IO") = static_cast<int>(tfrx::GatherStatus::kIo);
  using GatherOut = nb::ndarray<uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
  m.def(
      "gather_records",
      [](nb::handle source, Int64In offsets, Int64In lengths, Int64In out_starts, GatherOut out, bool verify) {
        const size_t count = offsets.shape(0);
        if (lengths.shape(0) != count || out_starts.shape(0) != count)
          throw nb::value_error("offsets, lengths and out_starts must have the same length");
        tfrx::GatherResult r;
        if (PyLong_Check(source.ptr())) {
          const int fd = nb::cast<int>(source);
          nb::gil_scoped_release release;
          tfrx::gather_from_fd(fd, offsets.data(), lengths.data(), out_starts.data(), count, out.data(),
                               out.shape(0), verify, &r);
        } else {
          tfrx::ByteView view(source);
          nb::gil_scoped_release release;
          tfrx::gather_from_buffer(view.data(), view.size(), offsets.data(), lengths.data(), out_starts.data(),
                                   count, out.data(), out.shape(0), verify, &r);
        }
        return nb::make_tuple(static_cast<int>(r.status), r.index, r.expected, r.actual);
      },
      "source"_a, "offsets"_a, "lengths"_a, "out_starts"_a, "out"_a, "verify"_a = true,
      "Copies the payloads of the records whose headers are at `offsets` (with `lengths` payload\n"
      "bytes, from the index) to out[out_starts[k]:], checking each record's length field, length\n"
      "CRC and (verify) data CRC. `source` is a buffer (bytes, mmap) or a file descriptor read with\n"
      "positioned reads, back-to-back records in one call. Returns (status, k, expected, actual):\n"
      "a GATHER_* status and, on failure, the failing request and what was expected/found.");

  // ---- image -------------------------------------------------------------
  {
    using PlanIdx = nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
    using PlanW = nb::ndarray<const float, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
    using ResizeOut = nb::ndarray<float, nb::ndim<4>, nb::c_contig, nb::device::cpu>;
    auto bind_bilinear = [&m](auto tag) {
      using T = decltype(tag);
      using ImageIn = nb::ndarray<const T, nb::ndim<4>, nb::c_contig, nb::device::cpu>;
      m.def(
          "resize_bilinear",
          [](ImageIn img, ResizeOut out, PlanIdx rows_lo, PlanIdx rows_hi, PlanW ly, PlanIdx left, PlanIdx right,
             PlanW lx) {
            const size_t n = img.shape(0), h = img.shape(1), w = img.shape(2), c = img.shape(3);
            const size_t out_h = out.shape(1), out_w = out.shape(2);
            if (out.shape(0) != n || out.shape(3) != c)
              throw nb::value_error("resize_bilinear: out must be (n, out_h, out_w, c) for the same n and c");
            if (rows_lo.shape(0) != out_h || rows_hi.shape(0) != out_h || ly.shape(0) != out_h)
              throw nb::value_error("resize_bilinear: row plan length differs from out_h");
            const size_t samples = out_w * c;
            if (left.shape(0) != samples || right.shape(0) != samples || lx.shape(0) != samples)
              throw nb::value_error("resize_bilinear: column plan length differs from out_w * c");
            if (n == 0 || samples == 0 || out_h == 0) return;
            if (h == 0 || w == 0) throw nb::value_error("resize_bilinear: empty source image");
            const int64_t row_len = static_cast<int64_t>(w * c);
            for (size_t i = 0; i < out_h; ++i)
              if (rows_lo.data()[i] < 0 || rows_lo.data()[i] >= static_cast<int64_t>(h) || rows_hi.data()[i] < 0 ||
                  rows_hi.data()[i] >= static_cast<int64_t>(h))
                throw nb::value_error("resize_bilinear: source row out of range");
            for (size_t i = 0; i < samples; ++i)
              // In range and on sample i's own channel: the kernel reads a pixel's C channels
              // from its first channel's offset.
              if (left.data()[i] < 0 || left.data()[i] >= row_len || right.data()[i] < 0 ||
                  right.data()[i] >= row_len || static_cast<size_t>(left.data()[i]) % c != i % c ||
                  static_cast<size_t>(right.data()[i]) % c != i % c)
                throw nb::value_error("resize_bilinear: source sample out of range");
            nb::gil_scoped_release release;
            tfrx::resize_bilinear<T>(img.data(), n, h, w, c, out.data(), out_h, out_w, rows_lo.data(),
                                     rows_hi.data(), ly.data(), left.data(), right.data(), lx.data());
          },
          "img"_a, "out"_a, "rows_lo"_a, "rows_hi"_a, "ly"_a, "left"_a, "right"_a, "lx"_a,
          "tf.image.resize bilinear (half-pixel centres) of img (n, h, w, c) into float32 out\n"
          "(n, out_h, out_w, c), from a per-size plan: source rows and y weights per output row,\n"
          "source sample offsets (pixel * c + channel) and x weights per output sample.");
    };
    bind_bilinear(uint8_t{});
    bind_bilinear(float{});
    using BytesIn = nb::ndarray<const uint8_t, nb::ndim<3>, nb::c_contig, nb::device::cpu>;
    using BytesOut = nb::ndarray<uint8_t, nb::ndim<3>, nb::c_contig, nb::device::cpu>;
    m.def(
        "resize_nearest",
        [](BytesIn img, BytesOut out, size_t pixel_bytes, PlanIdx rows, PlanIdx cols) {
          const size_t n = img.shape(0), h = img.shape(1), out_h = rows.shape(0), out_w = cols.shape(0);
          if (pixel_bytes == 0 || img.shape(2) % pixel_bytes != 0)
            throw nb::value_error("resize_nearest: row length is not a whole number of pixels");
          const size_t w = img.shape(2) / pixel_bytes;
          if (out.shape(0) != n || out.shape(1) != out_h || out.shape(2) != out_w * pixel_bytes)
            throw nb::value_error("resize_nearest: out must be (n, len(rows), len(cols) * pixel_bytes)");
          for (size_t i = 0; i < out_h; ++i)
            if (rows.data()[i] < 0 || rows.data()[i] >= static_cast<int64_t>(h))
              throw nb::value_error("resize_nearest: source row out of range");
          for (size_t i = 0; i < out_w; ++i)
            if (cols.data()[i] < 0 || cols.data()[i] >= static_cast<int64_t>(w))
              throw nb::value_error("resize_nearest: source column out of range");
          nb::gil_scoped_release release;
          tfrx::resize_nearest(img.data(), n, h, w, pixel_bytes, out.data(), out_h, out_w, rows.data(),
                               cols.data());
        },
        "img"_a, "out"_a, "pixel_bytes"_a, "rows"_a, "cols"_a,
        "Nearest-neighbour resize on raw bytes: img (n, h, w * pixel_bytes) into out\n"
        "(n, len(rows), len(cols) * pixel_bytes), output pixel (y, x) from source (rows[y], cols[x]).");
  }
}
