// kiln/runtime/cuda/cuda_faults.h — faults of checked kernels on a CUDA device (ir/kernel_abi.h).
//
// A kernel cannot throw and the host does not wait for it, so a failing check on a device
// (an integer division by zero, an index read from data that is out of bounds) is raised
// the way PyTorch raises a device-side assert: at the next synchronization the host makes —
// cuda::synchronize(), a copy to the host (item(), cpu(), printing) — as the op's kiln::Error,
// the same error the cpu raises at once. Each device has one fault record in device memory; a
// checked kernel gets its address and the id it was registered under, and the first failure
// of any launch claims the record. Nothing is read back unless a checked kernel was launched
// since the last look, so programs without checks pay nothing.
#pragma once

#include "ir/kernel.h"

#include <cstdint>

namespace kiln::rt {

// Keeps a copy of `k` and returns the id its launches pass the kernel (kiln_fault_kernel).
int64_t register_checked_kernel(const ir::Kernel& k);
// The device address of `device`'s fault record (four int64, zeroed), made on first use.
void* device_fault_record(int device);
// A checked kernel was queued on `device`.
void note_checked_launch(int device);
// After a synchronization covering the work queued on `device`: when a checked kernel ran
// since the last look, reads the record, and if a check failed clears it and throws that
// check's kiln::Error ("... (reported by a cuda kernel at the next synchronization)").
void raise_pending_faults(int device);

}  // namespace kiln::rt
