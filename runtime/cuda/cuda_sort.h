// kiln/runtime/cuda/cuda_sort.h — the argsort prim on cuda tensors, on kiln's sort kernels (codegen_cuda/cuda_sort_source.h).
//
// Every sort, argsort, topk, median, mode, kthvalue and randperm on a GPU reaches this prim.
// The keys are moved to a contiguous [lines, n] layout in the type they compare in (f16, bf16 ->
// f32, integers and bool -> int64: generated kernels), each line is sorted on the device (tiles
// in shared memory, then merges of sorted runs), and the positions are written into `out`, all
// on the device's current stream. The result is the cpu's, index for index: numbers ascending or
// descending, NaNs last ascending and first descending, ties in their original order. The
// kernels come from an exported package that carries them (use_sort_images), the compile cache,
// or NVRTC, once per key type and device; with none of these the step returns false and the
// caller sorts on the host.
#pragma once

#include "frontend/tensor.h"

#include <string>
#include <vector>

namespace kiln::rt {

// out (int64, the self's sizes, on its device, any strides) = argsort(self, dim, descending).
// False, with nothing written, when the launch would not fit the device's grid or the kernels
// cannot be had (no NVRTC and none cached); the caller then runs it on the host.
bool cuda_argsort(const Tensor& self, int64_t dim, bool descending, const Tensor& out);

// The sort modules of a loaded package for `device` (float, double and long long images, as
// runtime/export/cuda_code.h writes them), used before the cache and NVRTC.
void use_sort_images(int device, const std::vector<std::string>& images);

}  // namespace kiln::rt
