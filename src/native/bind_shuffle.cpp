#include <nanobind/ndarray.h>

#include "bindings.h"
#include "shuffle.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tfrx {
namespace py {

void bind_shuffle(nb::module_& m) {
  using Ids = nb::ndarray<int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
  using Uniforms = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
  m.def(
      "shuffle_draws",
      [](Ids buffer, int64_t fill, Uniforms uniforms, int64_t upos, int64_t next_id, int64_t read_end, bool exhausted,
         Ids out, int64_t count) {
        const int64_t size = static_cast<int64_t>(buffer.shape(0));
        const int64_t nu = static_cast<int64_t>(uniforms.shape(0));
        if (count > static_cast<int64_t>(out.shape(0)) || fill < 0 || fill > size || upos < 0 ||
            upos > nu)
          throw nb::value_error("shuffle_draws: inconsistent arguments");
        ShuffleState state{fill, upos, next_id};
        int64_t written = 0;
        const DrawStatus status = shuffle_draws(buffer.data(), size, &state, uniforms.data(), nu, read_end, exhausted,
                                                out.data(), count, &written);
        return nb::make_tuple(static_cast<int>(status), written, state.fill, state.upos, state.next_id);
      },
      "buffer"_a, "fill"_a, "uniforms"_a, "upos"_a, "next_id"_a, "read_end"_a, "exhausted"_a, "out"_a, "count"_a,
      "The window shuffle's draws on record numbers (see shuffle.h); returns (status, n, fill, upos, next_id),\n"
      "status 0 done, 1 needs records, 2 needs uniforms, 3 exhausted.");
}

}  // namespace py
}  // namespace tfrx
