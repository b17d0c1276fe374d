// kiln/runtime/cuda/cuda_sort.h — the argsort prim on cuda tensors, on kiln's sort kernels (codegen_cuda/cuda_sort_source.h).
//
// Every sort, argsort, topk, median, mode, kthvalue and randperm on a GPU reaches this prim.
// The keys are moved to a contiguous [lines, n] layout in the type they compare in (f16, bf16 ->
// f32, integers and bool -> int64: generated kernels), each line is sorted on the device (tiles
// in shared memory, then merges of sorted runs), and the positions are written into `out`, all
// on the device's current stream. The result is the cpu's, index for index: numbers ascending or
// descending, NaNs last ascending and first descending, ties in their original order. The
// kernels are compiled by NVRTC once per key type and architecture (cached on disk like the
// backend's modules); without NVRTC the call raises "[argsort] ...".
#pragma once

#include "frontend/tensor.h"

namespace kiln::rt {

// out (int64, the self's sizes, on its device, any strides) = argsort(self, dim, descending).
// False, with nothing written, when the launch would not fit the device's grid; the caller then
// runs it on the host.
bool cuda_argsort(const Tensor& self, int64_t dim, bool descending, const Tensor& out);

}  // namespace kiln::rt
