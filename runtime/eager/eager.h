// kiln/runtime/eager/eager.h — eager execution of prims on compiled, shape-generic kernels.
//
// Outside compile(), dispatch() sends every prim here. Pointwise prims, casts and reductions
// run as a one-node graph compiled once into a kernel whose sizes (and strides, unless the
// layout is contiguous) are read at run time, cached by (op, attributes, dtypes, rank, layout
// class of each input). Layout classes: contiguous, unit stride in the last dim, general.
// Prims the cpu computes with a library kernel (matmul, convolution, scans, indexing, random,
// cat) call it directly; the rest (views, which are metadata only, factories, pad) run on the
// reference interpreter. On a cuda device, factories fill memory on the device (a memset, else
// a generated kernel), and what no generated kernel computes goes to the device's runtime
// (install_device_eager). A warm pointwise call on
// inputs of one shape skips validation (the cached kernel's build validated its dtypes and
// attributes) and reuses the program's working vectors: about 0.8 µs for a 1-element a + b.
// Composite ops (softmax, layer_norm, ...) run as one compiled program each
// (runtime/eager/eager_composite.cpp).
#pragma once

#include "base/device.h"
#include "base/scalar.h"
#include "frontend/dispatch.h"
#include "frontend/tensor.h"
#include "ir/attr.h"
#include "ir/op.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace kiln::rt {

std::vector<Tensor> eager_execute(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs);

struct EagerStats {
  int64_t kernels_compiled = 0;  // distinct (op, attrs, dtypes, rank, layout) kernels built
  int64_t compiled_calls = 0;    // calls that ran a compiled kernel
  int64_t interpreted_calls = 0; // calls that ran on the interpreter
  int64_t composite_programs = 0;  // composite ops' calls that ran one compiled program
  int64_t composite_decomposed = 0;  // composite ops' calls that ran their decomposition
  int64_t kernels_evicted = 0;   // kernels dropped to keep the cache within its bound
};
EagerStats eager_stats();

// How a device's runtime runs a prim on its tensors that no generated kernel computes
// (runtime/cuda/cuda_eager.cpp: cuBLASLt, views, the rest staged through the host);
// installed at start-up (runtime/wiring.cpp).
using DeviceEager = std::vector<Tensor> (*)(ir::OpKind op, const std::vector<Tensor>& inputs,
                                            const ir::AttrList& attrs, Device device);
void install_device_eager(DeviceEager fn);
// How a device's runtime fills a fresh tensor of its own with one value without a kernel (a
// memset of the value's bit pattern); false when it cannot (a pattern no memset writes), and a
// factory kernel fills it instead.
using DeviceFill = bool (*)(const Tensor& out, const Scalar& value);
void install_device_fill(DeviceFill fn);
// full and iota as generated kernels on `device` (a factory on a cuda device that its fill does
// not serve; tests run it on the cpu, whose eager factories run on the interpreter): one kernel
// per dtype and full value, shape-generic; iota at any start and step from iota(0, 1).
Tensor generated_factory(ir::OpKind op, const ir::AttrList& attrs, Device device);
// Tensor::copy_ into a strided view `dst` (a column of a matrix) as a generated kernel that stores
// src's values, converted to dst's dtype, with dst's strides straight into dst's memory (a
// one-node program whose output input 0 donates, passes/donate.h): the cuda runtime's copy into
// a strided device view. src has dst's sizes and device (expand it first) and must not share
// dst's memory. Returns the program's output: dst itself, or a separate tensor holding the
// values when the memory could not be donated (the caller copies it then).
Tensor eager_copy_into(const Tensor& dst, const Tensor& src);
// Tests: the eager kernel cache keeps at most `kernels` entries (0: the default bound, 4096).
void set_eager_cache_capacity_for_testing(size_t kernels);
// A composite or core op run eagerly as one compiled program where it can (on a first call of
// its key, or where it cannot: its decomposition, and true), else false (frontend/dispatch.h's
// EagerComposite; runtime/eager/eager_composite.cpp).
bool run_eager_composite(const OpCall& call, std::vector<Tensor>& out);
// The composite half of eager_stats (runtime/eager/eager_composite.cpp): {programs, decomposed}.
std::pair<int64_t, int64_t> eager_composite_counts();

}  // namespace kiln::rt
