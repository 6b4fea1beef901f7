#include "bindings.h"
#include "buffer.h"
#include "crc32c.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tfrx {
namespace py {

namespace {
// A CRC of a Python buffer, extending `value`, computed without the GIL.
template <uint32_t (*Extend)(uint32_t, const uint8_t*, size_t)>
uint32_t extend_buffer(nb::handle data, uint32_t value) {
  ByteView view(data);
  nb::gil_scoped_release release;
  return Extend(value, view.data(), view.size());
}
}  // namespace

void bind_crc32c(nb::module_& m) {
  m.def("crc32c", &extend_buffer<crc32c_extend>, "data"_a, "value"_a = 0,
        "CRC-32C of a buffer, extending `value` (the CRC of preceding bytes).");
  m.def("crc32c_portable", &extend_buffer<crc32c_extend_portable>, "data"_a, "value"_a = 0,
        "CRC-32C computed by the portable table-driven fallback.");
  m.def(
      "masked_crc32c",
      [](nb::handle data) {
        ByteView view(data);
        nb::gil_scoped_release release;
        return crc32c_mask(crc32c(view.data(), view.size()));
      },
      "data"_a, "TFRecord's masked CRC-32C of a buffer.");
  m.def("crc32c_mask", &crc32c_mask, "crc"_a);
  m.def("crc32c_unmask", &crc32c_unmask, "masked"_a);
  m.def("crc32c_backend", &crc32c_backend, "The CRC-32C implementation chosen for this CPU.");
}

}  // namespace py
}  // namespace tfrx
