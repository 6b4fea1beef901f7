#include "shuffle.h"

namespace tfrx {

DrawStatus shuffle_draws(int64_t* b, int64_t size, ShuffleState* st, const double* u, int64_t nu, int64_t read_end,
                         bool exhausted, int64_t* o, int64_t count, int64_t* written) {
  int64_t fill = st->fill, upos = st->upos, next_id = st->next_id, n = 0;
  DrawStatus status = DrawStatus::kDone;
  while (n < count) {
    while (fill < size && next_id < read_end) b[fill++] = next_id++;
    if (fill < size && !exhausted) { status = DrawStatus::kNeedRecords; break; }
    if (fill == 0) { status = DrawStatus::kExhausted; break; }
    if (upos >= nu) { status = DrawStatus::kNeedUniforms; break; }
    // Uniforms lie in [0, 1); anything else (NaN included) is clamped rather than read past the buffer.
    const double x = u[upos++] * static_cast<double>(fill);
    const int64_t i = x >= 0 && x < static_cast<double>(fill) ? static_cast<int64_t>(x) : x >= 0 ? fill - 1 : 0;
    o[n++] = b[i];
    b[i] = b[fill - 1];
    --fill;
  }
  st->fill = fill;
  st->upos = upos;
  st->next_id = next_id;
  *written = n;
  return status;
}

}  // namespace tfrx
