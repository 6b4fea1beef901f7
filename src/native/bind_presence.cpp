// feature_presence: which features each record of a batch holds, without the values (feature_presence.h).
#include <nanobind/ndarray.h>

#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "buffer.h"
#include "feature_presence.h"
#include "numpy_out.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tfrx {
namespace py {

namespace {

namespace ex = tfrx::example;

[[noreturn]] void raise_decode_error(const std::string& msg, nb::object offset, size_t record) {
  nb::object cls = nb::module_::import_("tfrx.errors").attr("DecodeError");
  nb::object exc = cls(nb::str(msg.c_str()), "offset"_a = offset, "record_index"_a = record);
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw nb::python_error();
}

// One group of entries for Python (see ex::PresenceTable).
struct PresenceEntries {
  nb::list keys;
  UInt8Array kind_masks, states;
  Int64Array records, key_ids, counts;
};

PresenceEntries to_python(ex::PresenceTable&& t, const char* message_type) {
  PresenceEntries out;
  for (size_t k = 0; k < t.keys.size(); ++k) {
    const std::string& key = t.keys[k];
    PyObject* s = PyUnicode_DecodeUTF8(key.data(), static_cast<Py_ssize_t>(key.size()), nullptr);
    if (!s) {
      PyErr_Clear();
      size_t record = 0;
      for (size_t i = 0; i < t.key_ids.size(); ++i) {
        if (static_cast<size_t>(t.key_ids[i]) == k) {
          record = static_cast<size_t>(t.records[i]);
          break;
        }
      }
      raise_decode_error(std::string("invalid ") + message_type + " in record " + std::to_string(record) +
                             ": feature name is not valid UTF-8",
                         nb::none(), record);
    }
    out.keys.append(nb::steal(s));
  }
  out.kind_masks = owned_uint8(std::move(t.kind_masks));
  out.states = owned_uint8(std::move(t.states));
  out.records = owned_int64(std::move(t.records));
  out.key_ids = owned_int64(std::move(t.key_ids));
  out.counts = owned_int64(std::move(t.counts));
  return out;
}

// feature_presence's answer.
struct FeaturePresence {
  PresenceEntries features, feature_lists;
};

FeaturePresence feature_presence(nb::handle data, Int64In starts, Int64In lengths, bool sequence) {
  init_numpy();
  ByteView view(data);
  check_spans(view.size(), starts, lengths);
  const size_t count = starts.shape(0);
  ex::PresenceTable features, lists;
  ex::PresenceError err;
  bool ok;
  {
    nb::gil_scoped_release release;
    ok = ex::feature_presence(view.data(), starts.data(), lengths.data(), count, sequence, &features, &lists, &err);
  }
  const char* message_type = sequence ? "SequenceExample" : "Example";
  if (!ok) {
    raise_decode_error(std::string("invalid ") + message_type + " in record " + std::to_string(err.record) +
                           " at byte " + std::to_string(err.offset) + ": " + err.what,
                       nb::int_(err.offset), err.record);
  }
  return FeaturePresence{to_python(std::move(features), message_type), to_python(std::move(lists), message_type)};
}

}  // namespace

void bind_presence(nb::module_& m) {
  nb::class_<PresenceEntries>(m, "PresenceEntries",
                              "One group of map entries of a batch (features, or feature lists), one entry per "
                              "record and key in record order; a later entry with the same key in a record "
                              "replaces an earlier one, as the decoder does.")
      .def_ro("keys", &PresenceEntries::keys, "the distinct keys (str) in first-seen order")
      .def_prop_ro("kind_masks", [](const PresenceEntries& e) { return e.kind_masks; }, nb::rv_policy::automatic,
                   "uint8 per key: bit 1 << kind for each kind (1 bytes, 2 float, 3 int64) its entries hold")
      .def_prop_ro("records", [](const PresenceEntries& e) { return e.records; }, nb::rv_policy::automatic,
                   "int64 per entry: the record")
      .def_prop_ro("key_ids", [](const PresenceEntries& e) { return e.key_ids; }, nb::rv_policy::automatic,
                   "int64 per entry: the index of its key in `keys`")
      .def_prop_ro("states", [](const PresenceEntries& e) { return e.states; }, nb::rv_policy::automatic,
                   "uint8 per entry: 1 + kind; 1 for a Feature without a kind (a feature list: no step has one); "
                   "a feature list's kind is that of its first step with one")
      .def_prop_ro("counts", [](const PresenceEntries& e) { return e.counts; }, nb::rv_policy::automatic,
                   "int64 per entry: the number of values (a feature list: of steps)");
  nb::class_<FeaturePresence>(m, "FeaturePresence", "feature_presence's answer.")
      .def_ro("features", &FeaturePresence::features, "the features (of a SequenceExample: its context)")
      .def_ro("feature_lists", &FeaturePresence::feature_lists, "the feature lists (empty for Examples)");
  m.def("feature_presence", &feature_presence, "data"_a, "starts"_a, "lengths"_a, nb::kw_only(), "sequence"_a,
        "Which features each record data[starts[i]:starts[i]+lengths[i]] holds, their kinds and value counts,\n"
        "without decoding the values (GIL released); DecodeError (with record_index) for a record the\n"
        "decoder refuses.");
}

}  // namespace py
}  // namespace tfrx
