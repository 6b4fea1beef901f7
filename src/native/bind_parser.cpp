#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "output_buffers.h"
#include "parser_object.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tfrx {
namespace py {

namespace {

void bind_file_parse(nb::module_& m) {
  nb::class_<FileParse>(m, "FileParse", "What ParserCore.parse_file read and parsed.")
      .def_ro("result", &FileParse::result, "the columns (empty unless status is 0)")
      .def_ro("records", &FileParse::records, "records parsed (0 unless status is 0)")
      .def_ro("next_offset", &FileParse::next_offset, "the file offset of the next record's header")
      .def_ro("status", &FileParse::status,
              "0: read and parsed; 1: damaged or cut short framing; 2: a record does not parse (result.error);\n"
              "3: a read failed (io_error). Other than 0, the columns are empty: read the range another way.")
      .def_ro("io_error", &FileParse::io_error, "errno of the failed read");
}

}  // namespace

void bind_parser(nb::module_& m) {
  using tfrx::parse::Error;
  using tfrx::parse::ErrorCode;
  using tfrx::parse::Kind;
  using tfrx::parse::SequenceColumnSpec;

  nb::enum_<Kind>(m, "FeatureKind", nb::is_arithmetic(),
                  "A tf.train.Feature's kind: the field number of its oneof member.")
      .value("NONE", tfrx::parse::kNone, "an empty Feature")
      .value("BYTES", tfrx::parse::kBytes, "bytes_list")
      .value("FLOAT", tfrx::parse::kFloat, "float_list")
      .value("INT64", tfrx::parse::kInt64, "int64_list");

  nb::enum_<ErrorCode>(m, "ParseErrorCode", nb::is_arithmetic(), "Why a record failed to parse (parse.h).")
      .value("OK", tfrx::parse::kOk)
      .value("MALFORMED", tfrx::parse::kMalformed, "not a valid protocol buffer; `offset` says where")
      .value("MISSING", tfrx::parse::kMissing, "a required feature (or feature list) is absent")
      .value("KIND_MISMATCH", tfrx::parse::kKindMismatch, "expected = wanted kind, actual = found kind")
      .value("COUNT_MISMATCH", tfrx::parse::kCountMismatch, "expected = values wanted, actual = values found")
      .value("NOT_MULTIPLE", tfrx::parse::kNotMultiple, "expected = row size, actual = values found");

  nb::class_<Error>(m, "ParseFailure", "The first bad record of a parse call and what is wrong with it.")
      .def_prop_ro("code", [](const Error& e) { return static_cast<ErrorCode>(e.code); })
      .def_ro("record", &Error::record, "index of the record in the call's batch")
      .def_ro("column", &Error::column, "index of the column (or sequence column) involved, or -1")
      .def_ro("in_sequence", &Error::in_sequence, "whether `column` indexes the sequence columns")
      .def_ro("step", &Error::step, "the feature list's step, or -1")
      .def_ro("expected", &Error::expected)
      .def_ro("actual", &Error::actual)
      .def_ro("offset", &Error::offset, "MALFORMED: the byte offset in the record");

  nb::class_<ColumnSpec>(m, "ColumnSpec", "One feature of an Example (or a SequenceExample's context) to parse.")
      .def(nb::init<std::string, Kind, bool, int64_t, nb::handle, bool>(), "key"_a, "kind"_a, nb::kw_only(),
           "dense"_a = false, "count"_a = 1, "default"_a = nb::none(), "skip_empty"_a = false,
           "dense: `count` values per record, written into a [batch, count] array (`default`, `count`\n"
           "values or float32 bytes, fills a missing feature; without one the feature is required).\n"
           "Otherwise values + row splits, each record's count a multiple of `count`; `skip_empty` makes\n"
           "an empty Feature neither override an earlier occurrence of the key nor count as present.")
      .def_prop_ro("key", [](const ColumnSpec& c) { return c.spec.key; })
      .def_prop_ro("kind", [](const ColumnSpec& c) { return c.spec.kind; })
      .def_prop_ro("dense", [](const ColumnSpec& c) { return c.spec.dense; })
      .def_prop_ro("count", [](const ColumnSpec& c) { return c.spec.count; })
      .def_prop_ro("has_default", [](const ColumnSpec& c) { return c.spec.has_default && !c.skip_empty; })
      .def_ro("skip_empty", &ColumnSpec::skip_empty);

  nb::class_<SequenceColumnSpec>(m, "SequenceColumnSpec", "One feature list of a SequenceExample to parse.")
      .def(
          "__init__",
          [](SequenceColumnSpec* self, std::string key, Kind kind, int64_t step_count, bool required) {
            new (self) SequenceColumnSpec{std::move(key), kind, step_count, required};
          },
          "key"_a, "kind"_a, nb::kw_only(), "step_count"_a = 0, "required"_a = false,
          "step_count > 0: every step holds exactly that many values (0: any); required: the list must\n"
          "be present (a FixedLenSequenceFeature without allow_missing).")
      .def_ro("key", &SequenceColumnSpec::key)
      .def_ro("kind", &SequenceColumnSpec::kind)
      .def_ro("step_count", &SequenceColumnSpec::step_count)
      .def_ro("required", &SequenceColumnSpec::required);

  nb::class_<ByteSpans>(m, "ByteSpans",
                        "Bytes values as spans of one buffer: value i is data[starts[i]:starts[i]+lengths[i]].")
      .def_ro("data", &ByteSpans::data, "the buffer: the parsed batch's own, or one the values were packed into")
      .def_ro("starts", &ByteSpans::starts, "int64 offsets")
      .def_ro("lengths", &ByteSpans::lengths, "int64 lengths");

  nb::class_<ParseResult>(m, "ParseResult", "The columns of one parse call, or its first error.")
      .def_ro("columns", &ParseResult::columns,
              "per column: a [batch, count] array for dense numbers, a flat object array (or ByteSpans)\n"
              "for dense bytes, a RaggedColumn (values, row_splits) for variable-length columns")
      .def_ro("sequence_columns", &ParseResult::sequence_columns,
              "per sequence column: a SequenceColumn (values, step_splits, record_splits)")
      .def_ro("error", &ParseResult::error, "the first bad record, or None (then the columns are empty)");

  bind_file_parse(m);

  nb::class_<ParserObject>(m, "ParserCore", "Spec-driven Example/SequenceExample parser (driven by tfrx.parsing).")
      .def(nb::init<const std::vector<const ColumnSpec*>&, std::vector<SequenceColumnSpec>, bool>(), "columns"_a,
           "sequence_columns"_a, "sequence"_a)
      .def("parse_buffer", &ParserObject::parse_buffer, "data"_a, "starts"_a, "lengths"_a, "threads"_a, nb::kw_only(),
           "views"_a = false, "Parses records data[starts[i]:starts[i]+lengths[i]] (GIL released).")
      .def("parse_list", &ParserObject::parse_list, "records"_a, "threads"_a, nb::kw_only(), "views"_a = false,
           "Parses a sequence of bytes-like records (GIL released).")
      .def("parse_records", &ParserObject::parse_records, "records"_a, "threads"_a, nb::kw_only(), "views"_a = false,
           "Parses the records of a RecordSet where they are (GIL released).")
      .def("parse_spans", &ParserObject::parse_spans, "buffers"_a, "which"_a, "starts"_a, "lengths"_a, "threads"_a,
           nb::kw_only(), "views"_a = false,
           "Parses records buffers[which[i]][starts[i]:starts[i]+lengths[i]] where they lie (GIL released).")
      .def("parse_file", &ParserObject::parse_file, "fd"_a, "offset"_a, "end"_a, "max_records"_a, "piece"_a,
           "max_bytes"_a = 0,
           "Reads the uncompressed TFRecord file `fd` from the header at byte `offset` up to byte `end`, at most\n"
           "`max_records` records (max_bytes > 0: stopping once their payloads reach it), in pieces of `piece`\n"
           "bytes into one reused buffer, checks both CRCs and parses each piece while it is in cache\n"
           "(Examples; bytes values as ByteSpans of their own). GIL released.");

  nb::class_<OutputArena>(m, "OutputArena", nb::is_weak_referenceable(),
                          "A writable buffer that the parse calls on this thread take their numeric outputs from\n"
                          "while the arena is entered (`with arena:`), front to back in 64-byte aligned pieces,\n"
                          "from byte `start` on; outputs that do not fit come from the usual pool. Arrays over\n"
                          "its pieces keep the arena (and so the buffer) alive.")
      .def(nb::init<nb::handle, size_t>(), "buffer"_a, "start"_a = 0)
      .def("__enter__",
           [](nb::handle self) {
             if (active_arena() != nullptr) throw nb::value_error("an OutputArena is already active on this thread");
             OutputArena::activate(nb::inst_ptr<OutputArena>(self), self.ptr());
             return self;
           })
      .def("__exit__",
           [](OutputArena& self, nb::handle, nb::handle, nb::handle) {
             if (active_arena() == &self) OutputArena::activate(nullptr, nullptr);
           },
           "type"_a.none(), "value"_a.none(), "traceback"_a.none())
      .def_prop_ro("used", &OutputArena::used, "bytes from the start of the buffer to the end of the last piece taken")
      .def_prop_ro("size", &OutputArena::size, "the buffer's size in bytes");

  m.def("sparse_indices", &sparse_indices, "outer"_a, "inner"_a = nb::none(), "with_indices"_a = true,
        "SparseIndices (indices, dense_shape) of ragged parse results: COO indices [row, pos] (or [row, step, pos]\n"
        "with inner splits; None unless with_indices) and the int64 [rows, longest row] (or\n"
        "[rows, most steps, longest step]). ValueError for splits that are negative, decrease or\n"
        "do not fit each other.");
}

}  // namespace py
}  // namespace tfrx
