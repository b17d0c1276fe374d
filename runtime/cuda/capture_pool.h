// kiln/runtime/cuda/capture_pool.h — device memory a CUDA graph capture allocates, kept for the graph.
//
// A captured graph replays its kernels on the addresses they had when it was recorded. Memory a
// program allocates and frees during the capture (its temporaries, a library's workspace) must
// therefore not go back to the caching allocator while the graph lives, or another tensor
// would be given it and the next replay would write over that tensor. While a CapturePool is
// active on a thread, the blocks allocated on that thread for its device are noted, and those
// of them freed are kept by the pool instead. A kept block serves a later request of the same
// size in the same capture (the capture's work is ordered on one stream, as a private pool's
// is in PyTorch), so that a product's workspace is one block however many products the graph
// holds. release() frees them once the graph is gone and the work replaying it has finished
// (the caller synchronizes first).
#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

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

  // Frees the kept blocks (the graph that used them is gone and its replays are done).
  void release();
  // Forgets them, never freed (when the replays could not be waited for).
  void leak() {
    kept_.clear();
    idle_.clear();
    allocated_.clear();
  }
  size_t kept_blocks() const { return kept_.size(); }

  // Whether a capture is under way on this thread.
  static bool capturing();

  // The allocator's hooks (runtime/cuda/cuda_allocator.cpp).
  static void* reuse(size_t bytes, int device);  // a kept block of `bytes`, or nullptr
  static void note_alloc(void* p, size_t bytes, int device);
  static bool keep_free(void* p, int device);  // true: kept, not to be freed

 private:
  int device_;
  std::unordered_map<void*, size_t> allocated_;  // live blocks of the capture, with their sizes
  std::vector<void*> kept_;                       // blocks the capture freed (and did not hand out again)
  std::unordered_multimap<size_t, void*> idle_;   // those of them not in use again, by size
};

}  // namespace kiln::rt
