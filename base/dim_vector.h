// kiln/base/dim_vector.h — a tensor's sizes or strides, held inline up to six dims.
//
// Every tensor (each eager op's result, each view) holds two of these; as std::vectors they
// were two heap allocations per tensor, a measurable part of an eager op's and a compiled
// call's cost. Ranks above kInline live on the heap. Read through IntArrayRef.
#pragma once

#include "base/int_array_ref.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace kiln {

class DimVector {
 public:
  static constexpr size_t kInline = 6;

  DimVector() = default;
  explicit DimVector(IntArrayRef v) { assign(v); }
  DimVector(const DimVector& o) { assign(o); }
  DimVector& operator=(const DimVector& o) {
    if (this != &o) assign(o);
    return *this;
  }
  DimVector& operator=(IntArrayRef v) {
    assign(v);
    return *this;
  }

  const int64_t* data() const { return heap_ ? heap_.get() : inline_; }
  int64_t* data() { return heap_ ? heap_.get() : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t& operator[](size_t i) { return data()[i]; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  operator IntArrayRef() const { return IntArrayRef(data(), size_); }  // NOLINT
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }

 private:
  void assign(IntArrayRef v) {
    // v may point into this object's own storage (a = a): copy through the new buffer first.
    if (v.size() > kInline) {
      std::unique_ptr<int64_t[]> h(new int64_t[v.size()]);
      std::copy(v.begin(), v.end(), h.get());
      heap_ = std::move(h);
    } else {
      int64_t tmp[kInline];
      std::copy(v.begin(), v.end(), tmp);
      heap_.reset();
      std::copy(tmp, tmp + v.size(), inline_);
    }
    size_ = v.size();
  }

  int64_t inline_[kInline] = {};
  std::unique_ptr<int64_t[]> heap_;
  size_t size_ = 0;
};

}  // namespace kiln
