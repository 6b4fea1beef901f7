#include "feature_presence.h"

#include <cstring>
#include <unordered_map>

#include "example_decode.h"

namespace tfrx {
namespace example {

namespace {

// Assigns key ids; entry i of a record is first compared with the key entry i of the previous record
// had (records of one dataset mostly list their keys in one order), then looked up.
class KeyIds {
 public:
  explicit KeyIds(PresenceTable* table) : table_(table) {}

  uint32_t id(size_t position, const uint8_t* key, size_t size) {
    if (position < by_position_.size()) {
      const std::string& k = table_->keys[by_position_[position]];
      if (k.size() == size && (size == 0 || std::memcmp(k.data(), key, size) == 0)) return by_position_[position];
    }
    std::string s(reinterpret_cast<const char*>(key), size);
    auto it = ids_.find(s);
    uint32_t id;
    if (it == ids_.end()) {
      id = static_cast<uint32_t>(table_->keys.size());
      ids_.emplace(s, id);
      table_->keys.push_back(std::move(s));
      table_->kind_masks.push_back(0);
      slot_.push_back(-1);
      stamp_.push_back(-1);
    } else {
      id = it->second;
    }
    if (position >= by_position_.size()) by_position_.resize(position + 1);
    by_position_[position] = id;
    return id;
  }

  // Records an entry of `record` for key `id`; a second one in the same record replaces the first.
  void add(int64_t record, uint32_t id, uint8_t state, int64_t count) {
    PresenceTable& t = *table_;
    if (stamp_[id] == record) {
      size_t at = static_cast<size_t>(slot_[id]);
      t.states[at] = state;
      t.counts[at] = count;
      return;
    }
    stamp_[id] = record;
    slot_[id] = static_cast<int64_t>(t.records.size());
    t.records.push_back(record);
    t.key_ids.push_back(id);
    t.states.push_back(state);
    t.counts.push_back(count);
  }

 private:
  PresenceTable* table_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<uint32_t> by_position_;
  std::vector<int64_t> slot_, stamp_;
};

void add_features(int64_t record, const std::vector<Entry>& entries, const std::vector<Chunk>& chunks,
                  KeyIds* ids) {
  const Chunk* c = chunks.data();
  size_t position = 0;
  for (const Entry& e : entries) {
    uint32_t id = ids->id(position++, e.key, e.key_size);
    int64_t n = static_cast<int64_t>(count_values(e.kind, c + e.begin, c + e.end));
    ids->add(record, id, static_cast<uint8_t>(1 + e.kind), n);
  }
}

// Per key, the kinds its final entries hold (a replaced entry does not count).
void context_masks(PresenceTable* t) {
  for (size_t i = 0; i < t->states.size(); ++i) {
    uint8_t kind = static_cast<uint8_t>(t->states[i] - 1);
    if (kind != kNone) t->kind_masks[static_cast<size_t>(t->key_ids[i])] |= static_cast<uint8_t>(1u << kind);
  }
}

}  // namespace

bool feature_presence(const uint8_t* data, const int64_t* starts, const int64_t* lengths, size_t count,
                      bool sequence, PresenceTable* features, PresenceTable* feature_lists, PresenceError* err) {
  KeyIds ids(features);
  KeyIds list_ids(feature_lists);
  std::vector<uint8_t> entry_masks;  // feature lists: the step kinds of each entry
  DecodeError derr;
  if (!sequence) {
    ExampleView view;
    for (size_t i = 0; i < count; ++i) {
      if (!decode_example(data + starts[i], static_cast<size_t>(lengths[i]), &view, &derr)) {
        *err = PresenceError{i, derr.offset, derr.what};
        return false;
      }
      add_features(static_cast<int64_t>(i), view.features, view.chunks, &ids);
    }
    context_masks(features);
    return true;
  }
  SequenceExampleView view;
  for (size_t i = 0; i < count; ++i) {
    if (!decode_sequence_example(data + starts[i], static_cast<size_t>(lengths[i]), &view, &derr)) {
      *err = PresenceError{i, derr.offset, derr.what};
      return false;
    }
    const int64_t record = static_cast<int64_t>(i);
    add_features(record, view.context, view.chunks, &ids);
    size_t position = 0;
    for (const Entry& e : view.feature_lists) {
      uint32_t id = list_ids.id(position++, e.key, e.key_size);
      uint8_t first = kNone, mask = 0;
      for (uint32_t s = e.begin; s < e.end; ++s) {
        uint8_t kind = view.steps[s].kind;
        if (kind == kNone) continue;
        if (first == kNone) first = kind;
        mask |= static_cast<uint8_t>(1u << kind);
      }
      size_t before = feature_lists->records.size();
      list_ids.add(record, id, static_cast<uint8_t>(1 + first), static_cast<int64_t>(e.end - e.begin));
      if (feature_lists->records.size() > before) {
        entry_masks.push_back(mask);
      } else {  // replaced this record's earlier entry for the key
        for (size_t at = feature_lists->records.size(); at-- > 0;) {
          if (feature_lists->records[at] != record) break;
          if (static_cast<uint32_t>(feature_lists->key_ids[at]) == id) {
            entry_masks[at] = mask;
            break;
          }
        }
      }
    }
  }
  context_masks(features);
  for (size_t i = 0; i < entry_masks.size(); ++i)
    feature_lists->kind_masks[static_cast<size_t>(feature_lists->key_ids[i])] |= entry_masks[i];
  return true;
}

}  // namespace example
}  // namespace tfrx
