// kiln/io/dlpack.h — tensors across library boundaries without copies, through DLPack.
//
// to_dlpack(t) hands out a DLManagedTensor that views t's memory (its sizes, strides and
// dtype) and keeps it alive until the receiver calls the managed tensor's deleter. from_dlpack
// takes one from another library (PyTorch's `torch.utils.dlpack.to_dlpack`, NumPy, JAX, CuPy)
// and returns a tensor over its memory; the producer's deleter runs when the last kiln tensor
// using it goes. Only when from_dlpack raises does the managed tensor stay the caller's.
// Devices: cpu and cuda. Dtypes: bool, uint8, int8/16/32/64, float16, bfloat16, float32/64,
// one lane each. DLPack's own header (dlpack/dlpack.h, version 0.6 and later) declares the
// struct; this header only names it.
#pragma once

#include "frontend/tensor.h"

struct DLManagedTensor;

namespace kiln {

DLManagedTensor* to_dlpack(const Tensor& t);
Tensor from_dlpack(DLManagedTensor* managed);

}  // namespace kiln
