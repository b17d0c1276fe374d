// kiln/test/test_runtime_allocator.cpp — the CPU caching allocator: classes, reuse, cap, stats.
//
// Tests that rely on caching skip under AddressSanitizer, where caching is compiled out.
// Counters are compared as differences, since tensors elsewhere in the process allocate too.
#include "runtime/allocator.h"

#include "base/error.h"
#include "frontend/ops_factory.h"
#include "runtime/config.h"
#include "test_support/scoped_env.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace kiln::rt {
namespace {

using test::ScopedEnv;

#define SKIP_WITHOUT_CACHING()                                 \
  do {                                                         \
    if (!cpu_allocator_caching_available()) {                  \
      GTEST_SKIP() << "caching compiled out (AddressSanitizer)"; \
    }                                                          \
  } while (0)

bool aligned(void* p) { return reinterpret_cast<uintptr_t>(p) % kCpuAlignment == 0; }

TEST(RuntimeAllocator, SizeClassesBoundWaste) {
  if (!cpu_allocator_caching_available()) {
    EXPECT_EQ(cpu_alloc_size(100), 128u);  // ASan: rounded to 64 only
    return;
  }
  EXPECT_EQ(cpu_alloc_size(0), 64u);
  EXPECT_EQ(cpu_alloc_size(1), 64u);
  EXPECT_EQ(cpu_alloc_size(64), 64u);
  EXPECT_EQ(cpu_alloc_size(65), 128u);
  EXPECT_EQ(cpu_alloc_size(512), 512u);
  EXPECT_EQ(cpu_alloc_size(513), 576u);    // (512, 1024] in steps of 64
  EXPECT_EQ(cpu_alloc_size(1024), 1024u);
  EXPECT_EQ(cpu_alloc_size(1025), 1152u);  // (1024, 2048] in steps of 128
  EXPECT_EQ(cpu_alloc_size(size_t{3} << 20), size_t{3} << 20);
  EXPECT_EQ(cpu_alloc_size((size_t{64} << 20) + 1), size_t{72} << 20);  // steps of 8 MiB
  EXPECT_EQ(cpu_alloc_size(size_t{1} << 62), size_t{1} << 62);
  EXPECT_EQ(cpu_alloc_size((size_t{1} << 62) + 1), 0u);
  for (size_t b = 1; b < (size_t{1} << 24); b = b * 5 / 4 + 1) {
    size_t s = cpu_alloc_size(b);
    EXPECT_GE(s, b);
    EXPECT_EQ(s % 64, 0u);
    if (b > 512) {
      EXPECT_LE(s - b, b / 8) << b;
    }
  }
}

TEST(RuntimeAllocator, AlignedAndWritable) {
  std::vector<std::pair<void*, size_t>> blocks;
  for (size_t b : {size_t{0}, size_t{1}, size_t{63}, size_t{100}, size_t{4097}, size_t{1} << 20, (size_t{5} << 20) + 3}) {
    void* p = cpu_alloc(b);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(aligned(p)) << b;
    std::memset(p, 0xab, std::max<size_t>(b, 1));
    blocks.emplace_back(p, b);
  }
  for (auto& [p, b] : blocks) cpu_free(p, b);
  cpu_free(nullptr, 123);  // no-op
}

TEST(RuntimeAllocator, FreedBlockIsReusedForTheSameClass) {
  SKIP_WITHOUT_CACHING();
  ScopedEnv e("KILN_ALLOCATOR", "caching");
  empty_cache();
  size_t a = (size_t{3} << 20) - 1000;  // both in the 3 MiB class
  size_t b = (size_t{3} << 20) - 100;
  void* p = cpu_alloc(a);
  AllocatorStats s0 = allocator_stats();
  cpu_free(p, a);
  AllocatorStats s1 = allocator_stats();
  EXPECT_EQ(s1.bytes_cached, s0.bytes_cached + (size_t{3} << 20));
  EXPECT_EQ(s1.blocks_cached, s0.blocks_cached + 1);
  EXPECT_EQ(s1.frees, s0.frees + 1);
  void* q = cpu_alloc(b);
  AllocatorStats s2 = allocator_stats();
  EXPECT_EQ(q, p);
  EXPECT_EQ(s2.cache_hits, s1.cache_hits + 1);
  EXPECT_EQ(s2.allocs, s1.allocs + 1);
  EXPECT_EQ(s2.system_allocs, s1.system_allocs);
  EXPECT_EQ(s2.bytes_cached, s0.bytes_cached);
  // A different class does not take it.
  cpu_free(q, b);
  void* r = cpu_alloc(size_t{4} << 20);
  EXPECT_NE(r, p);
  cpu_free(r, size_t{4} << 20);
  empty_cache();
}

TEST(RuntimeAllocator, EmptyCacheReturnsEverything) {
  SKIP_WITHOUT_CACHING();
  ScopedEnv e("KILN_ALLOCATOR", "caching");
  empty_cache();
  AllocatorStats s0 = allocator_stats();
  EXPECT_EQ(s0.bytes_cached, 0u);
  EXPECT_EQ(s0.blocks_cached, 0u);
  std::vector<void*> ps;
  for (int i = 0; i < 5; ++i) ps.push_back(cpu_alloc(1000));
  for (void* p : ps) cpu_free(p, 1000);
  AllocatorStats s1 = allocator_stats();
  EXPECT_EQ(s1.blocks_cached, 5u);
  EXPECT_EQ(s1.bytes_cached, 5u * 1024);
  empty_cache();
  AllocatorStats s2 = allocator_stats();
  EXPECT_EQ(s2.bytes_cached, 0u);
  EXPECT_EQ(s2.blocks_cached, 0u);
  EXPECT_EQ(s2.system_frees, s1.system_frees + 5);
}

TEST(RuntimeAllocator, CapReturnsBlocksToTheSystem) {
  SKIP_WITHOUT_CACHING();
  ScopedEnv e("KILN_ALLOCATOR_CACHE_MB", "3");
  empty_cache();
  EXPECT_EQ(allocator_stats().cache_limit_bytes, size_t{3} << 20);
  void* a = cpu_alloc(size_t{2} << 20);
  void* b = cpu_alloc(size_t{2} << 20);
  AllocatorStats s0 = allocator_stats();
  cpu_free(a, size_t{2} << 20);  // 2 MiB cached
  cpu_free(b, size_t{2} << 20);  // 4 MiB would pass the 3 MiB cap: goes back
  AllocatorStats s1 = allocator_stats();
  EXPECT_EQ(s1.bytes_cached, size_t{2} << 20);
  EXPECT_EQ(s1.system_frees, s0.system_frees + 1);
  empty_cache();
}

TEST(RuntimeAllocator, SystemModeDoesNotCache) {
  ScopedEnv e("KILN_ALLOCATOR", "system");
  empty_cache();
  AllocatorStats s0 = allocator_stats();
  void* p = cpu_alloc(10000);
  EXPECT_TRUE(aligned(p));
  cpu_free(p, 10000);
  AllocatorStats s1 = allocator_stats();
  EXPECT_EQ(s1.bytes_cached, 0u);
  EXPECT_EQ(s1.system_allocs, s0.system_allocs + 1);
  EXPECT_EQ(s1.system_frees, s0.system_frees + 1);
  EXPECT_EQ(s1.cache_hits, s0.cache_hits);
}

TEST(RuntimeAllocator, BytesInUseAndOutOfMemory) {
  AllocatorStats s0 = allocator_stats();
  void* p = cpu_alloc(1000);
  EXPECT_EQ(allocator_stats().bytes_in_use, s0.bytes_in_use + cpu_alloc_size(1000));
  cpu_free(p, 1000);
  EXPECT_EQ(allocator_stats().bytes_in_use, s0.bytes_in_use);
  EXPECT_EQ(cpu_try_alloc(size_t{1} << 63), nullptr);
  try {
    cpu_alloc(size_t{1} << 63);
    FAIL() << "no exception";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("[cpu_alloc] out of memory allocating"), std::string::npos) << err.what();
  }
}

TEST(RuntimeAllocator, ConcurrentAllocFree) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      for (int i = 0; i < 2000; ++i) {
        size_t b = 64 + static_cast<size_t>((i * 37 + t * 101) % 5000);
        auto* p = static_cast<unsigned char*>(cpu_alloc(b));
        p[0] = static_cast<unsigned char>(t);
        p[b - 1] = static_cast<unsigned char>(t);
        EXPECT_EQ(p[0], t);
        cpu_free(p, b);
      }
    });
  for (auto& th : threads) th.join();
}

TEST(RuntimeAllocator, TensorStorageUsesIt) {
  SKIP_WITHOUT_CACHING();
  ScopedEnv e("KILN_ALLOCATOR", "caching");
  empty_cache();
  void* first;
  {
    Tensor t = empty({1024, 1024});  // 4 MiB of f32
    first = t.data_ptr();
  }
  AllocatorStats s0 = allocator_stats();
  EXPECT_EQ(s0.bytes_cached, size_t{4} << 20);
  Tensor u = empty({1024, 1024});
  EXPECT_EQ(u.data_ptr(), first);
  EXPECT_EQ(allocator_stats().cache_hits, s0.cache_hits + 1);
}

}  // namespace
}  // namespace kiln::rt
