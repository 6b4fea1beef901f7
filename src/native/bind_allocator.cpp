#include "allocator.h"
#include "bindings.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tfrx {
namespace py {

void bind_allocator(nb::module_& m) {
  m.def("malloc_tunable", &malloc_tunable, "Whether the C library is glibc (see set_malloc_thresholds).");
  m.def("set_malloc_thresholds", &set_malloc_thresholds, "mmap_threshold"_a, "trim_threshold"_a,
        "Sets glibc malloc's M_MMAP_THRESHOLD and M_TRIM_THRESHOLD; False where not glibc or refused.");
}

}  // namespace py
}  // namespace tfrx
