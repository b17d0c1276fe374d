// kiln/test/test_cuda_memory_pool.cpp — the caching allocator's bookkeeping on a fake device: segments, split, merge, streams, cap.
//
// DeviceMemoryPool (runtime/cuda/device_memory_pool.h) asks its device for memory, a
// synchronization and events; FakeDevice answers with addresses that are never touched, a
// capacity, and events that complete when a test finishes their stream's work (or
// synchronizes). So every rule of the allocator is checked here on any machine; the GPU tests
// (test_cuda_gpu.cpp) check the same pool on the driver.
#include "runtime/cuda/device_memory_pool.h"

#include "base/error.h"
#include "frontend/ops_factory.h"
#include "frontend/tensor.h"
#include "test_support/check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace kiln::rt {
namespace {

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;

void* stream(int i) { return reinterpret_cast<void*>(static_cast<uintptr_t>(0x5000 + i)); }
std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

class FakeDevice final : public PoolDevice {
 public:
  explicit FakeDevice(size_t capacity) : capacity_(capacity) {}
  ~FakeDevice() override { EXPECT_TRUE(live_.empty()) << live_.size() << " segments were never returned"; }

  void* try_alloc(size_t bytes) override {
    if (used_ + bytes > capacity_) return nullptr;
    const std::uintptr_t a = next_;
    next_ += (bytes + kMiB - 1) / kMiB * kMiB + kMiB;  // a gap: segments never touch
    live_[a] = bytes;
    used_ += bytes;
    ++allocs;
    return reinterpret_cast<void*>(a);
  }
  void free(void* p) override {
    auto it = live_.find(addr(p));
    ASSERT_NE(it, live_.end()) << "freed an address the device never gave";
    used_ -= it->second;
    live_.erase(it);
    ++frees;
  }
  void synchronize() override {
    ++syncs;
    for (auto& [id, e] : events_) e.done = true;
  }
  void* record_event(void* s) override {
    events_[++last_event_] = Event{s, false};
    return reinterpret_cast<void*>(last_event_);
  }
  bool event_done(void* e) override { return events_.at(addr(e)).done; }
  void release_event(void* e) override { EXPECT_EQ(events_.erase(addr(e)), 1u); }
  void memory_info(size_t* free_bytes, size_t* total_bytes) override {
    *free_bytes = capacity_ - used_;
    *total_bytes = capacity_;
  }

  // The work queued on `s` so far has completed.
  void finish(void* s) {
    for (auto& [id, e] : events_)
      if (e.stream == s) e.done = true;
  }
  size_t used() const { return used_; }
  size_t events() const { return events_.size(); }
  int allocs = 0, frees = 0, syncs = 0;

