// kiln/runtime/scratch.h — working storage kept per thread and per nesting depth.
//
// A hot path that needs vectors on every call (Program::run's buffers, a compiled call's input
// list) leases a T instead of allocating: each thread keeps one T per nesting depth (a run may
// call another, e.g. an extern step running eager ops), created on first use and kept, with
// its capacity, for the thread's life. Releasing the lease calls T::drop_references() so that
// no tensor stays alive in a kept T.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace kiln::rt {

template <typename T> class ScratchLease {
 public:
  ScratchLease() {
    std::vector<std::unique_ptr<T>>& st = stack();
    size_t& d = depth();
    if (d == st.size()) st.push_back(std::make_unique<T>());
    s_ = st[d++].get();
  }
  ~ScratchLease() {
    s_->drop_references();
    --depth();
  }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  T& operator*() const { return *s_; }

 private:
  static std::vector<std::unique_ptr<T>>& stack() {
    thread_local std::vector<std::unique_ptr<T>> s;
    return s;
  }
  static size_t& depth() {
    thread_local size_t d = 0;
    return d;
  }
  T* s_;
};

}  // namespace kiln::rt
