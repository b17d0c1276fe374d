// kiln/runtime/cache_bound.h — the bound every in-memory cache of compiled code keeps.
//
// A long-running process that meets ever new keys (shapes, scalar attributes) must not grow
// without limit: each cache of compiled code holds at most its stated number of entries. An
// entry records whether it was used since the last sweep (`used`, set on every hit with a
// relaxed store that a hot entry skips once set). A full cache sweeps before it inserts:
// entries unused since the last sweep go (their code is unmapped once nothing runs it), the
// rest are marked unused; when every entry was used, the oldest half by insertion goes. The
// caller holds the cache's lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <iterator>
#include <vector>

namespace kiln::rt {

// A cache entry's "used since the last sweep" flag.
struct UsedFlag {
  mutable std::atomic<bool> used{true};
  void touch() const {
    if (!used.load(std::memory_order_relaxed)) used.store(true, std::memory_order_relaxed);
  }
};

// `map` (key -> shared_ptr<V>, V derived from UsedFlag; `order` lists its keys by insertion)
// gets room for one more entry: at most capacity - 1 remain. Returns the entries dropped.
template <class Map, class Key>
size_t make_room(Map& map, std::vector<Key>& order, size_t capacity) {
  if (map.size() < capacity) return 0;
  size_t dropped = 0;
  std::vector<Key> kept;
  for (const Key& k : order) {
    auto it = map.find(k);
    if (it == map.end()) continue;
    if (!it->second->used.load(std::memory_order_relaxed)) {
      map.erase(it);
      ++dropped;
      continue;
    }
    it->second->used.store(false, std::memory_order_relaxed);
    kept.push_back(k);
  }
  // Everything was in use: the older half goes.
  size_t i = 0;
  if (map.size() >= capacity)
    for (; map.size() > capacity / 2 && i < kept.size(); ++i, ++dropped) map.erase(kept[i]);
  kept.erase(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(i));
  order = std::move(kept);
  return dropped;
}

}  // namespace kiln::rt
