// kiln/runtime/allocator.h — the CPU caching allocator behind tensor storage.
//
// Every block is 64-byte aligned and sized by a size class: multiples of 64 bytes up to 512,
// then eight classes per power of two (513..1024 in steps of 64, 1025..2048 in steps of 128,
// ..., so a 3 MiB request gets a 3 MiB block and rounding wastes at most 12.5%). Freed blocks
// go to a per-class free list (one mutex per class) and the next request of that class reuses
// the most recently freed one, so large buffers are not page faulted again on every call.
// At most KILN_ALLOCATOR_CACHE_MB (default 2048) bytes are kept; a free past the cap returns
// the block to the system. When the system is out of memory the cache is emptied and the
// request retried once.
//
// KILN_ALLOCATOR=system skips the free lists (every alloc/free goes to aligned_alloc/free,
// still with class-rounded sizes so blocks stay interchangeable if the setting changes).
// Under AddressSanitizer (__SANITIZE_ADDRESS__, the asan preset) caching is compiled out and
// sizes are only rounded to 64 bytes: a cached block would hide use-after-free and overflows
// from ASan.
// It is installed as the process's CPU allocator (base/allocator.h) when the library loads.
#pragma once

#include "base/allocator.h"

#include <cstddef>
#include <cstdint>

namespace kiln::rt {

using kiln::kCpuAlignment;

// Allocates `bytes` (0 allowed: a valid, distinct 64-byte block), 64-byte aligned,
// uninitialized. Throws kiln::Error "[cpu_alloc] out of memory ..." on failure.
void* cpu_alloc(size_t bytes);
// Like cpu_alloc but returns nullptr when the memory cannot be had.
void* cpu_try_alloc(size_t bytes);
// Frees a block from cpu_alloc; `bytes` must be the size it was allocated with. nullptr is a no-op.
void cpu_free(void* p, size_t bytes);

// The size of the block a request of `bytes` receives (its size class); 0 for requests too
// large to ever succeed (> 2^62).
size_t cpu_alloc_size(size_t bytes);

// Caching is compiled in (false under AddressSanitizer).
bool cpu_allocator_caching_available();

struct AllocatorStats {
  uint64_t allocs = 0;          // successful cpu_alloc / cpu_try_alloc calls
  uint64_t cache_hits = 0;      // of which served from a free list
  uint64_t frees = 0;           // cpu_free calls with a non-null pointer
  uint64_t system_allocs = 0;   // blocks obtained from the system
  uint64_t system_frees = 0;    // blocks returned to the system
  uint64_t bytes_in_use = 0;    // class-rounded bytes of live blocks
  uint64_t bytes_cached = 0;    // bytes held in free lists
  uint64_t blocks_cached = 0;   // blocks held in free lists
  uint64_t cache_limit_bytes = 0;  // the current cap (KILN_ALLOCATOR_CACHE_MB)
};

// A snapshot of the counters (each read atomically; not one consistent cut under concurrency).
AllocatorStats allocator_stats();

// Returns every cached block to the system.
void empty_cache();

}  // namespace kiln::rt
