#include "example_classify.h"

#include "wire.h"

namespace tfrx {
namespace example {

namespace {

// Calls visit(field, value, value_size) for each field of the message in
// [data, data + size); false at the first field that is not length-delimited,
// at malformed wire bytes, or when visit returns false.
template <typename Visit>
bool each_delimited(const uint8_t* data, size_t size, Visit&& visit) {
  wire::Reader r(data, size);
  while (!r.done()) {
    uint32_t field, type;
    if (!r.key(&field, &type) || type != wire::kLengthDelimited) return false;
    const uint8_t* value;
    size_t n;
    if (!r.bytes(&value, &n) || !visit(field, value, n)) return false;
  }
  return true;
}

// Feature: oneof bytes_list = 1, float_list = 2, int64_list = 3.
bool feature_ok(const uint8_t* data, size_t size) {
  return each_delimited(data, size, [](uint32_t field, const uint8_t*, size_t) { return field >= 1 && field <= 3; });
}

// FeatureList: repeated Feature feature = 1.
bool feature_list_ok(const uint8_t* data, size_t size) {
  return each_delimited(data, size, [](uint32_t field, const uint8_t* value, size_t n) {
    return field == 1 && feature_ok(value, n);
  });
}

class Classifier {
 public:
  Classifier(const uint8_t* record, std::vector<NameSpan>* unicode_names)
      : record_(record), unicode_names_(unicode_names) {}

  // Features / FeatureLists: map<string, V> = 1, each entry {1: key, 2: value}.
  template <typename ValueOk>
  bool map_ok(const uint8_t* data, size_t size, ValueOk value_ok) {
    return each_delimited(data, size, [&](uint32_t field, const uint8_t* entry, size_t n) {
      if (field != 1) return false;
      bool has_key = false;
      bool ok = each_delimited(entry, n, [&](uint32_t f, const uint8_t* v, size_t vn) {
        if (f == 1) {
          has_key = true;
          return name_ok(v, vn);
        }
        return f == 2 && value_ok(v, vn);
      });
      return ok && has_key;
    });
  }

 private:
  // Printable ASCII passes, an ASCII control character fails (in UTF-8 a
  // byte below 0x80 is always that character); anything else is left to the
  // caller's Unicode check.
  bool name_ok(const uint8_t* name, size_t size) {
    bool ascii = true;
    for (size_t i = 0; i < size; ++i) {
      const uint8_t b = name[i];
      if (b < 0x20 || b == 0x7f) return false;
      ascii &= b < 0x80;
    }
    if (!ascii) unicode_names_->push_back(NameSpan{static_cast<size_t>(name - record_), size});
    return true;
  }

  const uint8_t* record_;
  std::vector<NameSpan>* unicode_names_;
};

}  // namespace

RecordKind classify_record(const uint8_t* data, size_t size, bool top_level_only,
                           std::vector<NameSpan>* unicode_names) {
  if (size == 0) return RecordKind::kEmpty;
  const size_t names_before = unicode_names->size();
  Classifier check(data, unicode_names);
  unsigned seen = 0;  // bit f for field f
  // Example: Features features = 1. SequenceExample: Features context = 1,
  // FeatureLists feature_lists = 2. A repeated top-level field is how other
  // messages (ExampleListWithContext) look, not an Example.
  const bool ok = each_delimited(data, size, [&](uint32_t field, const uint8_t* value, size_t n) {
    if ((field != 1 && field != 2) || (seen & (1u << field))) return false;
    seen |= 1u << field;
    if (top_level_only) return true;
    return field == 1 ? check.map_ok(value, n, feature_ok) : check.map_ok(value, n, feature_list_ok);
  });
  if (!ok) {
    unicode_names->resize(names_before);
    return RecordKind::kOther;
  }
  return (seen & 4u) ? RecordKind::kSequenceExample : RecordKind::kExample;
}

bool top_level_fields(const uint8_t* data, size_t size, std::vector<WireField>* out) {
  wire::Reader r(data, size);
  while (!r.done()) {
    WireField f;
    if (!r.key(&f.number, &f.wire_type) || !r.skip(f.wire_type)) return false;
    out->push_back(f);
  }
  return true;
}

}  // namespace example
}  // namespace tfrx
