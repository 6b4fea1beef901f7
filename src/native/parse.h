// Spec-driven parsing of serialized tf.train.Example / SequenceExample records
// into columns, with tf.io.parse_example's semantics.
//
// The parser knows nothing about Python. Callers describe the columns they
// want (key, kind, dense or variable length), hand over the records as byte
// spans, and get back values written into caller-provided dense buffers or
// into per-column growable buffers. Errors come back as a plain struct.
#pragma once
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#if defined(__GNUC__) || defined(__clang__)
#define TFRX_PARSE_NOINLINE __attribute__((noinline))
#define TFRX_PARSE_INLINE inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define TFRX_PARSE_NOINLINE __declspec(noinline)
#define TFRX_PARSE_INLINE __forceinline
#else
#define TFRX_PARSE_NOINLINE
#define TFRX_PARSE_INLINE inline
#endif

namespace tfrx {
namespace parse {

// Values are the field numbers of tf.train.Feature's `kind` oneof.
enum Kind : uint8_t { kNone = 0, kBytes = 1, kFloat = 2, kInt64 = 3 };

struct Span {
  const uint8_t* data;
  size_t size;
};

// One requested feature of an Example (or of a SequenceExample's context).
struct ColumnSpec {
  std::string key;
  Kind kind = kInt64;
  bool dense = false;
  // dense: values per record; variable length: the count must be a multiple of it.
  int64_t count = 1;
  // Dense: the default fills a missing feature; without one the feature is
  // required. Variable length: set (with an empty default) when, in an
  // Example, an empty Feature of this key is skipped as for dense features
  // (TensorFlow's FixedLenSequenceFeature, and every feature of
  // parse_single_example); otherwise the key's last occurrence counts even
  // when empty. SequenceExample contexts ignore it: the last one counts.
  bool has_default = false;
  std::vector<int64_t> default_int64;
  std::vector<float> default_float;
};

// One requested feature list of a SequenceExample.
struct SequenceColumnSpec {
  std::string key;
  Kind kind = kInt64;
  int64_t step_count = 0;  // > 0: every step holds exactly this many values; 0: any
  bool required = false;   // a FixedLenSequenceFeature without allow_missing
};

enum ErrorCode : int {
  kOk = 0,
  kMalformed = 1,        // not a valid protocol buffer; `offset` is where
  kMissing = 2,          // required feature (or feature list) absent
  kKindMismatch = 3,     // expected = wanted kind, actual = found kind
  kCountMismatch = 4,    // expected = values wanted, actual = values found
  kNotMultiple = 5,      // expected = stride, actual = values found
};

struct Error {
  int code = kOk;
  int64_t record = -1;
  int column = -1;
  bool in_sequence = false;  // column indexes the sequence columns
  int64_t step = -1;
  int64_t expected = 0;
  int64_t actual = 0;
  int64_t offset = 0;
};

// A growable array of trivially copyable values that, unlike std::vector,
// does not zero what it grows by: values are decoded straight into it.
template <typename T>
class PodBuffer {
 public:
  PodBuffer() = default;
  PodBuffer(const PodBuffer&) = delete;
  PodBuffer& operator=(const PodBuffer&) = delete;
  PodBuffer(PodBuffer&& o) noexcept : data_(o.data_), size_(o.size_), capacity_(o.capacity_) {
    o.data_ = nullptr;
    o.size_ = o.capacity_ = 0;
  }
  ~PodBuffer() { std::free(data_); }

