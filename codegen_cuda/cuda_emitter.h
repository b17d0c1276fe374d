// kiln/codegen_cuda/cuda_emitter.h — renders an ir::Kernel as CUDA C source for NVRTC.
//
// The emitter only prints: every decision (fusion, loop order, the schedule) was made by the
// passes that built the Kernel. The generated kernel is
//
//   struct <name>_params { kiln_i64 v[max(1, P)]; };
//   extern "C" __global__ void <name>(<T>* in0, ..., <T>* out0, ..., const <name>_params params, kiln_i64 grid0)
//
// one typed pointer per ir::KernelArg in order (`const` for inputs; f16 as __half, bf16 as
// __nv_bfloat16, bool as unsigned char), for a kernel with Check instructions then
// `kiln_i64* kiln_fault, kiln_i64 kiln_fault_kernel` (the device's ir::KernelFault record, as
// four int64s, and the id its launcher gave the kernel), for a kernel that draws random numbers
// (reads_rng_slot) then `const kiln_i64* kiln_rng`: null, or the device address of the call's
// {seed, base}, read in place of the parameters rng_seed and rng_base (a CUDA graph's replays
// write them there, runtime/cuda/cuda_graphs.h), then the P int64 parameters by value (`params.v[i]`
// is the runtime value of k.params[i]; the launch passes a pointer to P int64s), then `grid0`, the number of points of the grid (the product of the
// grid extents evaluated on the host; 1 for an empty grid). Launch geometry, by the kernel's
// launch schedule (ir::KLaunch, set by passes/schedule_launch.cpp; a kernel without one is an
// InternalError):
//  - ThreadPerPoint (pointwise kernels, and the outer_reduction_tile schedule): any 1-D launch;
//    each thread takes grid points in a grid-stride loop over the flattened grid (last grid
//    dimension fastest, so neighbouring threads touch neighbouring elements) and runs every
//    stage itself, reductions included.
//    With KLaunch::vector = N a thread takes N consecutive points of the last dimension; with
//    KLaunch::row_split = R (column sums) a block is threads/R columns by R row groups.
//  - BlockPerPoint (kernels with a stage that has a loop nest): blockDim.x a multiple of 32,
//    at most 1024; each block takes grid points in a grid-stride loop over blocks, its threads
//    stride over each stage's flattened loop nest, and reduce stages combine per-thread
//    partials with warp shuffles and a shared-memory block reduction whose result every
//    thread reads. The combination order is fixed for a given blockDim (deterministic).
// No CUDA header is needed to include this file.
#pragma once

#include "ir/kernel.h"

#include <string>
#include <vector>

namespace kiln::cuda {

// The CUDA C source of `k` (a self-contained translation unit: the device prelude, then the
// kernel). Throws InternalError for a kernel that does not verify or uses an op/dtype pair
// that no prim accepts.
std::string emit_cuda(const ir::Kernel& k);

// Whether `k` draws random numbers: its parameters include ir::kRandomSeedParam or
// ir::kRandomBaseParam, and it takes the `kiln_rng` argument (above).
bool reads_rng_slot(const ir::Kernel& k);

// A kernel in a module of its own (an exported package's images), its entry point called
// kModuleEntry: the source, and with it the cubin's cache key, then depends on the kernel alone
// and not on its plan's name (a process-wide counter). emit_module is emit_cuda of `k` so renamed.
inline constexpr const char* kModuleEntry = "k";
std::string emit_module(const ir::Kernel& k);

// All of a compilation's kernels in one translation unit, so one NVRTC run, one cubin, one
// cache entry and one module load serve them: the prelude once, then each kernel renamed
// module_entry(i) ("k0", "k1", ...) by its position, so that the source depends on the kernels
// and their order alone.
std::string module_entry(size_t i);
std::string emit_program_module(const std::vector<const ir::Kernel*>& kernels);

}  // namespace kiln::cuda
