// kiln/test/emulated_cuda/emu_api.h — the interface between the emulated driver and the kernels it runs.
//
// The emulated device (test/emulated_cuda/: libcuda.so.1 and libnvrtc.so.13 stand-ins) runs
// kiln's CUDA C on the host. Its NVRTC compiles a module's source as C++ into a shared object
// (emu_device.h supplies the CUDA built-ins), and its driver loads that object, hands it this
// table (kiln_emu_bind) and runs a launch's blocks one after another, each block's threads as
// fibers on one host thread. A kernel reads its thread's coordinates through `current` and
// waits for its block or warp through the calls below, which switch fibers. Plain C types only:
// both sides are compiled separately.
#pragma once

#include <cstddef>

namespace kiln_emu {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// One emulated thread, as its kernel sees it.
struct Thread {
  Dim3 thread_idx, block_idx, block_dim, grid_dim;
  unsigned char* dynamic_shared = nullptr;  // the launch's sharedMemBytes, one buffer per block
};

struct Api {
  Thread* const* current = nullptr;  // the running fiber's thread, updated at every switch
  void (*syncthreads)() = nullptr;   // waits for every live thread of the block
  void (*syncwarp)() = nullptr;      // waits for every lane of the warp
  // Every lane of the warp deposits `bytes` (at most 8) from `value` and receives lane
  // `src_lane`'s (its own when src_lane is outside the warp); a warp-wide rendezvous.
  void (*exchange)(const void* value, void* out, size_t bytes, int src_lane) = nullptr;
  // The lanes' votes: bit i set when lane i voted true (a warp-wide rendezvous).
  unsigned (*ballot)(int vote) = nullptr;
  // Raised inside a kernel: the launch fails with this message (an emulated trap). The calling
  // thread is never resumed.
  void (*trap)(const char* message) = nullptr;
};

// A stream capture copies a launch's arguments when it records it (CUDA graphs): a module's
// kiln_emu_sizes_<name>(sizes, count) gives each parameter's size, at most kMaxParams of them.
inline constexpr size_t kMaxParams = 256;
}  // namespace kiln_emu
