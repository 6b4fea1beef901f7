// Which features a batch of serialized Examples / SequenceExamples holds,
// record by record, without copying any value: the key, the kind and the
// number of values (for a feature list: the number of steps) of each map
// entry, with the decoder's semantics (example_decode.h: a later entry with
// the same key replaces an earlier one). The statistics use it to find every
// feature of every record before the batch parser reads the values.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tfrx {
namespace example {

// One group of map entries (Example features / SequenceExample context, or
// feature lists), as sparse per-(record, key) entries in record order.
struct PresenceTable {
  std::vector<std::string> keys;   // distinct keys (raw bytes) in first-seen order
  std::vector<uint8_t> kind_masks;  // per key: bit (1 << kind) for each kind its entries hold (kNone left out)
  std::vector<int64_t> records;     // per entry: the record
  std::vector<int64_t> key_ids;     // per entry: index into keys
  std::vector<uint8_t> states;      // per entry: 1 + Kind (1: no kind; for a feature list: of its first step with one)
  std::vector<int64_t> counts;      // per entry: values (features) or steps (feature lists)
};

struct PresenceError {
  size_t record = 0;
  size_t offset = 0;
  const char* what = nullptr;
};

// Reads records data[starts[i] .. starts[i] + lengths[i]) (the caller has checked the spans).
// Returns false at the first record the decoder refuses, with `err` naming it.
bool feature_presence(const uint8_t* data, const int64_t* starts, const int64_t* lengths, size_t count,
                      bool sequence, PresenceTable* features, PresenceTable* feature_lists, PresenceError* err);

}  // namespace example
}  // namespace tfrx
