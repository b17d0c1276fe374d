// kiln/passes/donate.cpp — buffer donation (passes/donate.h).
#include "passes/donate.h"

#include "ir/tensor_type.h"

#include <algorithm>
#include <string>

namespace kiln::passes {

using ir::BufferRole;
using ir::ExecPlan;
using ir::KOp;
using ir::StepKind;

namespace {

// Whether `st` refers to buffer b (as an argument or through a view of it).
bool touches(const ExecPlan& plan, const ir::PlanStep& st, int b) {
  for (int x : st.buffers)
    if (x == b || (plan.buffers[x].role == BufferRole::View && plan.buffers[x].base == b)) return true;
  return false;
}

bool accept(ExecPlan& plan, const Donation& d) {
  if (d.output < 0 || d.output >= static_cast<int>(plan.outputs.size())) return false;
  const int out = plan.outputs[d.output].buffer;
  int in = -1;
  for (size_t b = 0; b < plan.buffers.size(); ++b)
    if (plan.buffers[b].role == BufferRole::Input && plan.buffers[b].input_index == d.input) in = static_cast<int>(b);
  if (in < 0 || out < 0) return false;
  const ir::PlanBuffer& ib = plan.buffers[in];
  ir::PlanBuffer& ob = plan.buffers[out];
  // The output is laid out as the input: contiguous, or (a strided view updated in place) the
  // input's own strides, which lowering gave it (LowerOptions::donations).
  if (ob.role != BufferRole::Output || ob.donor_input >= 0 || !(ib.type == ob.type) || ib.strides != ob.strides)
    return false;
  for (const ir::PlanBuffer& b : plan.buffers)
    if (b.role == BufferRole::View && b.base == in) return false;
  for (const ir::PlanOutput& o : plan.outputs)
    if (o.buffer == in) return false;
  // The one step that writes the output, and nothing reading the input after it.
  int writer = -1;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    for (int w : plan.steps[s].written())
      if (w == out) {
        if (writer >= 0) return false;
        writer = static_cast<int>(s);
      }
  }
  if (writer < 0 || plan.steps[writer].kind != StepKind::Kernel) return false;
  for (size_t s = static_cast<size_t>(writer) + 1; s < plan.steps.size(); ++s)
    if (touches(plan, plan.steps[s], in)) return false;
  ir::PlanStep& st = plan.steps[writer];
  const int out_arg = kernel_arg_of(st, out, true), in_arg = kernel_arg_of(st, in, false);
  if (out_arg < 0 || (in_arg >= 0 && !writes_over(st, in_arg, out_arg))) return false;
  if (in_arg >= 0) read_through(st, in_arg, out_arg);
  ob.donor_input = d.input;
  return true;
}

}  // namespace

int kernel_arg_of(const ir::PlanStep& st, int b, bool output) {
  for (size_t i = 0; i < st.buffers.size(); ++i)
    if (st.buffers[i] == b && st.kernel.args[i].output == output) return static_cast<int>(i);
  return -1;
}

bool writes_over(const ir::PlanStep& st, int in_arg, int out_arg) {
  const ir::Kernel& k = st.kernel;
  if (st.kind != StepKind::Kernel || k.stages.size() != 1 || k.stages[0].kind != ir::StageKind::Loop ||
      k.stages[0].ordered)
    return false;
  const ir::KInst* store = nullptr;
  for (const ir::KInst& in : k.stages[0].body) {
    if (in.kind == KOp::Store && in.arg == out_arg) {
      if (store) return false;
      store = &in;
    }
  }
  if (!store) return false;
  // Each iteration writes its own element: the store's position names every loop variable of the
  // stage and no loaded value (a scatter's `v<id>`).
  if (ir::reads_values(store->index)) return false;
  std::vector<std::string> names;
  store->index.collect_symbols(names);
  for (size_t r = 0; r < k.stages[0].extents.size(); ++r)
    if (std::find(names.begin(), names.end(), "r" + std::to_string(r)) == names.end()) return false;
  bool stored = false;
  for (const ir::KInst& in : k.stages[0].body) {
    if (&in == store) stored = true;
    if (in.kind == KOp::Load && in.arg == in_arg && (stored || !(in.index == store->index))) return false;
  }
  return true;
}

void read_through(ir::PlanStep& st, int in_arg, int out_arg) {
  for (ir::KInst& i : st.kernel.stages[0].body)
    if (i.kind == KOp::Load && i.arg == in_arg) i.arg = out_arg;
}

bool donate_buffers(ExecPlan& plan, const std::vector<Donation>& requests) {
  bool changed = false;
  for (const Donation& d : requests) changed = accept(plan, d) || changed;
  return changed;
}

}  // namespace kiln::passes
