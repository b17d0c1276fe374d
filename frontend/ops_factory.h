// kiln/frontend/ops_factory.h — tensor factories: empty, zeros, ones, full, arange, linspace, eye,
// *_like, tensors from data, and random tensors from a seedable counter-based generator.
#pragma once

#include "frontend/ops_random.h"
#include "frontend/tensor.h"

#include <initializer_list>
#include <optional>
#include <vector>

namespace kiln {

Tensor empty(IntArrayRef size, TensorOptions opts = {});
Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions opts = {});
Tensor zeros(IntArrayRef size, TensorOptions opts = {});
Tensor ones(IntArrayRef size, TensorOptions opts = {});
// Without a dtype, full() takes the value's type: bool, int64 or the default float dtype.
Tensor full(IntArrayRef size, const Scalar& value, TensorOptions opts = {});
// arange: int64 when start/end/step are all integers, else the default float dtype.
Tensor arange(const Scalar& end, TensorOptions opts = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1, TensorOptions opts = {});
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, TensorOptions opts = {});
// base ^ linspace(start, end, steps).
Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base = 10.0, TensorOptions opts = {});
Tensor eye(int64_t n, TensorOptions opts = {});
Tensor eye(int64_t n, int64_t m, TensorOptions opts = {});

Tensor empty_like(const Tensor& t, TensorOptions opts = {});
Tensor zeros_like(const Tensor& t, TensorOptions opts = {});
Tensor ones_like(const Tensor& t, TensorOptions opts = {});
Tensor full_like(const Tensor& t, const Scalar& value, TensorOptions opts = {});
// at::fill: a new tensor like t holding value (a Scalar, or a 0-dim tensor's value).
Tensor fill(const Tensor& t, const Scalar& value);
Tensor fill(const Tensor& t, const Tensor& value);
Tensor rand_like(const Tensor& t, TensorOptions opts = {});
Tensor randn_like(const Tensor& t, TensorOptions opts = {});

// Uniform [0, 1), standard normal, and integers in [low, high).
Tensor rand(IntArrayRef size, TensorOptions opts = {});
Tensor rand(IntArrayRef size, Generator& gen, TensorOptions opts = {});
Tensor randn(IntArrayRef size, TensorOptions opts = {});
Tensor randn(IntArrayRef size, Generator& gen, TensorOptions opts = {});
Tensor randint(int64_t high, IntArrayRef size, TensorOptions opts = {});
Tensor randint(int64_t low, int64_t high, IntArrayRef size, TensorOptions opts = {});
Tensor randint(int64_t low, int64_t high, IntArrayRef size, Generator& gen, TensorOptions opts = {});

// Tensors from data. The 1-D braced forms take the element type of the list (int64 for
// integers, float32 for floating values, as torch.tensor); the shaped forms check that
// the data has prod(shape) elements.
Tensor tensor(std::initializer_list<double> values, TensorOptions opts = {});
Tensor tensor(std::initializer_list<float> values, TensorOptions opts = {});
Tensor tensor(std::initializer_list<int> values, TensorOptions opts = {});
Tensor tensor(std::initializer_list<int64_t> values, TensorOptions opts = {});
Tensor tensor(std::initializer_list<bool> values, TensorOptions opts = {});
template <typename T> Tensor tensor(const std::vector<T>& values, IntArrayRef shape, TensorOptions opts = {});
template <typename T> Tensor tensor(const std::vector<T>& values, TensorOptions opts = {}) {
  int64_t n = static_cast<int64_t>(values.size());
  return tensor<T>(values, IntArrayRef(&n, 1), opts);
}
// A 0-dim tensor holding `value`, of the default dtype unless given (as libtorch's and
// torch.scalar_tensor: scalar_tensor(3) is f32, unlike full({}, 3)).
Tensor scalar_tensor(const Scalar& value, TensorOptions opts = {});
// The 0-dim tensor a Scalar operand becomes inside an op (a binary op's other, where's branch,
// add's alpha): converted to `dtype` as PyTorch converts a wrapped number, integers wrapping,
// with no overflow check (uint8 + 300 adds 44). Not a user-facing factory.
Tensor wrapped_number(const Scalar& value, ScalarType dtype, Device device);

}  // namespace kiln
