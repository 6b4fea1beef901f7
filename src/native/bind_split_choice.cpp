#include "bindings.h"
#include "split_choice.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tfrx {
namespace py {

void bind_split_choice(nb::module_& m) {
  nb::class_<SplitChoice::State>(m, "SplitState", "What a SplitChoice has measured (medians in ns per byte).")
      .def_ro("one_samples", &SplitChoice::State::one_samples)
      .def_ro("split_samples", &SplitChoice::State::split_samples)
      .def_ro("one_ns_per_byte", &SplitChoice::State::one_ns_per_byte)
      .def_ro("split_ns_per_byte", &SplitChoice::State::split_ns_per_byte)
      .def_ro("split", &SplitChoice::State::split, "whether jobs are split outside exploration");
  nb::class_<SplitChoice>(m, "SplitChoice",
                          "Whether memory-bound jobs are split over threads, from their measured wall times\n"
                          "(split_choice.h); copy_split_state() is the parser's copies' own.")
      .def(nb::init<double, int>(), "min_speedup"_a = 1.5, "explore_every"_a = 32)
      .def("threads", &SplitChoice::threads, "wanted"_a, "Threads for the next job: 1 or `wanted`.")
      .def("record", &SplitChoice::record, "threads"_a, "bytes"_a, "seconds"_a, "The wall time a job took.")
      .def_prop_ro("state", &SplitChoice::state);
  m.def("copy_split_state", []() { return copy_split().state(); },
        "What the parser's copies of large bytes values have measured on one thread and on several.");
}

}  // namespace py
}  // namespace tfrx
