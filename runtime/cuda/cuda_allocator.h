// kiln/runtime/cuda/cuda_allocator.h — the caching allocator of CUDA device memory.
//
// cuMemAlloc and cuMemFree synchronize and cost tens of microseconds, so freed blocks are
// kept and handed out again, as PyTorch's CUDA caching allocator does. A request is rounded
// to its size class (multiples of 512 bytes up to 4 KiB, then eight classes per power of two,
// so rounding wastes at most 12.5%), and a freed block goes to the free list of its class
// *and of the stream that was current when it was allocated*: a later request on that stream
// may reuse it at once, because the stream runs its work in order, while a request on another
// stream never sees it (a kernel still queued on the first stream may be using it). A tensor
// used on a second stream must be synchronized with before it is freed, as in PyTorch without
// record_stream.
//
// When cuMemAlloc runs out of memory, every cached block of the device is returned to the
// driver (after synchronizing the device) and the request is retried once; if that fails too,
// kiln::Error "[cuda] out of memory on cuda:N: tried to allocate X; Y allocated by kiln, Z
// cached, F free of T". empty_cache() returns the cached blocks of every device.
// KILN_ALLOCATOR=system turns the cache off: each request gets its exact size from the driver
// and each free returns it (after synchronizing the device), so that compute-sanitizer's
// memcheck sees accesses past a tensor's end and reports only real leaks.
// It is installed as base's CUDA allocator when the library loads.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::rt {

// The block size a request of `bytes` receives on a CUDA device.
size_t cuda_block_size(size_t bytes);

}  // namespace kiln::rt
