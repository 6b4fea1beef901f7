// Examples as Python objects (see example_objects.cpp).
#pragma once
#include <nanobind/nanobind.h>

#include <cstddef>

namespace tfrx {
namespace py {

namespace nb = nanobind;

// A serialized tf.train.Example as {name: int64/float32 array or list of bytes}.
nb::dict decode_example(nb::handle data, bool keep_empty);
// A serialized tf.train.SequenceExample as (context, feature_lists) dicts.
nb::tuple decode_sequence_example(nb::handle data, bool keep_empty);
// A list of bytes packed into (uint8 data, int64 offsets[n + 1]); TypeError at
// the first item that is not exactly bytes, so the caller can fall back.
nb::tuple pack_bytes(nb::handle items);
// Rows of prepared columns (tuples from tfrx.codec) as serialized records: a
// list of bytes, or with as_batch the (data, starts, lengths) of a RecordBatch.
nb::object encode_examples(nb::handle features, size_t rows, bool as_batch);
nb::object encode_sequence_examples(nb::handle context, nb::handle feature_lists, size_t rows, bool as_batch);

}  // namespace py
}  // namespace tfrx