 private:
  struct Event {
    void* stream;
    bool done;
  };
  size_t capacity_;
  size_t used_ = 0;
  std::uintptr_t next_ = std::uintptr_t{1} << 32;
  std::map<std::uintptr_t, size_t> live_;
  std::map<std::uintptr_t, Event> events_;
  std::uintptr_t last_event_ = 0;
};

using test::error_of;

TEST(CudaMemoryPool, SmallRequestsShareASegmentAndMergeWhenFreed) {
  FakeDevice dev(1 << 30);
  DeviceMemoryPool pool(dev, 0);
  void* a = pool.allocate(1000, stream(0));
  void* b = pool.allocate(3000, stream(0));
  void* c = pool.allocate(1, stream(0));
  EXPECT_EQ(dev.allocs, 1);  // one 2 MiB segment serves all three
  EXPECT_EQ(addr(b), addr(a) + 1024);
  EXPECT_EQ(addr(c), addr(b) + 3072);
  cuda::MemoryStats s = pool.stats();
  EXPECT_EQ(s.allocated_bytes, 1024 + 3072 + 512);
  EXPECT_EQ(s.reserved_bytes, int64_t{2} << 20);
  EXPECT_EQ(s.segments, 1);
  EXPECT_EQ(s.splits, 3);
  EXPECT_EQ(s.inactive_split_bytes, s.reserved_bytes - s.allocated_bytes);
  pool.verify();
  // Free the middle one, then its neighbours: everything merges back into one block.
  pool.free(b);
  pool.verify();
  EXPECT_EQ(pool.stats().merges, 0);  // a and c are live
  pool.free(a);
  pool.free(c);
  pool.verify();
  s = pool.stats();
  EXPECT_EQ(s.allocated_bytes, 0);
  EXPECT_EQ(s.inactive_split_bytes, 0);  // one free block, the whole segment
  EXPECT_EQ(s.merges, 3);
  // The next request is a cache hit at the segment's start (b and c were hits too: pieces
  // of the segment a's request took).
  EXPECT_EQ(pool.stats().cache_hits, 2);
  void* d = pool.allocate(kMiB, stream(0));
  EXPECT_EQ(d, a);
  EXPECT_EQ(dev.allocs, 1);
  EXPECT_EQ(pool.stats().cache_hits, 3);
  pool.free(d);
  pool.empty_cache();
  EXPECT_EQ(dev.used(), 0u);
  EXPECT_EQ(pool.stats().reserved_bytes, 0);
  EXPECT_EQ(pool.stats().driver_frees, 1);
}

TEST(CudaMemoryPool, ARequestTakesTheSmallestHoleThatFits) {
  FakeDevice dev(1 << 30);
  DeviceMemoryPool pool(dev, 0);
  std::vector<void*> p;
  for (size_t kb : {64, 8, 32, 8, 16, 8}) p.push_back(pool.allocate(kb * kKiB, stream(0)));
  pool.free(p[0]);  // holes of 64, 32 and 16 KiB between live 8 KiB blocks
  pool.free(p[2]);
  pool.free(p[4]);
  pool.verify();
  EXPECT_EQ(pool.allocate(20 * kKiB, stream(0)), p[2]);  // 32 fits best
  EXPECT_EQ(pool.allocate(16 * kKiB, stream(0)), p[4]);  // exactly
  EXPECT_EQ(addr(pool.allocate(12 * kKiB, stream(0))), addr(p[2]) + 20 * kKiB);  // what the 32 left
  EXPECT_EQ(pool.allocate(60 * kKiB, stream(0)), p[0]);
  EXPECT_EQ(dev.allocs, 1);
  pool.verify();
}

TEST(CudaMemoryPool, LargeRequestsShareTwentyMiBSegmentsAndHugeOnesGetTheirOwn) {
  FakeDevice dev(size_t{1} << 34);
  DeviceMemoryPool pool(dev, 0);
  void* a = pool.allocate(4 * kMiB, stream(0));
  void* b = pool.allocate(4 * kMiB, stream(0));
  EXPECT_EQ(dev.allocs, 1);
  EXPECT_EQ(addr(b), addr(a) + 4 * kMiB);
  EXPECT_EQ(pool.stats().reserved_bytes, int64_t{20} << 20);
  // 11.5 MiB are left; 11 MiB (not under 10 MiB) would get a 12 MiB segment, but the free
  // block fits, and its last 0.5 MiB is too little to split off a large block: taken whole.
  void* c = pool.allocate(11 * kMiB, stream(0));
  EXPECT_EQ(addr(c), addr(b) + 4 * kMiB);
  EXPECT_EQ(dev.allocs, 1);
  EXPECT_EQ(pool.stats().allocated_bytes, int64_t{20} << 20);
  // A request of 10 MiB or more has a segment of its size rounded up to 2 MiB.
  void* d = pool.allocate(33 * kMiB + 5, stream(0));
  EXPECT_EQ(dev.allocs, 2);
  EXPECT_EQ(pool.stats().reserved_bytes, int64_t{20 + 34} << 20);
  // A small request never takes a piece of a large segment.
  pool.free(c);
  void* e = pool.allocate(100, stream(0));
  EXPECT_EQ(dev.allocs, 3);
  EXPECT_EQ(pool.stats().reserved_bytes, int64_t{20 + 34 + 2} << 20);
  pool.verify();
  for (void* p : {a, b, d, e}) pool.free(p);
  pool.empty_cache();
  EXPECT_EQ(dev.used(), 0u);
  pool.verify();
}

TEST(CudaMemoryPool, AFreedBlockIsReusedOnlyOnItsStream) {
  FakeDevice dev(1 << 30);
  DeviceMemoryPool pool(dev, 0);
  void* a = pool.allocate(4096, stream(0));
  pool.free(a);
  void* b = pool.allocate(4096, stream(1));  // stream 0 may still be using a's block
  EXPECT_NE(b, a);
  EXPECT_EQ(dev.allocs, 2);
  void* c = pool.allocate(4096, stream(0));
  EXPECT_EQ(c, a);
  pool.verify();
  pool.free(b);
  pool.free(c);
}

TEST(CudaMemoryPool, RecordStreamDefersTheFreeUntilTheOtherStreamsWorkIsDone) {
  FakeDevice dev(1 << 30);
  DeviceMemoryPool pool(dev, 0);
  void* a = pool.allocate(8192, stream(0));
  EXPECT_TRUE(pool.record_stream(a, stream(1)));
  EXPECT_TRUE(pool.record_stream(a, stream(2)));
  EXPECT_TRUE(pool.record_stream(a, stream(0)));  // its own stream: nothing to wait for
  EXPECT_FALSE(pool.record_stream(reinterpret_cast<void*>(0x1234), stream(1)));  // not kiln's memory
  pool.free(a);
  EXPECT_EQ(dev.events(), 2u);  // one per other stream
  EXPECT_EQ(pool.stats().pending_free_bytes, 8192);
  EXPECT_EQ(pool.stats().allocated_bytes, 0);
  pool.verify();
  // Stream 1 is done, stream 2 is not: the block stays out of reach.
  dev.finish(stream(1));
  void* b = pool.allocate(8192, stream(0));
  EXPECT_NE(b, a);
  EXPECT_EQ(pool.stats().pending_free_bytes, 8192);
  EXPECT_EQ(dev.events(), 1u);
  pool.free(b);
  dev.finish(stream(2));
  void* c = pool.allocate(8192, stream(0));
  EXPECT_EQ(c, a);  // released, merged and reused; the host never waited
  EXPECT_EQ(pool.stats().pending_free_bytes, 0);
  EXPECT_EQ(dev.events(), 0u);
  EXPECT_EQ(dev.syncs, 0);
  pool.verify();
  // A pending free is also released by empty_cache, which synchronizes.
  EXPECT_TRUE(pool.record_stream(c, stream(3)));
  pool.free(c);
  EXPECT_EQ(pool.stats().pending_free_bytes, 8192);
  pool.empty_cache();
  EXPECT_EQ(pool.stats().pending_free_bytes, 0);
  EXPECT_EQ(dev.used(), 0u);
  pool.verify();
}

TEST(CudaMemoryPool, OutOfMemoryReturnsTheCacheRetriesAndThenNamesWhatItHolds) {
  FakeDevice dev(24 * kMiB);
  DeviceMemoryPool pool(dev, 3);
  pool.free(pool.allocate(4 * kMiB, stream(0)));  // a cached 20 MiB segment of stream 0
  void* b = pool.allocate(4 * kMiB, stream(1));     // needs another: the cache goes back first
  cuda::MemoryStats s = pool.stats();
  EXPECT_EQ(s.oom_retries, 1);
  EXPECT_EQ(s.driver_frees, 1);
  EXPECT_EQ(s.reserved_bytes, int64_t{20} << 20);
  EXPECT_EQ(dev.syncs, 1);
  // On a third stream no 20 MiB segment fits beside b's, but the request's own size does.
  void* c = pool.allocate(3 * kMiB, stream(2));
  EXPECT_NE(c, nullptr);
  EXPECT_EQ(pool.stats().reserved_bytes, int64_t{23} << 20);
  pool.verify();
  const std::string e = error_of([&] { (void)pool.allocate(2 * kMiB, stream(2)); });
  EXPECT_NE(e.find("[cuda] out of memory on cuda:3: tried to allocate 2.00 MiB (2097152 bytes); 7.00 MiB "
                   "allocated by kiln, 23.00 MiB reserved"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("1.00 MiB free of 24.00 MiB on the device"), std::string::npos) << e;
  EXPECT_EQ(e.find("set_per_process_memory_fraction"), std::string::npos) << e;
  EXPECT_EQ(pool.stats().ooms, 1);
  pool.verify();
  pool.free(b);
  pool.free(c);
  pool.empty_cache();
}

TEST(CudaMemoryPool, TheCapBoundsWhatIsHeldAndIsNamedWhenItIsTheReason) {
  FakeDevice dev(size_t{1} << 34);
  DeviceMemoryPool pool(dev, 0);
  pool.set_limit(30 * kMiB);
  EXPECT_EQ(pool.stats().limit_bytes, int64_t{30} << 20);
  void* a = pool.allocate(4 * kMiB, stream(0));  // 20 MiB held
  void* b = pool.allocate(8 * kMiB, stream(1));  // a 20 MiB segment would pass the cap; 8 MiB does not
  EXPECT_EQ(pool.stats().reserved_bytes, int64_t{28} << 20);
  const std::string e = error_of([&] { (void)pool.allocate(4 * kMiB, stream(2)); });
  EXPECT_NE(e.find("out of memory on cuda:0: tried to allocate 4.00 MiB"), std::string::npos) << e;
  EXPECT_NE(e.find("20.00 MiB more would pass the cap of 30.00 MiB set by set_per_process_memory_fraction"),
            std::string::npos)
      << e;
  EXPECT_LE(pool.stats().peak_reserved_bytes, int64_t{30} << 20);
  pool.free(a);
  pool.free(b);
  pool.set_limit(0);
  void* c = pool.allocate(4 * kMiB, stream(2));  // no cap now
  pool.free(c);
  pool.empty_cache();
  pool.verify();
}

TEST(CudaMemoryPool, EmptyCacheKeepsSegmentsThatHoldALiveBlock) {
  FakeDevice dev(1 << 30);
  DeviceMemoryPool pool(dev, 0);
  void* a = pool.allocate(1000, stream(0));
  void* b = pool.allocate(5 * kMiB, stream(0));
  pool.free(pool.allocate(1000, stream(1)));
  pool.free(b);
  pool.empty_cache();  // stream 1's small segment and the large one go; a's stays
  EXPECT_EQ(pool.stats().segments, 1);
  EXPECT_EQ(pool.stats().reserved_bytes, int64_t{2} << 20);
  EXPECT_EQ(dev.used(), 2 * kMiB);
  const int syncs = dev.syncs;
  pool.empty_cache();  // nothing to return: no synchronization
  EXPECT_EQ(dev.syncs, syncs);
  pool.free(a);
  pool.empty_cache();
  EXPECT_EQ(dev.used(), 0u);
  pool.verify();
}

TEST(CudaMemoryPool, WithoutCachingEachRequestIsItsOwnExactSegment) {
  FakeDevice dev(1 << 30);
  DeviceMemoryPool pool(dev, 0);
  void* a = pool.allocate(1000, stream(0), /*caching=*/false);
  void* b = pool.allocate(1000, stream(0), /*caching=*/false);
  EXPECT_EQ(dev.used(), 2000u);
  EXPECT_EQ(pool.stats().allocated_bytes, 2000);
  pool.free(a);
  EXPECT_EQ(dev.used(), 1000u);  // returned at once, after a synchronization
  EXPECT_EQ(dev.syncs, 1);
  pool.verify();
  pool.free(b);
  EXPECT_EQ(pool.stats().reserved_bytes, 0);
  EXPECT_EQ(pool.stats().cache_hits, 0);
}

TEST(CudaMemoryPool, PeaksFollowTheMostHeldSinceTheirReset) {
  FakeDevice dev(1 << 30);
  DeviceMemoryPool pool(dev, 0);
  void* a = pool.allocate(3 * kMiB, stream(0));
  pool.free(a);
  EXPECT_EQ(pool.stats().peak_allocated_bytes, int64_t{3} << 20);
  EXPECT_EQ(pool.stats().peak_reserved_bytes, int64_t{20} << 20);
  pool.empty_cache();
  pool.reset_peak();
  EXPECT_EQ(pool.stats().peak_allocated_bytes, 0);
  EXPECT_EQ(pool.stats().peak_reserved_bytes, 0);
}

// A seeded random walk of allocations, frees, cross-stream uses, finished streams and cache
// returns on a device small enough to run out; the pool's invariants are checked at each step.
TEST(CudaMemoryPool, ARandomWalkKeepsTheBlocksConsistent) {
  const unsigned seed = 20261204;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  FakeDevice dev(160 * kMiB);
  {
    DeviceMemoryPool pool(dev, 0);
    std::vector<std::pair<void*, size_t>> live;
    int ooms = 0;
    for (int step = 0; step < 4000; ++step) {
      const int op = static_cast<int>(rng() % 100);
      if (op < 50 || live.empty()) {
        // Sizes log-uniform from 1 byte to 32 MiB, so every kind of block and segment occurs.
        const size_t bytes = std::max<size_t>(1, static_cast<size_t>(std::exp2(std::uniform_real_distribution<double>(0, 25)(rng))));
        try {
          void* p = pool.allocate(bytes, stream(static_cast<int>(rng() % 3)));
          for (const auto& [q, n] : live)
            ASSERT_TRUE(addr(p) + bytes <= addr(q) || addr(q) + n <= addr(p)) << "step " << step << ": overlap";
          live.emplace_back(p, bytes);
        } catch (const Error& e) {
          ASSERT_NE(std::string(e.what()).find("out of memory on cuda:0"), std::string::npos) << e.what();
          ++ooms;
        }
      } else if (op < 85) {
        const size_t i = rng() % live.size();
        pool.free(live[i].first);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (op < 93) {
        ASSERT_TRUE(pool.record_stream(live[rng() % live.size()].first, stream(static_cast<int>(rng() % 4))));
      } else if (op < 99) {
        dev.finish(stream(static_cast<int>(rng() % 4)));
      } else {
        pool.empty_cache();
      }
      ASSERT_NO_THROW(pool.verify()) << "step " << step;
      ASSERT_EQ(pool.stats().reserved_bytes, static_cast<int64_t>(dev.used()));
    }
    EXPECT_GT(ooms, 0);  // the walk reaches the device's limit
    for (const auto& [p, n] : live) pool.free(p);
    pool.empty_cache();
    pool.verify();
    EXPECT_EQ(pool.stats().reserved_bytes, 0);
    EXPECT_GT(pool.stats().merges, 0);
    EXPECT_GT(pool.stats().cache_hits, 0);
  }
  EXPECT_EQ(dev.used(), 0u);
  EXPECT_EQ(dev.events(), 0u);
}

// The user-facing functions check their arguments before they touch a device.
TEST(CudaMemoryPool, TheUserFacingFunctionsRefuseBadArguments) {
  for (double f : {0.0, -0.5, 1.5, std::nan("")})
    EXPECT_NE(error_of([&] { cuda::set_per_process_memory_fraction(f); })
                  .find("[set_per_process_memory_fraction] fraction="),
              std::string::npos)
        << f;
  EXPECT_NE(error_of([] { cuda::set_per_process_memory_fraction(0.0, 1); }).find("expected a fraction in (0, 1]"),
            std::string::npos);
  EXPECT_EQ(error_of([] { cuda::record_stream(ones({2}), cuda::Stream()); }),
            "[record_stream] expected a cuda tensor, got cpu");
  EXPECT_EQ(error_of([] { cuda::record_stream(Tensor(), cuda::Stream()); }),
            "[record_stream] expected a cuda tensor, got an undefined tensor");
}

}  // namespace
}  // namespace kiln::rt
