// The extension module: one bind_* call per concern (see bindings.h).
#include <nanobind/nanobind.h>

#include "bindings.h"

namespace nb = nanobind;

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
  tfrx::py::bind_results(m);
  tfrx::py::bind_crc32c(m);
  tfrx::py::bind_allocator(m);
  tfrx::py::bind_framing(m);
  tfrx::py::bind_shuffle(m);
  tfrx::py::bind_codec(m);
  tfrx::py::bind_parser(m);
  tfrx::py::bind_split_choice(m);
  tfrx::py::bind_index(m);
  tfrx::py::bind_image(m);
  tfrx::py::bind_inflate(m);
  tfrx::py::bind_presence(m);
  tfrx::py::bind_jpeg(m);
}
