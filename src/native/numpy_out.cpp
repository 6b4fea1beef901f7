#include "numpy_out.h"

#include <string>

#include <utility>

namespace tfrx {
namespace py {

PyObject* np_dtype_int64 = nullptr;
PyObject* np_dtype_float32 = nullptr;
PyObject* np_dtype_uint8 = nullptr;
namespace {
PyObject* np_empty = nullptr;
}

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

// The pointer is read from the ndarray object's `data` field, which follows
// the object header in every NumPy release (what PyArray_DATA reads), saving
// a buffer-protocol round trip per array.
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

namespace {

template <typename T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> owned(std::vector<T>&& v) {
  auto* heap = new std::vector<T>(std::move(v));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T, nb::ndim<1>>(heap->data(), {heap->size()}, owner);
}

}  // namespace

Int64Array owned_int64(std::vector<int64_t>&& v) { return owned(std::move(v)); }

UInt8Array owned_uint8(std::vector<uint8_t>&& v) { return owned(std::move(v)); }

nb::bytes new_bytes(size_t n, uint8_t** data) {
  PyObject* obj = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(n));
  if (!obj) throw nb::python_error();
  *data = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(obj));
  return nb::steal<nb::bytes>(obj);
}

ByteDestination::ByteDestination(nb::handle out, size_t total, const char* what) {
  if (out.is_none()) {
    init_numpy();
    void* p = nullptr;
    array = new_array(total, np_dtype_uint8, &p);
    data = static_cast<uint8_t*>(p);
    return;
  }
  if (PyObject_GetBuffer(out.ptr(), &view_, PyBUF_WRITABLE) != 0) throw nb::python_error();
  held_ = true;
  if (static_cast<size_t>(view_.len) < total) {
    PyBuffer_Release(&view_);
    held_ = false;
    throw nb::value_error((std::string(what) + ": out is smaller than the records").c_str());
  }
  data = static_cast<uint8_t*>(view_.buf);
  array = nb::borrow(out);
}

ByteDestination::~ByteDestination() {
  if (held_) PyBuffer_Release(&view_);
}

void check_spans(size_t size, const Int64In& starts, const Int64In& lengths) {
  if (starts.shape(0) != lengths.shape(0)) throw nb::value_error("starts and lengths differ in length");
  for (size_t i = 0; i < starts.shape(0); ++i) {
    const int64_t s = starts(i), n = lengths(i);
    if (s < 0 || n < 0 || static_cast<uint64_t>(s) > size || static_cast<uint64_t>(n) > size - static_cast<uint64_t>(s))
      throw nb::value_error("a record lies outside the data buffer");
  }
}

}  // namespace py
}  // namespace tfrx
