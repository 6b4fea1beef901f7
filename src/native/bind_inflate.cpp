#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include "bindings.h"
#include "buffer.h"
#include "inflate_points.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tfrx {
namespace py {

void bind_inflate(nb::module_& m) {
  nb::enum_<InflateStatus>(m, "InflateStatus", nb::is_arithmetic(), "What ended a CheckpointInflater step.")
      .value("OK", InflateStatus::kOk, "the input was used up or the output filled")
      .value("BLOCK", InflateStatus::kBlock, "stopped at a deflate block boundary (`bits` unused bits)")
      .value("MEMBER_END", InflateStatus::kMemberEnd, "a member or stream ended; another may follow")
      .value("ERROR", InflateStatus::kError, "damaged data (`message`)");
  nb::class_<InflateStep>(m, "InflateStep", "What one CheckpointInflater step did.")
      .def_ro("status", &InflateStep::status)
      .def_ro("consumed", &InflateStep::consumed, "input bytes used")
      .def_ro("produced", &InflateStep::produced, "output bytes written")
      .def_ro("bits", &InflateStep::bits, "BLOCK: unused bits of the last input byte used")
      .def_ro("message", &InflateStep::message, "ERROR: zlib's description of the damage");
  using Out = nb::ndarray<uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
  nb::class_<CheckpointInflater>(m, "CheckpointInflater",
                                 "A GZIP (gzip=True) or ZLIB inflater that can stop at deflate block boundaries and\n"
                                 "restart at a checkpoint (zran-style): see tfrx.io.inflate_index.")
      .def(nb::init<bool>(), "gzip"_a)
      .def("start_member", &CheckpointInflater::start_member, "Expect a member's header next.")
      .def(
          "start_raw",
          [](CheckpointInflater& self, int bits, int value, nb::handle window) {
            ByteView w(window);
            if (!self.start_raw(bits, value, w.data(), w.size()))
              throw nb::value_error("invalid inflate checkpoint (bits 0-7, a byte value, a window of at most 32 KiB)");
          },
          "bits"_a, "value"_a, "window"_a,
          "Restart inside a member at a block boundary: `bits` high bits of `value` first, `window` as history.")
      .def(
          "step",
          [](CheckpointInflater& self, nb::handle input, Out out, bool stop_at_block) {
            ByteView in(input);
            nb::gil_scoped_release release;
            return self.step(in.data(), in.size(), out.data(), out.shape(0), stop_at_block);
          },
          "input"_a, "out"_a, "stop_at_block"_a = false,
          "Inflates `input` into `out` until either is used up, a member ends, damage is found or (stop_at_block)\n"
          "a deflate block ends.")
      .def(
          "window", [](CheckpointInflater& self) { return nb::bytes(self.window().data(), self.window().size()); },
          "The last (up to) 32 KiB of output.");
}

}  // namespace py
}  // namespace tfrx
