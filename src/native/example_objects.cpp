// Examples as Python objects: serialized records decoded into dicts of
// arrays and lists of bytes, and prepared columns from tfrx.codec encoded
// into records. The wire work is in example_decode / example_encode.
#include "example_objects.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "buffer.h"
#include "example_decode.h"
#include "example_encode.h"
#include "numpy_out.h"

namespace tfrx {
namespace py {

using namespace nb::literals;
namespace ex = tfrx::example;

namespace {

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

// Columns arrive from tfrx.codec.columnar as EncodeColumns of C-contiguous
// buffers with the dtypes columnar.py guarantees; their lengths are checked
// against each other by validate_columns.
struct ColumnSet {
  std::vector<ex::Column> columns;
  std::vector<std::unique_ptr<tfrx::ByteView>> views;

  const tfrx::ByteView* view(const nb::object& obj) {
    if (obj.is_none()) return nullptr;
    views.push_back(std::make_unique<tfrx::ByteView>(obj));
    return views.back().get();
  }

  void load(nb::handle spec) {
    for (nb::handle item : spec) {
      EncodeColumn* col;
      if (!nb::try_cast<EncodeColumn*>(item, col, false) || !col)
        throw nb::type_error("encode_examples takes a sequence of EncodeColumn");
      ex::Column c;
      c.key = col->key;
      c.kind = static_cast<uint8_t>(col->kind);
      const tfrx::ByteView* v = view(col->values);
      if (!v) throw nb::value_error("column values missing");
      c.values = v->data();
      size_t width = c.kind == ex::kInt64 ? 8 : c.kind == ex::kFloat ? 4 : 1;
      if (v->size() % width) throw nb::value_error("column values buffer has a partial element");
      c.values_size = v->size() / width;
      if (const tfrx::ByteView* o = view(col->offsets)) {
        c.offsets = reinterpret_cast<const int64_t*>(o->data());
        c.offsets_size = o->size() / 8;
      }
      if (const tfrx::ByteView* sp = view(col->splits)) {
        c.splits = reinterpret_cast<const int64_t*>(sp->data());
        c.splits_size = sp->size() / 8;
      }
      if (const tfrx::ByteView* st = view(col->steps)) {
        c.steps = reinterpret_cast<const int64_t*>(st->data());
        c.steps_size = st->size() / 8;
      }
      if (const tfrx::ByteView* pr = view(col->present)) {
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
    return nb::cast(EncodedBatch{data, starts, lengths});
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

}  // namespace

nb::dict decode_example(nb::handle data, bool keep_empty) {
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

DecodedSequenceExample decode_sequence_example(nb::handle data, bool keep_empty) {
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
  return DecodedSequenceExample{context, lists};
}

// Packs a list of bytes into uint8 values and int64 offsets[n + 1]; raises
// TypeError at the first item that is not exactly bytes, so the caller can
// fall back to its general conversion.
PackedValues pack_bytes(nb::handle items) {
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
  return PackedValues{packed, offsets};
}

nb::object encode_examples(nb::handle features, size_t rows, bool as_batch) {
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

nb::object encode_sequence_examples(nb::handle context, nb::handle feature_lists, size_t rows,
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

}  // namespace py
}  // namespace tfrx
