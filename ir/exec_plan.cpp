// kiln/ir/exec_plan.cpp — ExecPlan printing and the buffers each step writes.
#include "ir/exec_plan.h"

#include "ir/graph.h"
#include "ir/text.h"
#include "ir/text_attr.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kiln::ir {

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

}  // namespace

std::vector<int> PlanStep::written() const {
  std::vector<int> w;
  if (kind == StepKind::Kernel) {
    for (size_t i = 0; i < kernel.args.size(); ++i)
      if (kernel.args[i].output) w.push_back(buffers[i]);
  } else {
    const size_t n_out = static_cast<size_t>(op_info(op).schema.num_outputs);
    for (size_t i = buffers.size() - n_out; i < buffers.size(); ++i) w.push_back(buffers[i]);
  }
  return w;
}

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
      const size_t n_out = static_cast<size_t>(op_info(op).schema.num_outputs);
      return fmt::format("{} {}{}({} -> {})", kind == StepKind::Extern ? "extern" : "fallback", op_name(op),
                         lowering.empty() ? "" : " [" + lowering + "]",
                         buffer_list(buffers, 0, buffers.size() - n_out),
                         buffer_list(buffers, buffers.size() - n_out, buffers.size()));
    }
  }
  return "";
}

std::vector<const Kernel*> ExecPlan::kernels() const {
  std::vector<const Kernel*> ks;
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
    if ((b.role == BufferRole::Temp || b.role == BufferRole::Output) &&
        b.strides != contiguous_strides(b.type.sizes))  // channels-last; an updated view's layout
      out += fmt::format(" strides {}", ir::str(b.strides));
    if (b.role == BufferRole::View) out += fmt::format(" = view of b{} strides {}", b.base, ir::str(b.strides));
    if (b.donor_input >= 0) out += fmt::format(" in place of arg{}", b.donor_input);
    out += "\n";
  }
  for (size_t i = 0; i < slots.size(); ++i) out += fmt::format("slot{}: {} bytes\n", i, slots[i].bytes.str());
  if (random_draws > 0) out += fmt::format("random draws: {}\n", random_draws);
  if (!params.empty()) out += fmt::format("params: {}\n", fmt::join(params, ", "));
  for (const PlanStep& st : steps)
    out += st.describe() + (st.kind == StepKind::Kernel ? "" : text::named_attrs_str(st.op, st.attrs)) + "\n";
  std::string outs;
  for (size_t i = 0; i < outputs.size(); ++i) outs += fmt::format("{}b{}", i ? ", " : "", outputs[i].buffer);
  out += "return " + outs + "\n";
  for (const PlanStep& st : steps)
    if (st.kind == StepKind::Kernel) out += "\n" + st.kernel.str();
  return out;
}

}  // namespace kiln::ir
