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
  m.def("encode_examples", &encode_examples, "features"_a, "rows"_a, "as_batch"_a = false,
        "Serializes rows of prepared columns as tf.train.Example (see tfrx.encode_examples).");
  m.def("encode_sequence_examples", &encode_sequence_examples, "context"_a, "feature_lists"_a, "rows"_a,
        "as_batch"_a = false, "Serializes rows of prepared columns as tf.train.SequenceExample.");
}

}  // namespace py
}  // namespace tfrx
