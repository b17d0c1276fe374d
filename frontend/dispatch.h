// kiln/frontend/dispatch.h — the one path every prim call takes.
//
// An OpCall names a prim, its tensor inputs (schema order) and its attributes. dispatch()
// records a node when any input is traced (frontend/tracer.h); otherwise it runs the op
// eagerly: a prim on the executor the runtime installs, a composite op through its
// decomposition, a custom op through its eager implementation.
#pragma once

#include "frontend/tensor.h"
#include "ir/attr.h"
#include "ir/op.h"

#include <vector>

namespace kiln {

struct OpCall {
  ir::OpKind op;
  std::vector<Tensor> inputs;
  ir::AttrList attrs;
  // Outputs the caller discards (bit i: output i), a hint for eager programs: an eager
  // composite runs as a program that leaves them out (max pooling's indices in inference), and
  // returns them undefined. Traces record every output (dead ones are removed by dce), and
  // calls that record autograd history compute them all.
  uint32_t unused_outputs = 0;
};

std::vector<Tensor> dispatch(OpCall call);
// An op's result is never one of its inputs itself. A decomposition may leave its input as it
// is (logsumexp of a 0-dim f64 tensor is that tensor), and autograd would then write the op's
// history into the input: a leaf stopped being one and lost the gradients of its other uses.
// Replaces such an output with a copy (a fresh view, alias(), for a view op), as PyTorch's op
// would give; under grad mode the copy records its own history.
void distinct_from_inputs(const OpCall& call, std::vector<Tensor>& out);
// The eager path of a composite (non-prim) op on eager, already validated inputs: runs its
// decomposition (frontend/decompositions.h), each prim of which dispatches as usual.
std::vector<Tensor> run_composite_eager(const OpCall& call);
// How a prim runs eagerly on cpu tensors (validated, shapes inferred). The runtime installs
// its compiled-kernel executor when the library loads (runtime/eager/eager.cpp), so the frontend
// reaches execution without including the runtime.
using EagerExecutor = std::vector<Tensor> (*)(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs);
void install_eager_executor(EagerExecutor fn);
// The warm path of an eager pointwise prim, tried before validation: runs the op and returns
// true only when the executor already holds a kernel for exactly this op, attributes, dtypes
// and layout, built after the op's shape function accepted them, and the inputs are cpu
// tensors of one shape (so validation could not fail). Otherwise returns false and the full
// path runs. Installed by the runtime (runtime/eager/eager.cpp).
using EagerFastPath = bool (*)(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs,
                               std::vector<Tensor>& out);
void install_eager_fast_path(EagerFastPath fn);
// How a composite or core op (validated, no library kernel) may run eagerly as one compiled
// program rather than its decomposition op by op: returns true with the results, or false and
// the decomposition runs. Installed by the runtime (runtime/eager/eager_composite.cpp).
using EagerComposite = bool (*)(const OpCall& call, std::vector<Tensor>& out);
void install_eager_composite(EagerComposite fn);

// How Tensor::copy_ writes `src` (same sizes, any strides and dtype) into `dst` in place;
// also installed by the runtime (the interpreter's strided loop).
using CopyKernel = void (*)(const Tensor& dst, const Tensor& src);
void install_copy_kernel(CopyKernel fn);
void run_copy_kernel(const Tensor& dst, const Tensor& src);

// How Tensor::to moves a tensor to another device (the devices differ); installed by the
// runtime (runtime/cuda/cuda_device.cpp), which knows whether a CUDA driver and device exist.
using DeviceMover = Tensor (*)(const Tensor& src, Device to);
void install_device_mover(DeviceMover fn);
DeviceMover installed_device_mover();

// For ops with exactly one output.
Tensor dispatch1(ir::OpKind op, std::vector<Tensor> inputs, std::vector<ir::AttrValue> attrs = {});

}  // namespace kiln
