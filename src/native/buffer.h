// Borrowing any Python buffer-protocol object (bytes, bytearray, memoryview,
// NumPy arrays, mmap) as a read-only byte span, without copying.
#pragma once
#include <nanobind/nanobind.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tfrx {

class ByteView {
 public:
  explicit ByteView(nanobind::handle obj) {
    if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_SIMPLE) != 0) throw nanobind::python_error();
    held_ = true;
  }
  ~ByteView() {
    if (held_) PyBuffer_Release(&view_);
  }
  ByteView(const ByteView&) = delete;
  ByteView& operator=(const ByteView&) = delete;

  const uint8_t* data() const { return static_cast<const uint8_t*>(view_.buf); }
  size_t size() const { return static_cast<size_t>(view_.len); }

 private:
  Py_buffer view_{};
  bool held_ = false;
};

// Borrowed views of a sequence of buffers, for records that lie in runs in
// several of them: record i is buffers[which[i]][starts[i] .. starts[i] + lengths[i]].
class ByteViews {
 public:
  explicit ByteViews(nanobind::handle buffers) {
    for (nanobind::handle b : buffers) views_.emplace_back(new ByteView(b));
  }

  size_t size() const { return views_.size(); }
  const ByteView& operator[](size_t k) const { return *views_[k]; }

  // The first byte of buffers[which][start .. start + length); throws (naming `what`) unless it lies there.
  const uint8_t* span(int64_t which, int64_t start, int64_t length, const char* what) const {
    if (which < 0 || static_cast<uint64_t>(which) >= views_.size())
      throw nanobind::index_error((std::string(what) + ": buffer index out of range").c_str());
    const ByteView& v = *views_[static_cast<size_t>(which)];
    if (start < 0 || length < 0 || static_cast<uint64_t>(start) > v.size() ||
        static_cast<uint64_t>(length) > v.size() - static_cast<uint64_t>(start))
      throw nanobind::value_error((std::string(what) + ": a record lies outside its buffer").c_str());
    return v.data() + start;
  }

 private:
  std::vector<std::unique_ptr<ByteView>> views_;
};

}  // namespace tfrx