  // Appends n uninitialized values and returns where they start.
  TFRX_PARSE_INLINE T* grow(size_t n) {
    if (size_ + n > capacity_) grow_capacity(n);
    T* at = data_ + size_;
    size_ += n;
    return at;
  }
  // Drops values from the end (after a grow() that over-reserved).
  void truncate(size_t n) {
    if (n < size_) size_ = n;
  }
  TFRX_PARSE_INLINE void push_back(const T& v) { *grow(1) = v; }
  void reserve(size_t n) {
    if (n <= capacity_) return;
    T* p = static_cast<T*>(std::realloc(data_, n * sizeof(T)));
    if (p == nullptr) throw std::bad_alloc();
    data_ = p;
    capacity_ = n;
  }
  // Hands the storage (std::malloc'd; free with std::free) to the caller and
  // leaves the buffer empty. Capacity beyond the values (up to half of it,
  // from growth by doubling) is given back first, so an output array does
  // not hold twice its size for as long as it lives.
  T* release() {
    if (data_ != nullptr && capacity_ - size_ > size_ / 8) {
      if (size_ == 0) {
        std::free(data_);
        data_ = nullptr;
      } else if (T* shrunk = static_cast<T*>(std::realloc(data_, size_ * sizeof(T)))) {
        data_ = shrunk;
      }
    }
    T* p = data_;
    data_ = nullptr;
    size_ = capacity_ = 0;
    return p;
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  TFRX_PARSE_NOINLINE void grow_capacity(size_t n) { reserve(std::max(size_ + n, capacity_ * 2 + 16)); }

  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// Values of one variable-length column gathered over a range of records.
struct VarColumn {
  PodBuffer<int64_t> int64_values;
  PodBuffer<float> float_values;
  PodBuffer<Span> bytes_values;
  PodBuffer<int64_t> counts;       // values per record (Example) or per step (sequence)
  PodBuffer<int64_t> step_counts;  // sequence columns: steps per record
  size_t size() const { return int64_values.size() + float_values.size() + bytes_values.size(); }
};

// Where dense columns go: `values` is a [records x count] array of the
// column's type (int64_t or float), or of Span for bytes (a Span with null
// data and size j stands for the default's j-th value).
struct DenseTarget {
  void* values = nullptr;
};

class Parser {
 public:
  // `sequence` selects SequenceExample records (columns = context features).
  Parser(std::vector<ColumnSpec> columns, std::vector<SequenceColumnSpec> sequence_columns, bool sequence);

  const std::vector<ColumnSpec>& columns() const { return columns_; }
  const std::vector<SequenceColumnSpec>& sequence_columns() const { return sequence_columns_; }

  // Parses records [begin, end) of `records`. Dense columns are written at
  // row (record index); variable-length ones are appended to `var` (indexed
  // like columns; entries for dense columns stay empty) and `seq_var`.
  // Stops at the first bad record and fills `error`; returns false then.
  bool parse_range(const Span* records, int64_t begin, int64_t end, const std::vector<DenseTarget>& dense,
                   std::vector<VarColumn>* var, std::vector<VarColumn>* seq_var, Error* error) const;

 private:
  class RangeParse;  // parse_range's steps (parse.cpp)

  struct KeyTable {
    std::vector<int32_t> slots;  // column index or -1
    std::vector<uint64_t> hashes;  // full hash of the key in each used slot
    std::vector<int32_t> next;   // next column with the same key, or -1
    std::vector<const std::string*> keys;
    std::vector<Span> refs;  // the bytes of keys[i]
    // The bytes that open a map entry of the usual layout for keys[i] after
    // its 2-byte header: 0a K key 12 (at most 16 bytes; len 0 if longer),
    // as two 8-byte words and the masks of the bytes that count.
    struct EntryPattern {
      uint64_t word[2] = {0, 0};
      uint64_t mask[2] = {0, 0};
      uint32_t len = 0;
    };
    std::vector<EntryPattern> patterns;
    // The pattern of a key of n bytes (len 0 when it is longer than 13).
    static EntryPattern pattern_of(const uint8_t* key, size_t n);
    uint64_t mask = 0;
    void build(const std::vector<const std::string*>& keys);
    int32_t find(const uint8_t* p, size_t n) const;
    // Whether column i's key is the n bytes at p (defined in parse.cpp).
    inline bool matches(int32_t i, const uint8_t* p, size_t n) const;
  };

  std::vector<ColumnSpec> columns_;
  std::vector<SequenceColumnSpec> sequence_columns_;
  bool sequence_;
  KeyTable table_;
  KeyTable sequence_table_;
};

// COO indices of ragged values: [row, position] pairs from `outer` splits, or
// [row, step, position] triples when `inner` splits values into steps.
// `out` holds (inner ? inner[outer[rows]] : outer[rows]) + kIndexChunk - 1
// rows of 2 or 3: the last kIndexChunk - 1 are scratch.
constexpr int64_t kIndexChunk = 4;
void sparse_indices(const int64_t* outer, int64_t rows, const int64_t* inner, int64_t* out);

// The longest row of `rows` rows given by `rows + 1` splits (0 when rows is 0).
int64_t max_row_length(const int64_t* splits, int64_t rows);

// How many contiguous ranges (one thread each) to split `n` records of
// `total_bytes` into, given up to `threads` threads.
int plan_chunks(int64_t n, int64_t total_bytes, int threads);

}  // namespace parse
}  // namespace tfrx
