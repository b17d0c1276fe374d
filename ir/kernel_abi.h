// kiln/ir/kernel_abi.h — what a kernel reports when one of its checks fails.
//
// Generated code cannot throw. A kernel with Check instructions (ir/kernel.h) receives one
// extra pointer after its buffers: a KernelFault the caller zeroed before the launch. The
// first failing check (in any thread or block) claims it by swapping `site` from 0 to its
// number — 1 + its position in check_sites(k) — and then writes the offending value and the
// bound it was checked against. After the launch (the cpu, at once; cuda, at the next
// synchronization) the backend raises the check's op error from it, the same kiln::Error the
// reference interpreter raises: "[div] ZeroDivisionError", "[gather] index 7 is out of bounds
// for dimension 1 with size 5".
#pragma once

#include "ir/kernel.h"

#include <cstdint>
#include <string>

namespace kiln::ir {

using KernelFn = void (*)(void* const* args, const int64_t* params, int64_t begin, int64_t end);

struct KernelFault {
  int64_t site = 0;    // 0: no fault; else 1 + the failing check's index in check_sites
  int64_t value = 0;   // the checked value
  int64_t bound = 0;   // InBounds: the bound it was checked against
  int64_t kernel = 0;  // cuda: the id the launcher gave the kernel (one record serves a device)
};
static_assert(sizeof(KernelFault) == 32, "generated code writes KernelFault as four int64s");

// The op's error for fault `f` of kernel `k` ("[op] ..."); an internal error for a site the
// kernel does not have.
std::string kernel_fault_message(const Kernel& k, const KernelFault& f);
// Throws kiln::Error with kernel_fault_message.
[[noreturn]] void raise_kernel_fault(const Kernel& k, const KernelFault& f);

}  // namespace kiln::ir
