// kiln/runtime/cuda/cuda_eager.h — eager prims on cuda tensors that no generated kernel computes.
#pragma once

#include "base/device.h"
#include "frontend/tensor.h"
#include "ir/attr.h"
#include "ir/op.h"

#include <vector>

namespace kiln::rt {

// mm/bmm through cuBLASLt; views as metadata (a reshape or as_strided that must copy copies on
// the device first); a factory on a device that exists; an op above prim level (attention) as
// its decomposition, op by op on the device; any other prim staged through the host
// (the cpu's eager op on host copies, the results copied back: cat, pad, sort, scans, indexing,
// random draws, which thus follow the cpu's Philox stream). runtime/eager/eager.h's DeviceEager.
std::vector<Tensor> cuda_eager(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs, Device d);

}  // namespace kiln::rt
