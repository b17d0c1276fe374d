// kiln/frontend/from_blob.h — tensors over memory kiln does not own, as torch::from_blob.
//
// The tensor reads and writes the caller's memory in place: nothing is copied. With a deleter,
// the tensor (and every view of it) keeps the memory, and the deleter runs once the last of
// them goes (it must not throw); without one, the caller keeps the memory alive for as long as
// any of them is used.
// The pointer must be aligned to the element size (kiln's kernels load whole elements), the
// sizes and strides non-negative; a cuda device takes a device pointer. DLPack's import
// (io/dlpack.h) builds on this.
#pragma once

#include "frontend/tensor.h"

#include <functional>

namespace kiln {

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, std::function<void(void*)> deleter,
                 TensorOptions options = {});
Tensor from_blob(void* data, IntArrayRef sizes, std::function<void(void*)> deleter, TensorOptions options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions options = {});
Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions options = {});

}  // namespace kiln
