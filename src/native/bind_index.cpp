#include <nanobind/ndarray.h>

#include "bindings.h"
#include "buffer.h"
#include "index.h"
#include "numpy_out.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tfrx {
namespace py {

void bind_index(nb::module_& m) {
  m.attr("GATHER_OK") = static_cast<int>(GatherStatus::kOk);
  m.attr("GATHER_OUT_OF_RANGE") = static_cast<int>(GatherStatus::kOutOfRange);
  m.attr("GATHER_LENGTH") = static_cast<int>(GatherStatus::kLength);
  m.attr("GATHER_LENGTH_CRC") = static_cast<int>(GatherStatus::kLengthCrc);
  m.attr("GATHER_DATA_CRC") = static_cast<int>(GatherStatus::kDataCrc);
  m.attr("GATHER_IO") = static_cast<int>(GatherStatus::kIo);
  using GatherOut = nb::ndarray<uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
  m.def(
      "gather_records",
      [](nb::handle source, Int64In offsets, Int64In lengths, Int64In out_starts, GatherOut out, bool verify) {
        const size_t count = offsets.shape(0);
        if (lengths.shape(0) != count || out_starts.shape(0) != count)
          throw nb::value_error("offsets, lengths and out_starts must have the same length");
        GatherResult r;
        if (PyLong_Check(source.ptr())) {
          const int fd = nb::cast<int>(source);
          nb::gil_scoped_release release;
          gather_from_fd(fd, offsets.data(), lengths.data(), out_starts.data(), count, out.data(),
                               out.shape(0), verify, &r);
        } else {
          ByteView view(source);
          nb::gil_scoped_release release;
          gather_from_buffer(view.data(), view.size(), offsets.data(), lengths.data(), out_starts.data(),
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

}

}  // namespace py
}  // namespace tfrx
