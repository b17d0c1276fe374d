// kiln/runtime/compile/compile_export.h — one compile() entry, taken apart for export.
//
// runtime/export/export.cpp writes an exported program from what compile() builds for one
// signature: the execution plan, where each plan parameter comes from, the guards and the
// captured tensors (weights), which a call passes after the arguments. The trace is
// compile()'s own (static, except the dims named dynamic), so an exported program computes
// what the compiled function computes.
#pragma once

#include "guards/guard_set.h"
#include "ir/exec_plan.h"
#include "passes/schedule.h"
#include "runtime/compile/compile.h"
#include "runtime/program.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace kiln::detail {

struct CompiledForExport {
  ir::ExecPlan plan;
  std::vector<rt::ParamSource> params;  // per plan parameter, in the plan's order
  guards::GuardSet guards;
  std::vector<Tensor> lifted;  // captured tensors, passed after the arguments
};

// Traces fn on args for the cpu backend with the (argument, dim) pairs in `dynamic` symbolic
// and every other dim static, its kernels scheduled for `target` (an x86-64 level's vector
// registers, base/cpu_level.h), or planned by another backend ("cuda"). The program is planned,
// not compiled: the exporter compiles its kernels for each of its targets (no device needed). A function that cannot run as one program is a kiln::Error
// naming why: its trace reaches a data-dependent op, it updates an argument or captured
// tensor in place, a tensor requires grad under grad mode, or a dim declared dynamic was
// specialized by the trace (its size is 0 or 1, or the function depends on its value).
CompiledForExport compile_for_export(const TraceFn& fn, const std::vector<ArgValue>& args, CompileOptions opts,
                                     const std::vector<std::pair<size_t, int64_t>>& dynamic,
                                     const passes::ScheduleTarget& target, const std::string& backend = "cpu");

}  // namespace kiln::detail
