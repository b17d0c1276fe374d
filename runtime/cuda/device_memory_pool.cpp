// kiln/runtime/cuda/device_memory_pool.cpp — segments carved into blocks: best fit, split, coalesce, deferred cross-stream frees.
#include "runtime/cuda/device_memory_pool.h"

#include "base/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::rt {

namespace {

std::string mib(int64_t bytes) { return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / (1 << 20)); }

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

// A piece of a segment. Blocks of one segment form a list in address order (prev/next); a
// block is live (handed out), pending (freed, waiting for events of other streams) or free (in
// its kind's free set). A segment's first block is its head and is never merged away.
struct DeviceMemoryPool::Block {
  char* ptr = nullptr;
  size_t size = 0;
  void* stream = nullptr;
  bool small = false;
  bool allocated = false;  // live or pending
  Block* prev = nullptr;
  Block* next = nullptr;
  std::vector<void*> stream_uses;  // streams other than `stream` it is used on (record_stream)
  int pending_events = 0;
};

namespace {

// Free blocks by (stream, size, address): lower_bound on (stream, size) is the best fit.
struct BlockOrder {
  template <typename B>
  bool operator()(const B* a, const B* b) const {
    const auto key = [](const B* x) {
      return std::make_tuple(reinterpret_cast<std::uintptr_t>(x->stream), x->size, reinterpret_cast<std::uintptr_t>(x->ptr));
    };
    return key(a) < key(b);
  }
};

}  // namespace

struct DeviceMemoryPool::State {
  struct Segment {
    Block* head = nullptr;
    size_t size = 0;
    bool cached = true;  // false: an exact-size segment returned at its block's free
  };
  std::set<Block*, BlockOrder> free_small, free_large;
  std::unordered_map<void*, Block*> live;  // by address; pending blocks are not here
  std::vector<std::pair<void*, Block*>> pending;  // (event, block)
  std::map<char*, Segment> segments;
  size_t limit = 0;
  cuda::MemoryStats st;

  std::set<Block*, BlockOrder>& free_set(const Block* b) { return b->small ? free_small : free_large; }
  // The best-fitting free block of the kind and stream, removed from its set, or nullptr.
  Block* take_free(bool small, void* stream, size_t size) {
    auto& set = small ? free_small : free_large;
    Block key;
    key.stream = stream;
    key.size = size;
    auto it = set.lower_bound(&key);
    if (it == set.end() || (*it)->stream != stream) return nullptr;
    Block* b = *it;
    set.erase(it);
    return b;
  }
  bool over_limit(size_t more) const {
    return limit != 0 && static_cast<size_t>(st.reserved_bytes) + more > limit;
  }
};

DeviceMemoryPool::DeviceMemoryPool(PoolDevice& device, int index)
    : device_(device), index_(index), s_(std::make_unique<State>()) {}

DeviceMemoryPool::~DeviceMemoryPool() {
  for (auto& [event, b] : s_->pending) device_.release_event(event);
  for (auto& [base, seg] : s_->segments) {
    for (Block* b = seg.head; b;) {
      Block* next = b->next;
      delete b;
      b = next;
    }
    device_.free(base);
  }
}

void* DeviceMemoryPool::allocate(size_t bytes, void* stream, bool caching) {
  std::lock_guard lock(mu_);
  return allocate_locked(bytes, stream, caching);
}

