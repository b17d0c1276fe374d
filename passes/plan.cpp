// kiln/passes/plan.cpp — memory planning: temporaries share slots by lifetime, and a pointwise
// kernel writes over a temporary that dies where it reads it.
#include "passes/lower.h"

#include "base/error.h"
#include "passes/donate.h"

#include <algorithm>
#include <set>
#include <string>

namespace kiln::passes {

using ir::BufferRole;
using ir::ExecPlan;
using ir::PlanBuffer;
using ir::PlanStep;
using ir::StepKind;
using ir::MemorySlot;
using ir::Expr;

namespace {

// How deeply max() nests in a slot size (each symbolic buffer a slot takes adds one).
int max_nesting(const ir::Expr& e) {
  if (e.kind() != ir::ExprKind::Max) return 0;
  int d = 0;
  for (const ir::Expr& o : e.operands()) d = std::max(d, max_nesting(o));
  return d + 1;
}
constexpr int kMaxSlotTerms = 8;

// The argument of kernel step `st` (at position s) whose memory temp `b` can take: a temp of b's
// type and strides that dies at this step, passed once and through no view, which the kernel
// reads only where it writes b (passes/donate.h, writes_over). A pointwise kernel after a
// product (bias and activation) then writes over the product's result: one buffer less to
// touch, as TorchInductor's in-place buffer reuse does. -1 when there is none.
int in_place_input(const ExecPlan& plan, const PlanStep& st, int b, int s, const std::vector<int>& last) {
  if (st.kind != StepKind::Kernel) return -1;
  const int out_arg = kernel_arg_of(st, b, true);
  if (out_arg < 0) return -1;
  const PlanBuffer& out = plan.buffers[b];
  for (size_t i = 0; i < st.buffers.size(); ++i) {
    const int x = st.buffers[i];
    const PlanBuffer& in = plan.buffers[x];
    if (st.kernel.args[i].output || in.role != BufferRole::Temp || in.slot < 0 || last[x] != s || !(in.type == out.type) ||
        in.strides != out.strides)
      continue;
    const auto refers = [&](int y) { return y == x || (plan.buffers[y].role == BufferRole::View && plan.buffers[y].base == x); };
    if (std::count_if(st.buffers.begin(), st.buffers.end(), refers) != 1) continue;
    if (writes_over(st, static_cast<int>(i), out_arg)) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

void plan_memory(ExecPlan& plan) {
  const size_t nb = plan.buffers.size();
  std::vector<int> def(nb, -1), last(nb, -1);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    for (int b : plan.steps[s].written())
      if (def[b] < 0) def[b] = static_cast<int>(s);
    for (int b : plan.steps[s].buffers) last[b] = static_cast<int>(s);
  }
  // A view keeps its base alive.
  for (size_t b = 0; b < nb; ++b)
    if (plan.buffers[b].role == BufferRole::View) last[plan.buffers[b].base] = std::max(last[plan.buffers[b].base], last[b]);
  struct SlotState {
    int free_after = -1;  // the step after which the slot's current buffer is dead
    int holder = -1;      // that buffer
  };
  std::vector<SlotState> state;
  plan.slots.clear();
  // Buffers in order of definition; each takes a dead slot of its own size, else the first
  // dead slot, which grows to hold both: max(have, bytes), an Expr evaluated per call when
  // the sizes are symbolic (their relative size is unknown until then), so a slot is always
  // as large as every buffer it holds, for every value of the symbols.
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    for (int b : plan.steps[s].written()) {
      PlanBuffer& buf = plan.buffers[b];
      if (buf.role != BufferRole::Temp || def[b] != static_cast<int>(s) || buf.slot >= 0) continue;
      if (const int over = in_place_input(plan, plan.steps[s], b, static_cast<int>(s), last); over >= 0) {
        const int held = plan.buffers[plan.steps[s].buffers[over]].slot;
        if (state[held].holder == plan.steps[s].buffers[over]) {
          read_through(plan.steps[s], over, kernel_arg_of(plan.steps[s], b, true));
          buf.slot = held;
          state[held] = {std::max(last[b], static_cast<int>(s)), b};
          continue;
        }
      }
      const ir::Expr bytes = buf.type.numel() * ir::Expr(static_cast<int64_t>(element_size(buf.type.dtype)));
      int chosen = -1;
      for (size_t k = 0; k < plan.slots.size(); ++k) {
        if (state[k].free_after >= static_cast<int>(s)) continue;
        if (plan.slots[k].bytes == bytes) {
          chosen = static_cast<int>(k);
          break;
        }
        // A slot's size stays a small expression (the runtime evaluates it on every call).
        if (chosen < 0 && max_nesting(plan.slots[k].bytes) < kMaxSlotTerms) chosen = static_cast<int>(k);
      }
      if (chosen >= 0 && plan.slots[chosen].bytes != bytes) plan.slots[chosen].bytes = ir::max(plan.slots[chosen].bytes, bytes);
      if (chosen < 0) {
        plan.slots.push_back({bytes});
        state.push_back({});
        chosen = static_cast<int>(plan.slots.size() - 1);
      }
      buf.slot = chosen;
      state[chosen] = {std::max(last[b], static_cast<int>(s)), b};
    }
  }
  // Parameters: every symbol a kernel, a buffer's size or strides, a slot or the attributes
  // of an extern/fallback step (a random op's symbolic size) reads at run time.
  std::set<std::string> params;
  auto add = [&](const Expr& e) {
    std::vector<std::string> syms;
    e.collect_symbols(syms);
    params.insert(syms.begin(), syms.end());
  };
  for (const PlanStep& st : plan.steps) {
    if (st.kind == StepKind::Kernel) {
      params.insert(st.kernel.params.begin(), st.kernel.params.end());
      continue;
    }
    for (const ir::AttrValue& a : st.attrs.values()) {
      if (const auto* e = std::get_if<Expr>(&a)) add(*e);
      if (const auto* list = std::get_if<std::vector<Expr>>(&a))
        for (const Expr& e : *list) add(e);
    }
  }
  for (const PlanBuffer& b : plan.buffers) {
    for (const Expr& e : b.type.sizes) add(e);
    for (const Expr& e : b.strides) add(e);
  }
  for (const MemorySlot& m : plan.slots) add(m.bytes);
  plan.params.assign(params.begin(), params.end());
}

}  // namespace kiln::passes
