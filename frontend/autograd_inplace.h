// kiln/frontend/autograd_inplace.h — internal: autograd around writes that change a tensor's
// contents or device without an op node of their own (frontend/autograd_inplace.cpp).
#pragma once

#include "frontend/tensor.h"

namespace kiln::autograd {

// Before an eager in-place write into `self`: PyTorch's error for a leaf that requires grad (or
// a view of one) under grad mode.
void check_inplace(const Tensor& self);
// After it: counts the write (the storage's version) and, under grad mode, makes `value` (what
// was written, already cast and broadcast to self) self's history: CopyBackwards for a plain
// tensor, CopySlices for a view of a tensor that requires grad (the base's history is rewritten
// and the view reads it).
void after_inplace(const Tensor& self, const Tensor& value);
// Tensor::to(device) with history (its gradient moves back).
Tensor record_device_move(const Tensor& src, const Tensor& moved);
// Tensor::detach() of a traced tensor: a `detach` node, which the transforms do not cross.
Tensor detach_traced(const Tensor& t);

}  // namespace kiln::autograd
