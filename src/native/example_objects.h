// Examples as Python objects (see example_objects.cpp).
#pragma once
#include <nanobind/nanobind.h>

#include <cstddef>
#include <string>

#include "parse.h"
#include "results.h"

namespace tfrx {
namespace py {

namespace nb = nanobind;

// A serialized tf.train.Example as {name: int64/float32 array or list of bytes}.
nb::dict decode_example(nb::handle data, bool keep_empty);
// A serialized tf.train.SequenceExample as its context and feature_lists dicts.
DecodedSequenceExample decode_sequence_example(nb::handle data, bool keep_empty);
// A list of bytes packed into uint8 values and int64 offsets[n + 1]; TypeError
// at the first item that is not exactly bytes, so the caller can fall back.
PackedValues pack_bytes(nb::handle items);
// One feature of the rows to encode, prepared by tfrx.codec.columnar: flat
// buffers that example_encode.h's Column points into (checked when encoding).
struct EncodeColumn {
  EncodeColumn(std::string key, tfrx::parse::Kind kind, nb::object values, nb::object splits, nb::object offsets,
               nb::object present, nb::object steps)
      : key(std::move(key)), kind(kind), values(std::move(values)), splits(std::move(splits)),
        offsets(std::move(offsets)), present(std::move(present)), steps(std::move(steps)) {}

  std::string key;
  tfrx::parse::Kind kind;
  nb::object values;   // int64 / float32 values, or the uint8 data of all bytes values
  nb::object splits;   // int64: row (feature lists: step) i holds values [splits[i], splits[i + 1])
  nb::object offsets;  // bytes values: int64, value k is data[offsets[k], offsets[k + 1]); else None
  nb::object present;  // None, or uint8 per example, 0 where the feature is absent
  nb::object steps;    // feature lists: int64, example i holds steps [steps[i], steps[i + 1]); else None
};

// Rows of EncodeColumns (a sequence) as serialized records: a list of bytes,
// or with as_batch an EncodedBatch (data, starts, lengths) for a RecordBatch.
nb::object encode_examples(nb::handle features, size_t rows, bool as_batch);
nb::object encode_sequence_examples(nb::handle context, nb::handle feature_lists, size_t rows, bool as_batch);

}  // namespace py
}  // namespace tfrx