void* DeviceMemoryPool::allocate_locked(size_t bytes, void* stream, bool caching) {
  State& s = *s_;
  const size_t size = caching ? round_up(std::max<size_t>(bytes, 1), kRound) : std::max<size_t>(bytes, 1);
  const bool small = caching && size <= kSmallRequest;
  size_t segment = !caching ? size
                   : small  ? kSmallSegment
                   : size < kMidRequest ? kMidSegment
                                        : round_up(size, kLargeRound);
  if (caching) process_events(/*all=*/false);
  Block* b = caching ? s.take_free(small, stream, size) : nullptr;
  if (b) ++s.st.cache_hits;
  void* p = nullptr;
  if (!b) {
    p = s.over_limit(segment) ? nullptr : device_.try_alloc(segment);
    if (!p) {
      // Return what is cached (after the queued work that may still use it) and try again:
      // first the free blocks that frees on other streams released, then the device.
      ++s.st.oom_retries;
      device_.synchronize();
      process_events(/*all=*/true);
      release_free_segments();
      if (caching) b = s.take_free(small, stream, size);
      if (b) ++s.st.cache_hits;
      if (!b) p = s.over_limit(segment) ? nullptr : device_.try_alloc(segment);
      if (!b && !p && segment > size && !s.over_limit(size) && (p = device_.try_alloc(size))) segment = size;
      if (!b && !p) {
        ++s.st.ooms;
        out_of_memory(bytes, segment, s.over_limit(segment));
      }
    }
  }
  if (!b) {
    b = new Block();
    b->ptr = static_cast<char*>(p);
    b->size = segment;
    b->stream = stream;
    b->small = small;
    s.segments[b->ptr] = State::Segment{b, segment, caching};
    ++s.st.driver_allocations;
    ++s.st.segments;
    s.st.reserved_bytes += static_cast<int64_t>(segment);
    s.st.peak_reserved_bytes = std::max(s.st.peak_reserved_bytes, s.st.reserved_bytes);
  }
  // Split off what the request does not need, when the rest is worth keeping apart.
  const size_t rest = b->size - size;
  if (caching && (small ? rest >= kRound : rest > kSmallRequest)) {
    auto* r = new Block();
    r->ptr = b->ptr + size;
    r->size = rest;
    r->stream = stream;
    r->small = small;
    r->prev = b;
    r->next = b->next;
    if (b->next) b->next->prev = r;
    b->next = r;
    b->size = size;
    s.free_set(r).insert(r);
    ++s.st.splits;
  }
  b->allocated = true;
  s.live[b->ptr] = b;
  ++s.st.allocations;
  s.st.allocated_bytes += static_cast<int64_t>(b->size);
  s.st.peak_allocated_bytes = std::max(s.st.peak_allocated_bytes, s.st.allocated_bytes);
  return b->ptr;
}

void DeviceMemoryPool::out_of_memory(size_t bytes, size_t segment, bool over_limit) {
  const State& s = *s_;
  size_t free_b = 0, total_b = 0;
  device_.memory_info(&free_b, &total_b);
  const std::string cap =
      over_limit ? fmt::format("; {} more would pass the cap of {} set by set_per_process_memory_fraction",
                               mib(static_cast<int64_t>(segment)), mib(static_cast<int64_t>(s.limit)))
                 : "";
  fail("cuda",
       "out of memory on cuda:{}: tried to allocate {} ({} bytes); {} allocated by kiln, {} reserved (cached "
       "segments were returned to the driver before retrying){}; {} free of {} on the device",
       index_, mib(static_cast<int64_t>(round_up(bytes, kRound))), bytes, mib(s.st.allocated_bytes),
       mib(s.st.reserved_bytes), cap, mib(static_cast<int64_t>(free_b)), mib(static_cast<int64_t>(total_b)));
}

