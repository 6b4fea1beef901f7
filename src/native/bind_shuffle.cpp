#include <nanobind/ndarray.h>

#include <cstring>

#include "bindings.h"
#include "buffer.h"
#include "numpy_out.h"
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

  nb::class_<RecordSet>(m, "RecordSet",
                        "Records taken out of a RecordStore, each in its own allocation; the native parser reads\n"
                        "them where they are (ParserCore.parse_records).")
      .def("__len__", [](const RecordSet& r) { return r.records().size(); })
      .def_prop_ro("nbytes", &RecordSet::bytes, "payload bytes of the records")
      .def(
          "lengths",
          [](const RecordSet& r) {
            std::vector<int64_t> lengths(r.records().size());
            for (size_t i = 0; i < lengths.size(); ++i) lengths[i] = static_cast<int64_t>(r.records()[i].size);
            return owned_int64(std::move(lengths));
          },
          "int64 length of each record")
      .def(
          "gather",
          [](const RecordSet& r, nb::handle out_buf) {
            ByteDestination dst(out_buf, r.bytes(), "RecordSet.gather");
            {
              nb::gil_scoped_release release;
              uint8_t* w = dst.data;
              for (const StoredRecord& rec : r.records()) {
                if (rec.size) std::memcpy(w, rec.data, rec.size);
                w += rec.size;
              }
            }
            return dst.array;
          },
          "out"_a = nb::none(),
          "The records end to end in `out` (a writable buffer of at least nbytes) or a new uint8 array.");

  nb::class_<RecordStore>(m, "RecordStore",
                          "The records of a shuffle buffer by number (0, 1, ... in the order added), each copied\n"
                          "once into its own allocation: memory follows the bytes of the records held.")
      .def(
          "__init__",
          [](RecordStore* self, const RecordStore* share) {
            new (self) RecordStore(share != nullptr ? share->recycler() : std::make_shared<RecordRecycler>());
          },
          "share"_a = nb::none(),
          "A store; with `share`, one that reuses the allocations of records that left either store.")
      .def(
          "add",
          [](RecordStore& store, nb::handle data, Int64In starts, Int64In lengths) {
            ByteView view(data);
            check_spans(view.size(), starts, lengths);
            bool ok;
            {
              nb::gil_scoped_release release;
              ok = store.add(view.data(), starts.data(), lengths.data(), starts.shape(0));
            }
            if (!ok) throw std::bad_alloc();
          },
          "data"_a, "starts"_a, "lengths"_a,
          "Copies records data[starts[i]:starts[i]+lengths[i]] in, numbered from `end` on.")
      .def(
          "add_spans",
          [](RecordStore& store, nb::handle buffers, Int64In which, Int64In spans, Int64In lengths) {
            const size_t n = spans.shape(0);
            if (which.shape(0) != n || lengths.shape(0) != n)
              throw nb::value_error("RecordStore.add_spans: which, spans and lengths must have equal lengths");
            ByteViews views(buffers);
            std::vector<const uint8_t*> records(n);
            for (size_t i = 0; i < n; ++i)
              records[i] = views.span(which(i), spans(i), lengths(i), "RecordStore.add_spans");
            bool ok;
            {
              nb::gil_scoped_release release;
              ok = store.add(records.data(), lengths.data(), n);
            }
            if (!ok) throw std::bad_alloc();
          },
          "buffers"_a, "which"_a, "spans"_a, "lengths"_a,
          "Copies records buffers[which[i]][spans[i]:spans[i]+lengths[i]] in (a parallel read's batch), "
          "numbered from `end` on.")
      .def(
          "take",
          [](RecordStore& store, Int64In ids) {
            RecordSet out;
            if (!store.take(ids.data(), ids.shape(0), &out))
              throw nb::value_error("RecordStore.take: a record number is not held (or given twice)");
            return out;
          },
          "ids"_a, "Moves the records numbered `ids` out, in that order, into a RecordSet.")
      .def_prop_ro("end", &RecordStore::end, "the number the next record added gets")
      .def_prop_ro("nbytes", &RecordStore::bytes, "payload bytes of the records held")
      .def_prop_ro("count", &RecordStore::count, "records held")
      .def_prop_ro(
          "recycled_bytes",
          [](const RecordStore& store) {
            std::lock_guard<std::mutex> lock(store.recycler()->lock());
            return store.recycler()->held();
          },
          "bytes of allocations of records that left, kept for the records that enter next");
}

}  // namespace py
}  // namespace tfrx
