// kiln/runtime/cuda/capture_pool.h — device memory CUDA graph captures allocate, kept for the graphs.
//
// A captured graph replays its kernels on the addresses they had when it was recorded. Memory a
// program allocates and frees during the capture (its temporaries, a library's workspace) must
// therefore not go back to the caching allocator while the graph lives, or another tensor
// would be given it and the next replay would write over that tensor. While a CapturePool is
// active on a thread, the blocks allocated on that thread for its device are noted, and those
// of them freed are kept by the pool instead.
//
// One pool serves every graph of a compiled function (runtime/cuda/cuda_graphs.h), whose
// replays run one after another: a kept block is scratch that any of them may use between its
// kernels, as PyTorch's graphs share a private pool. So each capture (begin()) may take any
// kept block for a request of at least half its size (the smallest that fits), and a block
// freed during the capture serves later requests of the same capture (its work is ordered on one
// stream): a cuBLASLt workspace is one block for every product of every graph, and a smaller
// signature's temporaries fit in a larger one's. release() frees the kept blocks once no graph
// uses them and their replays have finished (the caller waits first).
#pragma once

#include <cstddef>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace kiln::rt {

class CapturePool {
 public:
  explicit CapturePool(int device) : device_(device) {}
  ~CapturePool() { release(); }
  CapturePool(const CapturePool&) = delete;
  CapturePool& operator=(const CapturePool&) = delete;

  // Notes this thread's allocations for the device, and keeps their frees, until the scope ends.
  class Active {
   public:
    explicit Active(CapturePool& pool);
    ~Active();
    Active(const Active&) = delete;
    Active& operator=(const Active&) = delete;

   private:
    CapturePool* previous_;
  };

  // A capture starts: every kept block may serve it.
  void begin();
  // A capture failed: the blocks it took from the caching allocator go back (no graph uses them).
  void release_fresh();
  // Frees the kept blocks (the graphs that used them are gone and their replays are done).
  void release();
  // Forgets them, never freed (when the replays could not be waited for).
  void leak() {
    kept_.clear();
    idle_.clear();
    allocated_.clear();
    fresh_.clear();
  }
  size_t kept_blocks() const { return kept_.size(); }

  // Whether a capture is under way on this thread.
  static bool capturing();

  // The allocator's hooks (runtime/cuda/cuda_allocator.cpp).
  static void* reuse(size_t bytes, int device);  // a kept block for `bytes`, or nullptr
  static void note_alloc(void* p, size_t bytes, int device);
  static bool keep_free(void* p, int device);  // true: kept, not to be freed

 private:
  int device_;
  std::unordered_map<void*, size_t> kept_;       // blocks the pool owns and no tensor holds, with their sizes
  std::multimap<size_t, void*> idle_;             // those of them free in this capture, by size
  std::unordered_map<void*, size_t> allocated_;  // blocks live in this capture, with their sizes
  std::unordered_set<void*> fresh_;               // blocks this capture took from the caching allocator
};

}  // namespace kiln::rt
