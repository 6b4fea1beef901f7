#include "parser_object.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "buffer.h"
#include "output_buffers.h"
#include "split_choice.h"
#include "workers.h"

namespace tfrx {
namespace py {

namespace {

using tfrx::parse::Kind;
using tfrx::parse::Span;
using tfrx::parse::VarColumn;

// Bytes copied without the GIL, split over threads beyond this many per thread (where that pays off).
constexpr size_t kFillBytesPerThread = size_t{4} << 20;

// Concatenates the per-chunk `values` of one numeric column into one owned array.
template <typename T>
nb::object merge_numbers(std::vector<std::vector<VarColumn>>& chunks, size_t col,
                         tfrx::parse::PodBuffer<T> VarColumn::*values) {
  size_t total = 0;
  for (const auto& ch : chunks) total += (ch[col].*values).size();
  // One chunk: its buffer becomes the output as it is.
  if (chunks.size() == 1 && total > 0) return released_array(&(chunks[0][col].*values));
  auto buffer = aligned_buffer<T>(total);
  size_t at = 0;
  for (const auto& ch : chunks) {
    const auto& v = ch[col].*values;
    if (!v.empty()) std::memcpy(buffer.get() + at, v.data(), sizeof(T) * v.size());
    at += v.size();
  }
  return nb::cast(owned_array<T>(std::move(buffer), {total}));
}

// Row splits [0, c0, c0+c1, ...] from counts gathered chunk by chunk.
nb::object merge_splits(const std::vector<std::vector<VarColumn>>& chunks, size_t col, bool steps) {
  size_t total = 0;
  for (const auto& ch : chunks) total += (steps ? ch[col].step_counts : ch[col].counts).size();
  auto buffer = aligned_buffer<int64_t>(total + 1);
  int64_t* out = buffer.get();
  out[0] = 0;
  size_t at = 0;
  for (const auto& ch : chunks) {
    for (int64_t c : (steps ? ch[col].step_counts : ch[col].counts)) {
      out[at + 1] = out[at] + c;
      ++at;
    }
  }
  return nb::cast(owned_array<int64_t>(std::move(buffer), {total + 1}));
}

// Performs the filler's copies, on up to `threads` threads when there are
// many bytes and splitting them has paid off on this machine (split_choice.h).
void fill_bytes(BytesFiller* filler, int threads) {
  if (filler->empty()) return;
  nb::gil_scoped_release release;
  const size_t bytes = filler->bytes();
  const int wanted = std::max(1, std::min<int>(threads, static_cast<int>(bytes / kFillBytesPerThread)));
  if (wanted == 1) {
    filler->fill(1);
    return;
  }
  SplitChoice& choice = copy_split();
  const int k = choice.threads(wanted);
  const auto start = std::chrono::steady_clock::now();
  filler->fill(k);
  choice.record(k, bytes, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace

ColumnSpec::ColumnSpec(std::string key, Kind kind, bool dense, int64_t count, nb::handle default_value,
                       bool skip_empty_)
    : skip_empty(skip_empty_) {
  if (kind != tfrx::parse::kInt64 && kind != tfrx::parse::kFloat && kind != tfrx::parse::kBytes)
    throw nb::value_error("ColumnSpec: kind must be INT64, FLOAT or BYTES");
  if (count < 0 || (!dense && count < 1)) throw nb::value_error("ColumnSpec: count must be >= 1 (>= 0 if dense)");
  if (dense && skip_empty) throw nb::value_error("ColumnSpec: dense columns always skip empty Features");
  if (!dense && !default_value.is_none()) throw nb::value_error("ColumnSpec: only dense columns take a default");
  spec.key = std::move(key);
  spec.kind = kind;
  spec.dense = dense;
  spec.count = count;
  spec.has_default = skip_empty;
  if (default_value.is_none()) return;
  spec.has_default = true;
  size_t got;
  if (kind == tfrx::parse::kFloat && PyBytes_Check(default_value.ptr())) {
    char* p;
    Py_ssize_t len;
    if (PyBytes_AsStringAndSize(default_value.ptr(), &p, &len) != 0) throw nb::python_error();
    if (len % sizeof(float)) throw nb::value_error("ColumnSpec: a float default in bytes holds whole float32 values");
    spec.default_float.resize(static_cast<size_t>(len) / sizeof(float));
    if (len) std::memcpy(spec.default_float.data(), p, static_cast<size_t>(len));
    got = spec.default_float.size();
  } else {
    for (nb::handle v : default_value) {
      if (kind == tfrx::parse::kInt64) {
        spec.default_int64.push_back(nb::cast<int64_t>(v));
      } else if (kind == tfrx::parse::kFloat) {
        spec.default_float.push_back(nb::cast<float>(v));
      } else {
        char* p;
        Py_ssize_t len;
        if (PyBytes_AsStringAndSize(v.ptr(), &p, &len) != 0) throw nb::python_error();
        default_bytes.emplace_back(p, static_cast<size_t>(len));
      }
    }
    got = kind == tfrx::parse::kInt64 ? spec.default_int64.size()
          : kind == tfrx::parse::kFloat ? spec.default_float.size() : default_bytes.size();
  }
  if (static_cast<int64_t>(got) != count) throw nb::value_error("default value size does not match the feature's shape");
}

ParserObject::ParserObject(const std::vector<const ColumnSpec*>& columns,
                           std::vector<tfrx::parse::SequenceColumnSpec> sequence_columns, bool sequence) {
  std::vector<tfrx::parse::ColumnSpec> cols;
  for (const ColumnSpec* c : columns) {
    if (c == nullptr) throw nb::type_error("ParserCore: a column is None");
    cols.push_back(c->spec);
    default_bytes_.push_back(c->default_bytes);
  }
  for (const auto& c : sequence_columns) {
    if (c.kind != tfrx::parse::kInt64 && c.kind != tfrx::parse::kFloat && c.kind != tfrx::parse::kBytes)
      throw nb::value_error("SequenceColumnSpec: kind must be INT64, FLOAT or BYTES");
    if (c.step_count < 0) throw nb::value_error("SequenceColumnSpec: step_count must be >= 0");
  }
  skip_.assign(cols.size() + sequence_columns.size(), 0);
  hints_.assign(cols.size() + sequence_columns.size(), SizeHint{});
  sequence_ = sequence;
  parser_ = std::make_unique<tfrx::parse::Parser>(std::move(cols), std::move(sequence_columns), sequence);
}

ParseResult ParserObject::parse_buffer(nb::handle data, nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig> starts,
                                       nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig> lengths, int threads,
                                       bool views) {
  tfrx::ByteView view(data);
  size_t n = starts.shape(0);
  if (lengths.shape(0) != n) throw nb::value_error("starts and lengths differ in length");
  std::vector<Span> records(n);
  const int64_t* s = starts.data();
  const int64_t* l = lengths.data();
  for (size_t i = 0; i < n; ++i) {
    if (s[i] < 0 || l[i] < 0 || static_cast<uint64_t>(s[i]) > view.size() ||
        static_cast<uint64_t>(l[i]) > view.size() - static_cast<uint64_t>(s[i]))
      throw nb::value_error("a record lies outside the data buffer");
    records[i] = Span{view.data() + s[i], static_cast<size_t>(l[i])};
  }
  return run(records, threads, views, Input{view.data(), view.size(), data});
}

ParseResult ParserObject::parse_list(nb::handle seq, int threads, bool views) {
  PyObject* fast = PySequence_Fast(seq.ptr(), "records must be a sequence of bytes");
  if (!fast) throw nb::python_error();
  nb::object keep = nb::steal(fast);
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  PyObject** items = PySequence_Fast_ITEMS(fast);
  std::vector<Span> records(static_cast<size_t>(n));
  std::vector<std::unique_ptr<tfrx::ByteView>> held;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* o = items[i];
    if (PyBytes_Check(o)) {
      records[i] = Span{reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(o)), static_cast<size_t>(PyBytes_GET_SIZE(o))};
    } else {
      held.push_back(std::make_unique<tfrx::ByteView>(nb::handle(o)));
      records[i] = Span{held.back()->data(), held.back()->size()};
    }
  }
  return run(records, threads, views, Input{});
}

ParseResult ParserObject::parse_records(const tfrx::RecordSet& set, int threads, bool views) {
  std::vector<Span> records;
  records.reserve(set.records().size());
  for (const tfrx::StoredRecord& r : set.records()) records.push_back(Span{r.data, r.size});
  return run(records, threads, views, Input{});
}

ParseResult ParserObject::parse_spans(nb::handle buffers, nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig> which,
                                      nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig> starts,
                                      nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig> lengths, int threads,
                                      bool views) {
  const size_t n = starts.shape(0);
  if (which.shape(0) != n || lengths.shape(0) != n)
    throw nb::value_error("parse_spans: which, starts and lengths must have equal lengths");
  const tfrx::ByteViews held(buffers);
  std::vector<Span> records(n);
  const int64_t* w = which.data();
  const int64_t* s = starts.data();
  const int64_t* l = lengths.data();
  for (size_t i = 0; i < n; ++i) records[i] = Span{held.span(w[i], s[i], l[i], "parse_spans"), static_cast<size_t>(l[i])};
  return run(records, threads, views, Input{});
}

template <typename SpanAt>
nb::object ParserObject::bytes_column(size_t n, SpanAt span, const std::vector<std::string>* defaults,
                                      ObjectArena* arena, uint32_t* skip, BytesFiller* filler, bool views,
                                      const Input& input) {
  if (!views) {
    return cache_.column(arena, n, skip, [&](size_t i, ShortBytesCache* cache) -> PyObject* {
      const Span& sp = span(i);
      if (sp.data == nullptr && defaults != nullptr) {
        const std::string& d = (*defaults)[sp.size];
        return PyBytes_FromStringAndSize(d.data(), static_cast<Py_ssize_t>(d.size()));
      }
      return span_bytes(sp, cache, filler);
    });
  }
  // Spans are for this process to read (a consumer packs the values where it needs them): not in an arena.
  OutputArena::Pause not_in_arena;
  auto starts = aligned_buffer<int64_t>(n);
  auto lengths = aligned_buffer<int64_t>(n);
  // Zero copy when every value lies in the input buffer (defaults do not).
  bool inside = input.base != nullptr;
  for (size_t i = 0; i < n && inside; ++i) {
    const Span& sp = span(i);
    inside = sp.data != nullptr && sp.data >= input.base && sp.size <= input.size &&
             static_cast<size_t>(sp.data - input.base) <= input.size - sp.size;
  }
  nb::object data;
  if (inside) {
    for (size_t i = 0; i < n; ++i) {
      const Span& sp = span(i);
      starts[i] = static_cast<int64_t>(sp.data - input.base);
      lengths[i] = static_cast<int64_t>(sp.size);
    }
    data = nb::borrow(input.owner);
  } else {
    auto value_of = [&](size_t i) -> Span {
      const Span& sp = span(i);
      if (sp.data != nullptr || defaults == nullptr) return sp;
      const std::string& d = (*defaults)[sp.size];
      return Span{reinterpret_cast<const uint8_t*>(d.data()), d.size()};
    };
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) {
      starts[i] = static_cast<int64_t>(total);
      lengths[i] = static_cast<int64_t>(value_of(i).size);
      total += value_of(i).size;
    }
    auto packed = aligned_buffer<uint8_t>(total);
    {
      nb::gil_scoped_release release;
      uint8_t* out = packed.get();
      for (size_t i = 0; i < n; ++i) {
        const Span v = value_of(i);
        if (v.size) std::memcpy(out + starts[i], v.data, v.size);
      }
    }
    data = nb::cast(owned_array<uint8_t>(std::move(packed), {total}));
  }
  ByteSpans out{std::move(data), nb::cast(owned_array<int64_t>(std::move(starts), {n})),
                nb::cast(owned_array<int64_t>(std::move(lengths), {n}))};
  return nb::cast(std::move(out));
}

ParseResult ParserObject::run(const std::vector<Span>& records, int threads, bool views, const Input& input) {
  using namespace tfrx::parse;
  const auto& cols = parser_->columns();
  const auto& seq_cols = parser_->sequence_columns();
  const int64_t n = static_cast<int64_t>(records.size());
  int64_t total_bytes = 0;
  for (const Span& r : records) total_bytes += static_cast<int64_t>(r.size);

  // Dense outputs are allocated up front; every chunk writes its own rows.
  std::vector<DenseTarget> dense(cols.size());
  std::vector<OutputBuffer<int64_t>> dense_i64(cols.size());
  std::vector<OutputBuffer<float>> dense_f32(cols.size());
  std::vector<std::unique_ptr<Span[]>> dense_bytes(cols.size());
  for (size_t c = 0; c < cols.size(); ++c) {
    if (!cols[c].dense) continue;
    size_t size = std::max<size_t>(static_cast<size_t>(n * cols[c].count), 1);
    if (cols[c].kind == kInt64) {
      dense_i64[c] = aligned_buffer<int64_t>(size);
      dense[c].values = dense_i64[c].get();
    } else if (cols[c].kind == kFloat) {
      dense_f32[c] = aligned_buffer<float>(size);
      dense[c].values = dense_f32[c].get();
    } else {
      dense_bytes[c].reset(new Span[size]);
      dense[c].values = dense_bytes[c].get();
    }
  }

  int k = plan_chunks(n, total_bytes, threads);
  std::vector<std::vector<VarColumn>> var(k), seq_var(k);
  for (int i = 0; i < k; ++i) {
    var[i] = std::vector<VarColumn>(cols.size());
    seq_var[i] = std::vector<VarColumn>(seq_cols.size());
  }
  std::vector<Error> errors(k);
  {
    nb::gil_scoped_release release;
    // Variable-length columns start with room for what the previous call
    // gathered per byte of input, so that they rarely grow (and copy) on
    // the way; the buffers become the outputs and are not reused.
    if (previous_bytes_ > 0) {
      for (int i = 0; i < k; ++i) {
        const int64_t begin = n * i / k, end = n * (i + 1) / k;
        int64_t bytes = 0;
        for (int64_t r = begin; r < end; ++r) bytes += static_cast<int64_t>(records[r].size);
        const double share = static_cast<double>(bytes) / static_cast<double>(previous_bytes_);
        auto room = [share](size_t previous) { return static_cast<size_t>(share * 1.125 * previous) + 64; };
        for (size_t c = 0; c < cols.size(); ++c)
          if (!cols[c].dense) reserve_like(&var[i][c], cols[c].kind, hints_[c], room);
        for (size_t c = 0; c < seq_cols.size(); ++c)
          reserve_like(&seq_var[i][c], seq_cols[c].kind, hints_[cols.size() + c], room);
      }
    }
    auto work = [&](int i) {
      int64_t begin = n * i / k, end = n * (i + 1) / k;
      parser_->parse_range(records.data(), begin, end, dense, &var[i], &seq_var[i], &errors[i]);
    };
    tfrx::run_chunks(k, work);
  }
  ParseResult result;
  for (const Error& e : errors) {
    if (e.code != kOk) {
      result.error = e;
      return result;
    }
  }

  previous_bytes_ = total_bytes;
  for (size_t c = 0; c < cols.size() + seq_cols.size(); ++c) {
    SizeHint h;
    for (int i = 0; i < k; ++i) {
      const VarColumn& v = c < cols.size() ? var[i][c] : seq_var[i][c - cols.size()];
      h.values += v.size();
      h.counts += v.counts.size();
      h.steps += v.step_counts.size();
    }
    hints_[c] = h;
  }

  size_t object_total = 0;
  if (!views) {
    for (size_t c = 0; c < cols.size(); ++c) {
      if (cols[c].kind != kBytes) continue;
      if (cols[c].dense) object_total += static_cast<size_t>(n * cols[c].count);
      else for (const auto& ch : var) object_total += ch[c].bytes_values.size();
    }
    for (size_t c = 0; c < seq_cols.size(); ++c) {
      if (seq_cols[c].kind != kBytes) continue;
      for (const auto& ch : seq_var) object_total += ch[c].bytes_values.size();
    }
  }
  ObjectArena arena(object_total);
  BytesFiller filler;

  // The values of one variable-length column, all chunks together.
  auto var_values = [&](Kind kind, std::vector<std::vector<VarColumn>>& chunks, size_t col,
                        uint32_t* skip) -> nb::object {
    if (kind == kInt64) return merge_numbers(chunks, col, &VarColumn::int64_values);
    if (kind == kFloat) return merge_numbers(chunks, col, &VarColumn::float_values);
    std::vector<const Span*> flat;
    for (const auto& ch : chunks)
      for (const Span& sp : ch[col].bytes_values) flat.push_back(&sp);
    return bytes_column(flat.size(), [&](size_t i) -> const Span& { return *flat[i]; }, nullptr, &arena, skip,
                        &filler, views, input);
  };

  for (size_t c = 0; c < cols.size(); ++c) {
    const tfrx::parse::ColumnSpec& col = cols[c];
    if (col.dense) {
      size_t rows = static_cast<size_t>(n), width = static_cast<size_t>(col.count);
      if (col.kind == kInt64) {
        result.columns.append(owned_array<int64_t>(std::move(dense_i64[c]), {rows, width}));
      } else if (col.kind == kFloat) {
        result.columns.append(owned_array<float>(std::move(dense_f32[c]), {rows, width}));
      } else {
        const Span* spans = dense_bytes[c].get();
        result.columns.append(bytes_column(rows * width, [spans](size_t i) -> const Span& { return spans[i]; },
                                           &default_bytes_[c], &arena, &skip_[c], &filler, views, input));
      }
    } else {
      result.columns.append(
          nb::cast(RaggedColumn{var_values(col.kind, var, c, &skip_[c]), merge_splits(var, c, false)}));
    }
  }
  for (size_t c = 0; c < seq_cols.size(); ++c) {
    result.sequence_columns.append(
        nb::cast(SequenceColumn{var_values(seq_cols[c].kind, seq_var, c, &skip_[cols.size() + c]),
                                merge_splits(seq_var, c, false), merge_splits(seq_var, c, true)}));
  }
  fill_bytes(&filler, threads);
  return result;
}

template <typename Room>
void ParserObject::reserve_like(VarColumn* v, Kind kind, const SizeHint& h, Room room) {
  if (h.values > 0) {
    // Packed int64 runs reserve one value per byte of the run while they
    // decode: leave room for the longest such run beyond the values.
    if (kind == tfrx::parse::kInt64) v->int64_values.reserve(room(h.values) + 4096);
    else if (kind == tfrx::parse::kFloat) v->float_values.reserve(room(h.values));
    else v->bytes_values.reserve(room(h.values));
  }
  if (h.counts > 0) v->counts.reserve(room(h.counts));
  if (h.steps > 0) v->step_counts.reserve(room(h.steps));
}

namespace {
// Whether `n` splits start at >= 0 and never decrease.
bool valid_splits(const int64_t* s, size_t n) {
  if (n == 0) return true;
  if (s[0] < 0) return false;
  for (size_t i = 1; i < n; ++i)
    if (s[i] < s[i - 1]) return false;
  return true;
}
}  // namespace

SparseIndices sparse_indices(nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig> outer,
                             std::optional<nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig>> inner,
                             bool with_indices) {
  size_t rows = outer.shape(0) == 0 ? 0 : outer.shape(0) - 1;
  const int64_t* o = outer.data();
  const int64_t* in = inner ? inner->data() : nullptr;
  if (!valid_splits(o, outer.shape(0))) throw nb::value_error("row splits must be non-negative and non-decreasing");
  int64_t nnz = rows ? o[rows] - o[0] : 0;
  if (in != nullptr) {
    if (rows && static_cast<uint64_t>(o[rows]) >= inner->shape(0))
      throw nb::value_error("the outer row splits reach past the inner ones");
    if (rows && !valid_splits(in + o[0], static_cast<size_t>(o[rows] - o[0]) + 1))
      throw nb::value_error("row splits must be non-negative and non-decreasing");
    nnz = rows ? in[o[rows]] - in[o[0]] : 0;
  }
  size_t width = in ? 3 : 2;
  auto shape = aligned_buffer<int64_t>(width);
  OutputBuffer<int64_t> buffer;
  if (with_indices) buffer = aligned_buffer<int64_t>((static_cast<size_t>(nnz) + tfrx::parse::kIndexChunk - 1) * width);
  {
    nb::gil_scoped_release release;
    const auto r = static_cast<int64_t>(rows);
    if (with_indices) tfrx::parse::sparse_indices(o, r, in, buffer.get());
    shape[0] = r;
    shape[1] = tfrx::parse::max_row_length(o, r);
    // The inner level spans the steps of every row: o[0] .. o[rows].
    if (in != nullptr) shape[2] = rows ? tfrx::parse::max_row_length(in + o[0], o[rows] - o[0]) : 0;
  }
  nb::object indices = nb::none();
  if (with_indices) indices = nb::cast(owned_array<int64_t>(std::move(buffer), {static_cast<size_t>(nnz), width}));
  return SparseIndices{indices, nb::cast(owned_array<int64_t>(std::move(shape), {width}))};
}

}  // namespace py
}  // namespace tfrx
