// kiln/frontend/autograd_record.h — internal: how dispatch() records history (autograd_record.cpp).
#pragma once

#include "frontend/dispatch.h"
#include "frontend/tensor.h"

#include <vector>

namespace kiln::autograd {

// Whether any input requires grad (one load per input: the no-grad path's only cost).
bool any_requires_grad(const std::vector<Tensor>& inputs);

// Runs `call` (eager inputs, grad mode on, some input requiring grad) and records its history.
std::vector<Tensor> record(const OpCall& call);

// Records the history of `outs`, the results of `call` computed without dispatch (an eager view
// made on the storage itself), as record() would have. `call.op` must have a derivative entry.
std::vector<Tensor> attach_history(const OpCall& call, std::vector<Tensor> outs);

}  // namespace kiln::autograd
