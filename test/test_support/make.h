// kiln/test/test_support/make.h — building tensors in tests without going through factories.
//
// make<T>(values, shape) gives a contiguous CPU tensor of T's dtype holding `values`;
// values<T>(t) reads any tensor back in row-major order (through its strides).
#pragma once

#include "frontend/error.h"
#include "frontend/tensor.h"

#include <cstring>
#include <vector>

namespace kiln::test {

template <typename T>
Tensor make(const std::vector<T>& values, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  KILN_INTERNAL_ASSERT(n == static_cast<int64_t>(values.size()));
  auto storage = make_intrusive<StorageImpl>(values.size() * sizeof(T), Device());
  T* p = static_cast<T*>(storage->data());
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  std::vector<int64_t> strides = contiguous_strides(shape);
  return Tensor(make_intrusive<TensorImpl>(storage, scalar_type_of<T>, std::move(shape), std::move(strides), 0));
}

// A 1-D tensor.
template <typename T>
Tensor make(const std::vector<T>& values) {
  return make<T>(values, {static_cast<int64_t>(values.size())});
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
