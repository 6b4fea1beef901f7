// The named result classes of results.h: read-only fields, and len(), indexing
// and iteration in the order of the tuple each replaced.
#include <nanobind/stl/string.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "bindings.h"
#include "results.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tfrx {
namespace py {

namespace {

// The sequence protocol and a repr for a result class whose fields() lists its values in order.
template <typename T>
nb::class_<T> named_result(nb::module_& m, const char* name, const char* doc,
                           std::initializer_list<const char*> names) {
  nb::class_<T> cls(m, name, doc);
  const size_t size = names.size();
  nb::list fields;
  for (const char* n : names) fields.append(nb::str(n));
  cls.def("__len__", [size](const T&) { return size; });
  cls.def("__getitem__", [](const T& r, Py_ssize_t i) {
    PyObject* item = PySequence_GetItem(r.fields().ptr(), i);
    if (!item) throw nb::python_error();
    return nb::steal(item);
  });
  cls.def("__iter__", [](const T& r) { return nb::iter(r.fields()); });
  std::vector<std::string> labels(names.begin(), names.end());
  cls.def("__repr__", [name, labels](const T& r) {
    // Name(field=value, ...), as a NamedTuple shows itself.
    nb::tuple values = r.fields();
    std::string text = std::string(name) + "(";
    for (size_t i = 0; i < labels.size(); ++i) {
      text += (i ? ", " : "") + labels[i] + "=" + nb::repr(values[i]).c_str();
    }
    return text + ")";
  });
  cls.attr("_fields") = nb::tuple(fields);  // the field names, as a NamedTuple has them
  return cls;
}

}  // namespace

void bind_results(nb::module_& m) {
  named_result<FrameProgress>(m, "FrameProgress", "How far frame_into / frame_batch_into got; unpacks as (next, used).",
                              {"next", "used"})
      .def_ro("next", &FrameProgress::next, "index of the first record not framed")
      .def_ro("used", &FrameProgress::used, "bytes written");
  named_result<RecordFraming>(m, "RecordFraming",
                              "The header and footer that frame one record; unpacks as (header, footer).",
                              {"header", "footer"})
      .def_ro("header", &RecordFraming::header, "the 12-byte header: length and its masked CRC")
      .def_ro("footer", &RecordFraming::footer, "the 4-byte footer: the data's masked CRC");
  named_result<PackedValues>(m, "PackedValues", "Values end to end and their offsets; unpacks as (values, offsets).",
                             {"values", "offsets"})
      .def_ro("values", &PackedValues::values, nb::sig("def values(self, /) -> NDArray[numpy.uint8]"),
              "uint8: value i is values[offsets[i]:offsets[i + 1]]")
      .def_ro("offsets", &PackedValues::offsets, nb::sig("def offsets(self, /) -> NDArray[numpy.int64]"),
              "int64, one more than there are values, from 0");
  named_result<DecodedSequenceExample>(m, "DecodedSequenceExample",
                                       "A decoded SequenceExample; unpacks as (context, feature_lists).",
                                       {"context", "feature_lists"})
      .def_ro("context", &DecodedSequenceExample::context, "{name: value}, as decode_example returns")
      .def_ro("feature_lists", &DecodedSequenceExample::feature_lists, "{name: [value per step]}");
  named_result<EncodedBatch>(m, "EncodedBatch", "Encoded records in one buffer; unpacks as (data, starts, lengths).",
                             {"data", "starts", "lengths"})
      .def_ro("data", &EncodedBatch::data, nb::sig("def data(self, /) -> NDArray[numpy.uint8]"),
              "uint8: the records end to end")
      .def_ro("starts", &EncodedBatch::starts, nb::sig("def starts(self, /) -> NDArray[numpy.int64]"),
              "int64 offset of each record in data")
      .def_ro("lengths", &EncodedBatch::lengths, nb::sig("def lengths(self, /) -> NDArray[numpy.int64]"),
              "int64 length of each record");
  named_result<SparseIndices>(m, "SparseIndices", "sparse_indices' answer; unpacks as (indices, dense_shape).",
                              {"indices", "dense_shape"})
      .def_ro("indices", &SparseIndices::indices, nb::sig("def indices(self, /) -> NDArray[numpy.int64] | None"),
              "int64 [nnz, 2 or 3] COO indices, or None when not asked for")
      .def_ro("dense_shape", &SparseIndices::dense_shape, nb::sig("def dense_shape(self, /) -> NDArray[numpy.int64]"),
              "int64 [rows, longest row] or [rows, most steps, longest step]");
  named_result<RaggedColumn>(m, "RaggedColumn", "A variable-length parse column; unpacks as (values, row_splits).",
                             {"values", "row_splits"})
      .def_ro("values", &RaggedColumn::values, "int64 / float32 array, or the bytes values (object array or ByteSpans)")
      .def_ro("row_splits", &RaggedColumn::row_splits, nb::sig("def row_splits(self, /) -> NDArray[numpy.int64]"),
              "int64: row i holds values[row_splits[i]:row_splits[i + 1]]");
  named_result<SequenceColumn>(m, "SequenceColumn",
                               "A feature-list parse column; unpacks as (values, step_splits, record_splits).",
                               {"values", "step_splits", "record_splits"})
      .def_ro("values", &SequenceColumn::values,
              "int64 / float32 array, or the bytes values (object array or ByteSpans)")
      .def_ro("step_splits", &SequenceColumn::step_splits, nb::sig("def step_splits(self, /) -> NDArray[numpy.int64]"),
              "int64: step j holds values[step_splits[j]:step_splits[j + 1]]")
      .def_ro("record_splits", &SequenceColumn::record_splits,
              nb::sig("def record_splits(self, /) -> NDArray[numpy.int64]"),
              "int64: record i holds steps [record_splits[i], record_splits[i + 1])");
}

}  // namespace py
}  // namespace tfrx
