// kiln/runtime/cuda/cuda_eager.h — eager prims on cuda tensors that no generated kernel computes.
#pragma once

#include "base/device.h"
#include "base/scalar.h"
#include "frontend/tensor.h"
#include "ir/attr.h"
#include "ir/op.h"

#include <cstdint>

#include <vector>

namespace kiln::rt {

// mm/bmm through cuBLASLt; views as metadata (a reshape or as_strided that must copy copies on
// the device first); an op above prim level (attention) as its decomposition, op by op on the
// device; any other prim staged through the host (the cpu's eager op on host copies, the
// results copied back: sort, convolution, indexing the sizes keep out of a kernel; a factory
// only when its memset and generated kernel could not run, after checking that the device
// exists). runtime/eager/eager.h's DeviceEager.
std::vector<Tensor> cuda_eager(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs, Device d);

// The memset that fills a tensor of `dtype` with `value` (converted as full converts it):
// `width` bytes (1, 2 or 4) of `bits` repeated, or width 8: an 8-byte element whose halves
// differ, `bits` then `high` (two strided 32-bit memsets).
struct FillPattern {
  int width = 1;
  uint32_t bits = 0;
  uint32_t high = 0;
};
FillPattern fill_pattern(const Scalar& value, ScalarType dtype);
// runtime/eager/eager.h's DeviceFill: `out` (a fresh cuda tensor) filled by memsets on the
// current stream.
bool cuda_fill(const Tensor& out, const Scalar& value);

}  // namespace kiln::rt