void DeviceMemoryPool::free(void* p) {
  if (!p) return;
  std::lock_guard lock(mu_);
  State& s = *s_;
  auto it = s.live.find(p);
  if (it == s.live.end()) return;  // not ours (never happens for kiln's storage)
  Block* b = it->second;
  auto seg = s.segments.find(b->ptr);
  if (seg != s.segments.end() && !seg->second.cached) {
    device_.synchronize();  // a queued kernel may still use the block (a throw leaves the books as they were)
    s.live.erase(it);
    s.st.allocated_bytes -= static_cast<int64_t>(b->size);
    s.st.reserved_bytes -= static_cast<int64_t>(b->size);
    --s.st.segments;
    ++s.st.driver_frees;
    s.segments.erase(seg);
    char* const ptr = b->ptr;
    delete b;
    device_.free(ptr);
    return;
  }
  // The events of the other streams first: if one cannot be made, the block stays live.
  std::vector<void*> events;
  try {
    for (void* stream : b->stream_uses) events.push_back(device_.record_event(stream));
  } catch (...) {
    for (void* e : events) device_.release_event(e);
    throw;
  }
  s.live.erase(it);
  s.st.allocated_bytes -= static_cast<int64_t>(b->size);
  if (!events.empty()) {
    for (void* e : events) s.pending.emplace_back(e, b);
    b->pending_events = static_cast<int>(events.size());
    b->stream_uses.clear();
    s.st.pending_free_bytes += static_cast<int64_t>(b->size);
    return;
  }
  release_block(b);
}

// Makes a live or pending block free, merged with its free neighbours (the caller holds mu_).
void DeviceMemoryPool::release_block(Block* b) {
  State& s = *s_;
  auto& set = s.free_set(b);
  b->allocated = false;
  if (Block* prev = b->prev; prev && !prev->allocated) {
    set.erase(prev);
    prev->size += b->size;
    prev->next = b->next;
    if (b->next) b->next->prev = prev;
    delete b;
    b = prev;
    ++s.st.merges;
  }
  if (Block* next = b->next; next && !next->allocated) {
    set.erase(next);
    b->size += next->size;
    b->next = next->next;
    if (next->next) next->next->prev = b;
    delete next;
    ++s.st.merges;
  }
  set.insert(b);
}

// Frees the pending blocks whose events have all completed (`all`: the caller synchronized).
// Each entry leaves the pending list as it is handled, so that a device error part way (a
// sticky fault reported by an event query) leaves the rest pending and nothing handled twice.
void DeviceMemoryPool::process_events(bool all) {
  State& s = *s_;
  if (s.pending.empty()) return;
  std::vector<std::pair<void*, Block*>> queued;
  queued.swap(s.pending);
  size_t i = 0;
  try {
    for (; i < queued.size(); ++i) {
      auto [event, b] = queued[i];
      if (!all && !device_.event_done(event)) {
        s.pending.push_back(queued[i]);
        continue;
      }
      device_.release_event(event);
      if (--b->pending_events == 0) {
        s.st.pending_free_bytes -= static_cast<int64_t>(b->size);
        release_block(b);
      }
    }
  } catch (...) {
    s.pending.insert(s.pending.end(), queued.begin() + static_cast<std::ptrdiff_t>(i), queued.end());
    throw;
  }
}

// Returns the segments that are one free block to the device (the caller synchronized).
void DeviceMemoryPool::release_free_segments() {
  State& s = *s_;
  for (auto* set : {&s.free_small, &s.free_large}) {
    for (auto it = set->begin(); it != set->end();) {
      Block* b = *it;
      if (b->prev || b->next) {
        ++it;
        continue;
      }
      it = set->erase(it);
      device_.free(b->ptr);
      s.segments.erase(b->ptr);
      s.st.reserved_bytes -= static_cast<int64_t>(b->size);
      --s.st.segments;
      ++s.st.driver_frees;
      delete b;
    }
  }
}

void DeviceMemoryPool::empty_cache() {
  std::lock_guard lock(mu_);
  State& s = *s_;
  const auto whole = [](const Block* b) { return !b->prev && !b->next; };
  if (s.pending.empty() && std::none_of(s.free_small.begin(), s.free_small.end(), whole) &&
      std::none_of(s.free_large.begin(), s.free_large.end(), whole))
    return;
  device_.synchronize();  // a kernel still queued may use a cached block
  process_events(/*all=*/true);
  release_free_segments();
}

