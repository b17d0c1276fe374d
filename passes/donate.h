// kiln/passes/donate.h — buffer donation: an output that replaces an input (an argument updated
// in place, which compile() writes back) is computed straight into the input's memory, as XLA's
// input/output aliasing and PyTorch's buffer donation do, instead of into a fresh tensor that is
// then copied back.
//
// Before: a planned ExecPlan (plan_memory ran). After: the same steps; an accepted output
// buffer has donor_input set, and the kernel that writes it reads the input through the
// output's argument (one pointer, so the code generator's no-alias facts stay true).
// A request is accepted when the write cannot be observed early:
//   - the output is written by one kernel of one loop stage (pointwise), which stores it once,
//     at the same index at which it loads the input, after every such load;
//   - no step after that kernel reads the input, no view is made of it and no output is it;
//   - the input has the output's type and layout: contiguous, or the strides of a view that
//     lowering gave the output it replaces (LowerOptions::donations).
// Whether the memory is really shared is decided per call (runtime/program.cpp): an input whose
// storage another input shares is copied instead.
#pragma once

#include "ir/exec_plan.h"

#include <vector>

namespace kiln::passes {

struct Donation {
  int input = -1;   // graph input index
  int output = -1;  // graph output index (ExecPlan::outputs)
  // The caller checks, on each call, that a strided input does not overlap itself (symbolic
  // strides are then allowed to give the output its layout: passes/lower.h).
  bool checked_at_run_time = false;
};

// Returns whether any request was accepted.
bool donate_buffers(ir::ExecPlan& plan, const std::vector<Donation>& requests);

// Writing over what a kernel reads, the test donation and the memory planner's in-place reuse of
// a dying temporary (passes/plan.cpp) share:
// The position of buffer b among kernel step st's arguments of that direction, or -1.
int kernel_arg_of(const ir::PlanStep& st, int b, bool output);
// Whether kernel step st may store argument out_arg into in_arg's memory: it is one loop stage
// (pointwise, not ordered) that stores out_arg once, at the index at which it loads in_arg, after
// every such load, and that index names every loop variable of the stage and no loaded value, so
// each iteration writes its own element and none is overwritten before it is read.
bool writes_over(const ir::PlanStep& st, int in_arg, int out_arg);
// Makes st load in_arg through out_arg: one pointer for both, so the code generator's no-alias
// facts on the arguments stay true.
void read_through(ir::PlanStep& st, int in_arg, int out_arg);

}  // namespace kiln::passes
