#include <nanobind/ndarray.h>

#include "bindings.h"
#include "shuffle.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tfrx {
namespace py {

namespace {

// What one shuffle_draws call did: its status, the outputs it wrote and the state to pass to the next call.
struct DrawResult {
  DrawStatus status;
  int64_t written;
  int64_t fill;
  int64_t upos;
  int64_t next_id;
};

}  // namespace

void bind_shuffle(nb::module_& m) {
  using Ids = nb::ndarray<int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
  using Uniforms = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

  nb::enum_<DrawStatus>(m, "DrawStatus", nb::is_arithmetic(), "What stopped a shuffle_draws call (shuffle.h).")
      .value("DONE", DrawStatus::kDone, "`count` outputs written")
      .value("NEED_RECORDS", DrawStatus::kNeedRecords,
             "the buffer is not full: read more records, or mark the input exhausted")
      .value("NEED_UNIFORMS", DrawStatus::kNeedUniforms, "the uniforms are used up")
      .value("EXHAUSTED", DrawStatus::kExhausted, "the input is exhausted and the buffer empty");
  nb::class_<DrawResult>(m, "DrawResult", "What a shuffle_draws call did, and the draws' state after it.")
      .def_ro("status", &DrawResult::status, "what stopped the call")
      .def_ro("written", &DrawResult::written, "record numbers written to `out`")
      .def_ro("fill", &DrawResult::fill, "buffer[0 .. fill) hold record numbers")
      .def_ro("upos", &DrawResult::upos, "the next uniform to use")
      .def_ro("next_id", &DrawResult::next_id, "the next record number to enter the buffer");

  m.def(
      "shuffle_draws",
      [](Ids buffer, int64_t fill, Uniforms uniforms, int64_t upos, int64_t next_id, int64_t read_end, bool exhausted,
         Ids out, int64_t count) {
        const int64_t size = static_cast<int64_t>(buffer.shape(0));
        const int64_t nu = static_cast<int64_t>(uniforms.shape(0));
        if (count < 0 || count > static_cast<int64_t>(out.shape(0)) || fill < 0 || fill > size || upos < 0 ||
            upos > nu)
          throw nb::value_error("shuffle_draws: inconsistent arguments");
        ShuffleState state{fill, upos, next_id};
        int64_t written = 0;
        const DrawStatus status = shuffle_draws(buffer.data(), size, &state, uniforms.data(), nu, read_end, exhausted,
                                                out.data(), count, &written);
        return DrawResult{status, written, state.fill, state.upos, state.next_id};
      },
      "buffer"_a, "fill"_a, "uniforms"_a, "upos"_a, "next_id"_a, "read_end"_a, "exhausted"_a, "out"_a, "count"_a,
      "The window shuffle's draws on record numbers (see shuffle.h): writes up to `count` record numbers to\n"
      "`out` and returns a DrawResult (its status, how many it wrote, the state for the next call).");
}

}  // namespace py
}  // namespace tfrx
