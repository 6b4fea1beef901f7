// What a record's payload is: a tf.train.Example, a SequenceExample, or
// something else, decided from its wire structure alone (protobuf bytes carry
// no type). The rules are strict where the decoder is lenient, so that other
// messages (TensorBoard events, Waymo frames, TFDV statistics) and text are
// told apart within their first bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tfrx {
namespace example {

enum class RecordKind : uint8_t {
  kEmpty = 0,            // zero bytes (an empty Example serializes to nothing)
  kExample = 1,          // only field 1 (Features), once
  kSequenceExample = 2,  // field 2 (FeatureLists) once, field 1 (context) at most once
  kOther = 3,
};

// A feature name to check further: [offset, offset + size) of the record.
struct NameSpan {
  size_t offset;
  size_t size;
};

// The kind of one record. Every field must be length-delimited and one the
// message declares: Example/SequenceExample fields 1 and 2 at most once each,
// map entries {1: name, 2: value} with a name present, Feature fields 1-3
// (bytes_list, float_list, int64_list; their contents are not looked at) and
// FeatureList field 1 (Feature). A name must be printable text: a name with a
// control byte makes the record kOther; a name with bytes >= 0x80 (UTF-8
// validity and printability need the Unicode tables) is appended to
// `unicode_names` for the caller, and the kind holds only if it passes.
// With top_level_only, only the top-level fields are checked.
RecordKind classify_record(const uint8_t* data, size_t size, bool top_level_only,
                           std::vector<NameSpan>* unicode_names);

// One field key of a message: its number and wire type.
struct WireField {
  uint32_t number;
  uint32_t wire_type;
};

// The top-level fields of a protocol-buffer message in wire order, for
// describing a payload that is not an Example. Returns false at the first
// malformed key or value (with the fields before it in `out`).
bool top_level_fields(const uint8_t* data, size_t size, std::vector<WireField>* out);

}  // namespace example
}  // namespace tfrx
