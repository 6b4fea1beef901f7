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
  nb::enum_<GatherStatus>(m, "GatherStatus", nb::is_arithmetic(), "What stopped a gather_records call (index.h).")
      .value("OK", GatherStatus::kOk, "every record was copied and its framing checked")
      .value("OUT_OF_RANGE", GatherStatus::kOutOfRange, "record `index` runs past the end of the file or buffer")
      .value("LENGTH", GatherStatus::kLength,
             "the length field of record `index` (`actual`) differs from the index's (`expected`)")
      .value("LENGTH_CRC", GatherStatus::kLengthCrc, "the header of record `index` fails its length CRC")
      .value("DATA_CRC", GatherStatus::kDataCrc, "the payload of record `index` fails its data CRC")
      .value("IO", GatherStatus::kIo, "a read failed; `actual` is the errno");
  nb::class_<GatherResult>(m, "GatherResult", "What gather_records did: its status and, on failure, where and why.")
      .def_ro("status", &GatherResult::status, "OK, or why the gather stopped at request `index`")
      .def_ro("index", &GatherResult::index, "position in the request arrays of the failing record, or -1")
      .def_ro("expected", &GatherResult::expected, "LENGTH: the index's length; LENGTH_CRC / DATA_CRC: the stored CRC")
      .def_ro("actual", &GatherResult::actual,
              "LENGTH: the length field; LENGTH_CRC / DATA_CRC: the CRC of the bytes; IO: the errno");
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
        return r;
      },
      "source"_a, "offsets"_a, "lengths"_a, "out_starts"_a, "out"_a, "verify"_a = true,
      "Copies the payloads of the records whose headers are at `offsets` (with `lengths` payload\n"
      "bytes, from the index) to out[out_starts[k]:], checking each record's length field, length\n"
      "CRC and (verify) data CRC. `source` is a buffer (bytes, mmap) or a file descriptor read with\n"
      "positioned reads, back-to-back records in one call. Returns a GatherResult.");
}

}  // namespace py
}  // namespace tfrx
