#include <nanobind/stl/string.h>

#include "bindings.h"
#include "example_objects.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tfrx {
namespace py {

void bind_codec(nb::module_& m) {
  m.def("decode_example", &decode_example, "data"_a, nb::kw_only(), "keep_empty"_a = false,
        "Decodes a serialized tf.train.Example into {name: int64/float32 array or list of bytes}.");
  m.def("decode_sequence_example", &decode_sequence_example, "data"_a, nb::kw_only(), "keep_empty"_a = false,
        "Decodes a serialized tf.train.SequenceExample into (context, feature_lists) dicts.");
  m.def("pack_bytes", &pack_bytes, "items"_a,
        "Packs a list of bytes into (uint8 data, int64 offsets); TypeError if an item is not bytes.");

  nb::class_<EncodeColumn>(m, "EncodeColumn",
                           "One feature of the rows to encode, as flat buffers (see tfrx.codec.columnar).")
      .def(nb::init<std::string, tfrx::parse::Kind, nb::object, nb::object, nb::object, nb::object, nb::object>(),
           "key"_a, "kind"_a, nb::kw_only(), "values"_a, "splits"_a, "offsets"_a = nb::none(),
           "steps"_a = nb::none(), "present"_a = nb::none(),
           "values: int64 / float32 values, or for BYTES the uint8 data of all values, value k being\n"
           "data[offsets[k]:offsets[k + 1]]; splits: int64, row (or feature-list step) i holds values\n"
           "[splits[i], splits[i + 1]); steps (feature lists): int64, example i holds steps\n"
           "[steps[i], steps[i + 1]); present: uint8 per example, 0 where the feature is absent.")
      .def_ro("key", &EncodeColumn::key)
      .def_ro("kind", &EncodeColumn::kind)
      .def_ro("values", &EncodeColumn::values)
      .def_ro("splits", &EncodeColumn::splits)
      .def_ro("offsets", &EncodeColumn::offsets)
      .def_ro("steps", &EncodeColumn::steps)
      .def_ro("present", &EncodeColumn::present);
  m.def("encode_examples", &encode_examples, "features"_a, "rows"_a, "as_batch"_a = false,
        "Serializes rows of EncodeColumns as tf.train.Example (see tfrx.encode_examples).");
  m.def("encode_sequence_examples", &encode_sequence_examples, "context"_a, "feature_lists"_a, "rows"_a,
        "as_batch"_a = false, "Serializes rows of EncodeColumns as tf.train.SequenceExample.");
}

}  // namespace py
}  // namespace tfrx
