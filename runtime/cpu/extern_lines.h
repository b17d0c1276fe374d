// kiln/runtime/cpu/extern_lines.h — the lines of a tensor along one dim, for library kernels
// that work line by line (sort, scans, scatters) and share lines among the thread pool.
//
// Line l (0 <= l < count()) is the position of every dim but `dim`, numbered row-major; its
// first element is at offset(l, strides) in an operand with those strides, and its elements
// follow `length()` times at strides[dim]. A 0-dim tensor is one line of one element.
#pragma once

#include "runtime/thread_pool.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace kiln::rt {

class Lines {
 public:
  Lines(std::vector<int64_t> sizes, int64_t dim) : outer_(std::move(sizes)) {
    if (outer_.empty()) outer_ = {1};
    dim_ = static_cast<size_t>(dim);
    length_ = outer_.at(dim_);
    outer_[dim_] = 1;
    for (int64_t s : outer_) count_ *= s;
  }
  int64_t count() const { return count_; }
  int64_t length() const { return length_; }
  // Offset of line l's first element; `strides` of a 0-dim operand may be empty.
  int64_t offset(int64_t l, const std::vector<int64_t>& strides) const {
    int64_t off = 0;
    for (size_t k = outer_.size(); k-- > 0 && l > 0;) {
      if (outer_[k] > 1) off += (l % outer_[k]) * strides[k];
      l /= outer_[k];
    }
    return off;
  }
  // The stride along the dim in an operand with `strides` (0 for a 0-dim operand).
  int64_t step(const std::vector<int64_t>& strides) const { return strides.empty() ? 0 : strides[dim_]; }
  // fn(begin, end) over ranges of lines, in parallel when the work pays for a thread.
  template <typename Fn> void parallel(Fn&& fn) const {
    if (count_ == 0) return;
    const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, length_));
    parallel_for(count_, grain, fn);
  }

 private:
  std::vector<int64_t> outer_;
  size_t dim_ = 0;
  int64_t length_ = 1, count_ = 1;
};

}  // namespace kiln::rt
