// kiln/base/storage.h — intrusive reference counting and the byte storage of tensors.
//
// Storage owns one 64-byte aligned allocation; several TensorImpls (views) may share it.
#pragma once

#include "base/allocator.h"
#include "base/device.h"
#include "base/dtype.h"
#include "base/int_array_ref.h"

#include <atomic>
#include <cstddef>
#include <functional>
#include <cstdint>
#include <string_view>
#include <utility>

namespace kiln {

// Base for intrusively counted objects; the count starts at 0 and IntrusivePtr manages it.
class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;
  void retain() const { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() const {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  int use_count() const { return refs_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<int> refs_{0};
};

template <typename T>
class IntrusivePtr {
 public:
  IntrusivePtr() = default;
  explicit IntrusivePtr(T* p) : p_(p) {
    if (p_) p_->retain();
  }
  IntrusivePtr(const IntrusivePtr& o) : p_(o.p_) {
    if (p_) p_->retain();
  }
  IntrusivePtr(IntrusivePtr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  IntrusivePtr& operator=(IntrusivePtr o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~IntrusivePtr() {
    if (p_) p_->release();
  }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const IntrusivePtr& o) const { return p_ == o.p_; }

 private:
  T* p_ = nullptr;
};

template <typename T, typename... Args>
IntrusivePtr<T> make_intrusive(Args&&... args) {
  return IntrusivePtr<T>(new T(std::forward<Args>(args)...));
}

class StorageImpl : public RefCounted {
 public:
  // Allocates nbytes (64-byte aligned, uninitialized) on `device`: the cpu allocator, or the
  // installed device allocator of a cuda device.
  StorageImpl(size_t nbytes, Device device);
  // Memory kiln does not own (kiln::from_blob, DLPack): `deleter` (may be empty: the caller
  // keeps the memory alive) runs on `data` when the last tensor using it goes.
  StorageImpl(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter);
  ~StorageImpl() override;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

  // Counts the in-place writes to this storage (every view of it shares the count): autograd
  // records it when it saves a tensor and refuses to use one written since (PyTorch's version
  // counter). Not synchronized: a tensor is written by one thread at a time.
  uint64_t version() const { return version_; }
  void bump_version() { ++version_; }

  static constexpr size_t kAlignment = 64;

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  Allocator* allocator_ = nullptr;  // the one that gave data_ (cpu)
  DeviceAllocator* device_allocator_ = nullptr;  // or the one that gave it (cuda)
  std::function<void(void*)> deleter_;           // or its owner's, for memory kiln does not own
  bool foreign_ = false;
  uint64_t version_ = 0;
};

using Storage = IntrusivePtr<StorageImpl>;

// The bytes a contiguous tensor of `sizes` and `dtype` needs: the element count times the
// element size, both checked (a negative size, or a count or byte size past int64, fails as
// "[op] ..." naming the sizes), so that no caller allocates a wrapped-around small buffer.
size_t checked_nbytes(std::string_view op, IntArrayRef sizes, ScalarType dtype);
// The element count of `sizes`, checked the same way.
int64_t checked_numel(std::string_view op, IntArrayRef sizes);
// The storage elements a strided tensor reaches: 1 + sum((size - 1) * stride), 0 when it is
// empty. Sizes and strides must pair up and be non-negative, and the sum fit in int64.
int64_t checked_extent(std::string_view op, IntArrayRef sizes, IntArrayRef strides);

}  // namespace kiln
