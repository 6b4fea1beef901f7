#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <vector>

#include "bindings.h"
#include "buffer.h"
#include "example_classify.h"
#include "example_objects.h"
#include "numpy_out.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tfrx {
namespace py {

namespace {

using example::RecordKind;

// classify_records' answer: a RecordKind per record, and the names it leaves
// to the caller's Unicode check (name i is data[name_starts[i]:][:name_lengths[i]],
// in record name_records[i]).
struct RecordKinds {
  UInt8Array kinds;
  Int64Array name_records, name_starts, name_lengths;
};

RecordKinds classify_records(nb::handle data, Int64In starts, Int64In lengths, bool top_level_only) {
  ByteView view(data);
  check_spans(view.size(), starts, lengths);
  const size_t count = starts.shape(0);
  std::vector<uint8_t> kinds(count);
  std::vector<int64_t> records, name_starts, name_lengths;
  {
    nb::gil_scoped_release release;
    std::vector<example::NameSpan> names;
    for (size_t i = 0; i < count; ++i) {
      const size_t start = static_cast<size_t>(starts(i));
      names.clear();
      kinds[i] = static_cast<uint8_t>(
          example::classify_record(view.data() + start, static_cast<size_t>(lengths(i)), top_level_only, &names));
      for (const example::NameSpan& name : names) {
        records.push_back(static_cast<int64_t>(i));
        name_starts.push_back(static_cast<int64_t>(start + name.offset));
        name_lengths.push_back(static_cast<int64_t>(name.size));
      }
    }
  }
  return RecordKinds{owned_uint8(std::move(kinds)), owned_int64(std::move(records)),
                     owned_int64(std::move(name_starts)), owned_int64(std::move(name_lengths))};
}

// top_level_fields' answer.
struct MessageFields {
  Int64Array numbers, wire_types;
  bool complete;
};

MessageFields message_fields(nb::handle data) {
  ByteView view(data);
  std::vector<example::WireField> fields;
  bool complete;
  {
    nb::gil_scoped_release release;
    complete = example::top_level_fields(view.data(), view.size(), &fields);
  }
  std::vector<int64_t> numbers(fields.size()), types(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    numbers[i] = fields[i].number;
    types[i] = fields[i].wire_type;
  }
  return MessageFields{owned_int64(std::move(numbers)), owned_int64(std::move(types)), complete};
}

}  // namespace

void bind_codec(nb::module_& m) {
  m.def("decode_example", &decode_example, "data"_a, nb::kw_only(), "keep_empty"_a = false,
        "Decodes a serialized tf.train.Example into {name: int64/float32 array or list of bytes}.");
  m.def("decode_sequence_example", &decode_sequence_example, "data"_a, nb::kw_only(), "keep_empty"_a = false,
        "Decodes a serialized tf.train.SequenceExample into a DecodedSequenceExample (context, feature_lists).");
  m.def("pack_bytes", &pack_bytes, "items"_a,
        "Packs a list of bytes into PackedValues (uint8 values, int64 offsets); TypeError if an item is not bytes.");

  nb::class_<EncodeColumn>(m, "EncodeColumn",
                           "One feature of the rows to encode, as flat buffers (see tfrx.codec.columnar).")
      .def(nb::init<std::string, tfrx::parse::Kind, nb::object, nb::object, nb::object, nb::object, nb::object>(),
           "key"_a, "kind"_a, "values"_a, "splits"_a, "offsets"_a = nb::none(), "present"_a = nb::none(),
           "steps"_a = nb::none(),
           "values: int64 / float32 values, or for BYTES the uint8 data of all values, value k being\n"
           "data[offsets[k]:offsets[k + 1]]; splits: int64, row (or feature-list step) i holds values\n"
           "[splits[i], splits[i + 1]); present: uint8 per example, 0 where the feature is absent;\n"
           "steps (feature lists): int64, example i holds steps [steps[i], steps[i + 1]).")
      .def_ro("key", &EncodeColumn::key)
      .def_ro("kind", &EncodeColumn::kind)
      .def_ro("values", &EncodeColumn::values)
      .def_ro("splits", &EncodeColumn::splits)
      .def_ro("offsets", &EncodeColumn::offsets)
      .def_ro("steps", &EncodeColumn::steps)
      .def_ro("present", &EncodeColumn::present);
  m.def("encode_examples", &encode_examples, "features"_a, "rows"_a, "as_batch"_a = false,
        nb::sig("def encode_examples(features: object, rows: int, as_batch: bool = False)"
                " -> list[bytes] | EncodedBatch"),
        "Serializes rows of EncodeColumns as tf.train.Example (see tfrx.encode_examples): a list of bytes,\n"
        "or with as_batch an EncodedBatch.");
  m.def("encode_sequence_examples", &encode_sequence_examples, "context"_a, "feature_lists"_a, "rows"_a,
        "as_batch"_a = false,
        nb::sig("def encode_sequence_examples(context: object, feature_lists: object, rows: int,"
                " as_batch: bool = False) -> list[bytes] | EncodedBatch"),
        "Serializes rows of EncodeColumns as tf.train.SequenceExample: a list of bytes,\n"
        "or with as_batch an EncodedBatch.");

  nb::enum_<RecordKind>(m, "RecordKind", nb::is_arithmetic(), "What a record's payload is (example_classify.h).")
      .value("EMPTY", RecordKind::kEmpty, "zero bytes")
      .value("EXAMPLE", RecordKind::kExample, "a tf.train.Example")
      .value("SEQUENCE_EXAMPLE", RecordKind::kSequenceExample, "a tf.train.SequenceExample (it has feature_lists)")
      .value("OTHER", RecordKind::kOther, "anything else: another message, text, damaged bytes");
  nb::class_<RecordKinds>(m, "RecordKinds", "classify_records' answer.")
      .def_prop_ro("kinds", [](const RecordKinds& r) { return r.kinds; }, nb::rv_policy::automatic,
                   "uint8, the RecordKind of each record")
      .def_prop_ro("name_records", [](const RecordKinds& r) { return r.name_records; }, nb::rv_policy::automatic,
                   "int64, the record of each name left to the caller")
      .def_prop_ro("name_starts", [](const RecordKinds& r) { return r.name_starts; }, nb::rv_policy::automatic,
                   "int64, where each such name starts in `data`")
      .def_prop_ro("name_lengths", [](const RecordKinds& r) { return r.name_lengths; }, nb::rv_policy::automatic,
                   "int64, each such name's length in bytes");
  m.def("classify_records", &classify_records, "data"_a, "starts"_a, "lengths"_a, nb::kw_only(),
        "top_level_only"_a = false,
        "The RecordKind of each record data[starts[i]:starts[i]+lengths[i]] from its wire structure\n"
        "(GIL released). Feature names with bytes >= 0x80 come back as spans: a record is of its kind\n"
        "only if each of its names is valid, printable UTF-8 (the caller checks them).");
  nb::class_<MessageFields>(m, "MessageFields", "message_fields' answer.")
      .def_prop_ro("numbers", [](const MessageFields& f) { return f.numbers; }, nb::rv_policy::automatic,
                   "int64, the field number of each top-level field in wire order")
      .def_prop_ro("wire_types", [](const MessageFields& f) { return f.wire_types; }, nb::rv_policy::automatic,
                   "int64, the wire type of each")
      .def_ro("complete", &MessageFields::complete, "False when malformed bytes stopped the walk");
  m.def("message_fields", &message_fields, "data"_a,
        "The top-level fields of the protocol-buffer message in `data` (to describe unknown payloads).");
}

}  // namespace py
}  // namespace tfrx
