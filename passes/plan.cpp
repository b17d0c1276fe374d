// kiln/passes/plan.cpp — ExecPlan printing and memory planning (slot reuse by lifetime).
#include "passes/lower.h"
#include "passes/plan.h"

#include "base/error.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::passes {

namespace {

std::string_view role_name(BufferRole r) {
  switch (r) {
    case BufferRole::Input: return "input";
    case BufferRole::Temp: return "temp";
    case BufferRole::Output: return "output";
    case BufferRole::View: return "view";
  }
  return "?";
}

std::string buffer_list(const std::vector<int>& ids, size_t from, size_t to) {
  std::string s;
  for (size_t i = from; i < to; ++i) s += fmt::format("{}b{}", i > from ? ", " : "", ids[i]);
  return s;
}

// Steps write their last buffer (kernels: their output arguments).
std::vector<int> written_by(const PlanStep& st) {
  std::vector<int> w;
  if (st.kind == StepKind::Kernel) {
    for (size_t i = 0; i < st.kernel.args.size(); ++i)
      if (st.kernel.args[i].output) w.push_back(st.buffers[i]);
  } else {
    const size_t n_out = static_cast<size_t>(ir::op_info(st.op).schema.num_outputs);
    for (size_t i = st.buffers.size() - n_out; i < st.buffers.size(); ++i) w.push_back(st.buffers[i]);
  }
  return w;
}

// How deeply max() nests in a slot size (each symbolic buffer a slot takes adds one).
int max_nesting(const ir::Expr& e) {
  if (e.kind() != ir::ExprKind::Max) return 0;
  int d = 0;
  for (const ir::Expr& o : e.operands()) d = std::max(d, max_nesting(o));
  return d + 1;
}
constexpr int kMaxSlotTerms = 8;

}  // namespace

std::string PlanStep::describe() const {
  switch (kind) {
    case StepKind::Kernel: {
      std::vector<int> ins, outs;
      for (size_t i = 0; i < kernel.args.size(); ++i) (kernel.args[i].output ? outs : ins).push_back(buffers[i]);
      return fmt::format("kernel {}({} -> {})", kernel.name, buffer_list(ins, 0, ins.size()),
                         buffer_list(outs, 0, outs.size()));
    }
    case StepKind::Extern:
    case StepKind::Fallback: {
      const size_t n_out = static_cast<size_t>(ir::op_info(op).schema.num_outputs);
      return fmt::format("{} {}({} -> {})", kind == StepKind::Extern ? "extern" : "fallback", ir::op_name(op),
                         buffer_list(buffers, 0, buffers.size() - n_out),
                         buffer_list(buffers, buffers.size() - n_out, buffers.size()));
    }
  }
  return "";
}

std::vector<const ir::Kernel*> ExecPlan::kernels() const {
  std::vector<const ir::Kernel*> ks;
  for (const PlanStep& st : steps)
    if (st.kind == StepKind::Kernel) ks.push_back(&st.kernel);
  return ks;
}

std::string ExecPlan::str() const {
  std::string out;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const PlanBuffer& b = buffers[i];
    out += fmt::format("b{}: {} {}", i, role_name(b.role), b.type.str());
    if (b.role == BufferRole::Input) out += fmt::format(" = arg{} strides {}", b.input_index, ir::str(b.strides));
    if (b.role == BufferRole::Temp && b.slot >= 0) out += fmt::format(" in slot{}", b.slot);
    if (b.role == BufferRole::View) out += fmt::format(" = view of b{} strides {}", b.base, ir::str(b.strides));
    out += "\n";
  }
  for (size_t i = 0; i < slots.size(); ++i) out += fmt::format("slot{}: {} bytes\n", i, slots[i].bytes.str());
  for (const PlanStep& st : steps) out += st.describe() + "\n";
  std::string outs;
  for (size_t i = 0; i < outputs.size(); ++i) outs += fmt::format("{}b{}", i ? ", " : "", outputs[i].buffer);
  out += "return " + outs + "\n";
  for (const PlanStep& st : steps)
    if (st.kind == StepKind::Kernel) out += "\n" + st.kernel.str();
  return out;
}

void plan_memory(ExecPlan& plan) {
  const size_t nb = plan.buffers.size();
  std::vector<int> def(nb, -1), last(nb, -1);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    for (int b : written_by(plan.steps[s]))
      if (def[b] < 0) def[b] = static_cast<int>(s);
    for (int b : plan.steps[s].buffers) last[b] = static_cast<int>(s);
  }
  // A view keeps its base alive.
  for (size_t b = 0; b < nb; ++b)
    if (plan.buffers[b].role == BufferRole::View) last[plan.buffers[b].base] = std::max(last[plan.buffers[b].base], last[b]);
  struct SlotState {
    int free_after = -1;  // the step after which the slot's current buffer is dead
  };
  std::vector<SlotState> state;
  plan.slots.clear();
  // Buffers in order of definition; each takes a dead slot of its own size, else the first
  // dead slot, which grows to hold both: max(have, bytes), an Expr evaluated per call when
  // the sizes are symbolic (their relative size is unknown until then), so a slot is always
  // as large as every buffer it holds, for every value of the symbols.
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    for (int b : written_by(plan.steps[s])) {
      PlanBuffer& buf = plan.buffers[b];
      if (buf.role != BufferRole::Temp || def[b] != static_cast<int>(s) || buf.slot >= 0) continue;
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
      state[chosen].free_after = std::max(last[b], static_cast<int>(s));
    }
  }
}

}  // namespace kiln::passes
