// kiln/passes/online_softmax.h — online_softmax: a row's max and its sum of exponentials in one
// pass over the row (GPU kernels).
//
// Before: a plan's kernels as lowering built them, before schedule_launch. After: the same
// kernels, where a reduce amax stage A is followed by a reduce sum stage B over the same nest
// whose body computes exactly A's yielded value x again and yields exp(x - A): A folds both
// (ir::KStage::sum_exp), so the row is read once for the two. B's stores (softmax stores its
// exponentials, which need the final max) stay behind as a loop stage that computes them again,
// joined into the next loop stage over the same nest when that one reads them back at the same
// elements (softmax's normalization takes them from registers, and their store, which it
// overwrites, is gone). Left alone: a B that reads what a stage between them stores, that
// checks, draws or indexes by data, values of f16 or bf16 (rounded at each step), and a max
// whose infinities B replaces (logsumexp's).
//
// A GPU decision (runtime/cuda/backend_cuda.cpp runs it): a row too wide for registers
// (cross_entropy over 32000 classes) was read from memory twice, and every row paid two block
// reductions. The cpu keeps its two passes: a row there is read back from its caches, and its
// float sums follow a fixed layout of partials (ir::KVectorize) that this would not.
#pragma once

#include "ir/exec_plan.h"
#include "ir/kernel.h"
#include "passes/schedule.h"

namespace kiln::passes {

// Every kernel of the plan, or one kernel; whether anything changed.
bool online_softmax(ir::ExecPlan& plan, const ScheduleTarget& t);
bool online_softmax(ir::Kernel& k, const ScheduleTarget& t);

}  // namespace kiln::passes