bool DeviceMemoryPool::record_stream(void* p, void* stream) {
  std::lock_guard lock(mu_);
  auto it = s_->live.find(p);
  if (it == s_->live.end()) return false;
  Block* b = it->second;
  if (stream != b->stream && std::find(b->stream_uses.begin(), b->stream_uses.end(), stream) == b->stream_uses.end())
    b->stream_uses.push_back(stream);
  return true;
}

void DeviceMemoryPool::set_limit(size_t bytes) {
  std::lock_guard lock(mu_);
  s_->limit = bytes;
  s_->st.limit_bytes = static_cast<int64_t>(bytes);
}

cuda::MemoryStats DeviceMemoryPool::stats() const {
  std::lock_guard lock(mu_);
  cuda::MemoryStats st = s_->st;
  st.inactive_split_bytes = 0;
  for (const auto* set : {&s_->free_small, &s_->free_large})
    for (const Block* b : *set)
      if (b->prev || b->next) st.inactive_split_bytes += static_cast<int64_t>(b->size);
  return st;
}

void DeviceMemoryPool::reset_peak() {
  std::lock_guard lock(mu_);
  s_->st.peak_allocated_bytes = s_->st.allocated_bytes;
  s_->st.peak_reserved_bytes = s_->st.reserved_bytes;
}

void DeviceMemoryPool::verify() const {
  std::lock_guard lock(mu_);
  const State& s = *s_;
  int64_t reserved = 0, allocated = 0, pending = 0;
  size_t free_blocks = 0;
  const auto check = [&](bool ok, std::string_view what, const Block* b) {
    if (!ok)
      throw InternalError(fmt::format("cuda:{} memory pool: {} (block at {} of {} bytes)", index_, what,
                                      static_cast<const void*>(b->ptr), b->size));
  };
  for (const auto& [base, seg] : s.segments) {
    reserved += static_cast<int64_t>(seg.size);
    check(seg.head && seg.head->ptr == base && !seg.head->prev, "a segment's head is not its first block", seg.head);
    size_t covered = 0;
    for (const Block* b = seg.head; b; b = b->next) {
      check(b->ptr == base + covered, "blocks do not tile their segment", b);
      check(!b->next || b->next->prev == b, "the block list is broken", b);
      check(b->stream == seg.head->stream && b->small == seg.head->small, "a block left its segment's kind", b);
      covered += b->size;
      if (!b->allocated) {
        ++free_blocks;
        const auto& set = b->small ? s.free_small : s.free_large;
        check(set.count(const_cast<Block*>(b)) == 1, "a free block is not in its set", b);
        check(!b->next || b->next->allocated, "two free neighbours were not merged", b);
      } else if (b->pending_events > 0) {
        pending += static_cast<int64_t>(b->size);
        check(!s.live.contains(b->ptr), "a pending block is live", b);
      } else {
        allocated += static_cast<int64_t>(b->size);
        auto it = s.live.find(b->ptr);
        check(it != s.live.end() && it->second == b, "a live block is not in the live map", b);
      }
    }
    check(covered == seg.size, "blocks do not cover their segment", seg.head);
  }
  const auto total = [&](std::string_view what, int64_t counted, int64_t kept) {
    if (counted != kept)
      throw InternalError(fmt::format("cuda:{} memory pool: {} is {} by the blocks but {} in the statistics", index_,
                                      what, counted, kept));
  };
  total("reserved_bytes", reserved, s.st.reserved_bytes);
  total("allocated_bytes", allocated, s.st.allocated_bytes);
  total("pending_free_bytes", pending, s.st.pending_free_bytes);
  total("segments", static_cast<int64_t>(s.segments.size()), s.st.segments);
  total("free blocks", static_cast<int64_t>(free_blocks), static_cast<int64_t>(s.free_small.size() + s.free_large.size()));
  total("live blocks", static_cast<int64_t>(s.live.size()),
        static_cast<int64_t>(std::count_if(s.live.begin(), s.live.end(), [](const auto& kv) {
          return kv.second->allocated && kv.second->pending_events == 0;
        })));
}

}  // namespace kiln::rt
