// The named results that bindings return instead of bare tuples (docs/architecture.md,
// "Native code rules"). Each keeps the order of the tuple it replaced and still unpacks
// (`values, offsets = pack_spans(...)`), indexes and has len(), so code written against the
// tuple keeps working while callers read the fields by name. Bound in bind_results.cpp.
#pragma once
#include <nanobind/nanobind.h>

#include <cstddef>

namespace tfrx {
namespace py {

namespace nb = nanobind;

// frame_into / frame_batch_into: how far framing into a buffer got.
struct FrameProgress {
  size_t next;  // index of the first record not framed
  size_t used;  // bytes written
  nb::tuple fields() const { return nb::make_tuple(next, used); }
};

// record_framing: the 12-byte header and 4-byte footer of one record.
struct RecordFraming {
  nb::bytes header, footer;
  nb::tuple fields() const { return nb::make_tuple(header, footer); }
};

// pack_spans / pack_bytes: values end to end in a uint8 array, value i at
// values[offsets[i]:offsets[i + 1]] (int64 offsets, n + 1 of them, from 0).
struct PackedValues {
  nb::object values, offsets;
  nb::tuple fields() const { return nb::make_tuple(values, offsets); }
};

// decode_sequence_example: {name: value} and {name: [value per step]}.
struct DecodedSequenceExample {
  nb::dict context, feature_lists;
  nb::tuple fields() const { return nb::make_tuple(context, feature_lists); }
};

// encode_examples / encode_sequence_examples with as_batch: the records end
// to end in a uint8 array, record i at data[starts[i]:starts[i] + lengths[i]].
struct EncodedBatch {
  nb::object data, starts, lengths;
  nb::tuple fields() const { return nb::make_tuple(data, starts, lengths); }
};

// sparse_indices: COO indices (None unless asked for) and the dense shape.
struct SparseIndices {
  nb::object indices, dense_shape;
  nb::tuple fields() const { return nb::make_tuple(indices, dense_shape); }
};

// A variable-length column of a parse result: row i holds values[row_splits[i]:row_splits[i + 1]].
struct RaggedColumn {
  nb::object values, row_splits;
  nb::tuple fields() const { return nb::make_tuple(values, row_splits); }
};

// A feature-list column of a parse result: step j holds values[step_splits[j]:step_splits[j + 1]],
// record i holds steps [record_splits[i], record_splits[i + 1]).
struct SequenceColumn {
  nb::object values, step_splits, record_splits;
  nb::tuple fields() const { return nb::make_tuple(values, step_splits, record_splits); }
};

}  // namespace py
}  // namespace tfrx
