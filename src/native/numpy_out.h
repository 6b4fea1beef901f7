// NumPy arrays and bytes objects made for Python by the bindings. NumPy is
// reached through its Python API (np.empty and the array's data pointer) so
// that the build needs no NumPy headers.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tfrx {
namespace py {

namespace nb = nanobind;

using Int64Array = nb::ndarray<nb::numpy, int64_t, nb::ndim<1>>;
using UInt8Array = nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>;
using Int64In = nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// The dtypes new_array makes; valid once init_numpy() has run.
extern PyObject* np_dtype_int64;
extern PyObject* np_dtype_float32;
extern PyObject* np_dtype_uint8;

// Fetches numpy.empty and the dtypes once (safe to call from any thread holding the GIL).
void init_numpy();

// A new, owned, C-contiguous 1-D NumPy array of n items and a pointer to its data.
nb::object new_array(size_t n, PyObject* dtype, void** data);

// Hands a vector's memory to NumPy; a capsule frees it with the array.
Int64Array owned_int64(std::vector<int64_t>&& v);
UInt8Array owned_uint8(std::vector<uint8_t>&& v);

// A new bytes object of size n, filled in place before anyone else sees it.
nb::bytes new_bytes(size_t n, uint8_t** data);

// Where a copy of `total` bytes goes: the caller's `out` (a writable buffer of
// at least `total` bytes, held until destruction) or, for None, a new uint8
// array. `array` is what to return; `data` where to write.
class ByteDestination {
 public:
  ByteDestination(nb::handle out, size_t total, const char* what);
  ~ByteDestination();
  ByteDestination(const ByteDestination&) = delete;
  ByteDestination& operator=(const ByteDestination&) = delete;

  uint8_t* data = nullptr;
  nb::object array;

 private:
  Py_buffer view_{};
  bool held_ = false;
};

// Checks that every record starts[i] .. starts[i] + lengths[i] lies inside a buffer of `size` bytes.
void check_spans(size_t size, const Int64In& starts, const Int64In& lengths);

}  // namespace py
}  // namespace tfrx
