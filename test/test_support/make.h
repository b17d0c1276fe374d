// kiln/test/test_support/make.h — building tensors in tests without going through factories.
//
// make<T>(values, shape) gives a contiguous CPU tensor of T's dtype holding `values` (on the
// device a MadeOn scope names, if any: the op database builds its cuda copy under one);
// mk<T>(doubles, shape) does the same from doubles (so one literal list serves every dtype);
// strided(base, sizes, strides, offset) views base's storage with any geometry, no view op
// involved; values<T>(t) reads any tensor back in row-major order (through its strides).
#pragma once

#include "base/error.h"
#include "base/half.h"
#include "frontend/tensor.h"

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln::test {

// The first GPU, for the tests that run on one.
inline const Device kGpu(kCUDA, 0);

// The device make() puts its tensors on: the cpu, unless a MadeOn scope of this thread says.
inline Device& made_device() {
  static thread_local Device d;
  return d;
}
class MadeOn {
 public:
  explicit MadeOn(Device d) : old_(made_device()) { made_device() = d; }
  ~MadeOn() { made_device() = old_; }
  MadeOn(const MadeOn&) = delete;
  MadeOn& operator=(const MadeOn&) = delete;

 private:
  Device old_;
};

template <typename T>
Tensor make(const std::vector<T>& values, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  KILN_INTERNAL_ASSERT(n == static_cast<int64_t>(values.size()));
  auto storage = make_intrusive<StorageImpl>(values.size() * sizeof(T), Device());
  T* p = static_cast<T*>(storage->data());
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  std::vector<int64_t> strides = contiguous_strides(shape);
  Tensor t(make_intrusive<TensorImpl>(storage, scalar_type_of<T>, std::move(shape), std::move(strides), 0));
  return made_device() == Device() ? t : t.to(made_device());
}

// A 1-D tensor.
template <typename T>
Tensor make(const std::vector<T>& values) {
  return make<T>(values, {static_cast<int64_t>(values.size())});
}

// A tensor of element type T holding `v` (doubles converted; f16/bf16 through float, bool as
// v != 0). An empty `shape` means 1-D of v.size() elements.
template <typename T>
Tensor mk(const std::vector<double>& v, std::vector<int64_t> shape = {}) {
  std::vector<T> x;
  for (double d : v) {
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      x.push_back(T(static_cast<float>(d)));
    else if constexpr (std::is_same_v<T, bool>)
      x.push_back(d != 0);
    else
      x.push_back(static_cast<T>(d));
  }
  if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
  return make<T>(x, shape);
}

// A view of `base`'s storage with the given geometry (no view op involved).
inline Tensor strided(const Tensor& base, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                      int64_t offset = 0) {
  return Tensor(
      make_intrusive<TensorImpl>(base.impl()->storage(), base.dtype(), std::move(sizes), std::move(strides), offset));
}

template <typename T>
std::vector<T> values(const Tensor& t) {
  KILN_INTERNAL_ASSERT(t.dtype() == scalar_type_of<T>);
  std::vector<T> out;
  out.reserve(static_cast<size_t>(t.numel()));
  const T* base = static_cast<const T*>(t.data_ptr());
  const auto& sizes = t.impl()->sizes();
  const auto& strides = t.impl()->strides();
  std::vector<int64_t> idx(sizes.size(), 0);
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < sizes.size(); ++d) off += idx[d] * strides[d];
    out.push_back(base[off]);
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace kiln::test
