// kiln/runtime/compile/compiled_backward.cpp — training entries of compiled functions
// (runtime/compile/compiled_backward.h): the joint trace, the partition, and the grad_fn that runs the
// compiled backward.
#include "runtime/compile/compiled_backward.h"

#include "base/error.h"
#include "frontend/autograd.h"
#include "frontend/autograd_meta.h"
#include "frontend/function_transforms.h"
#include "frontend/ops_factory.h"
#include "frontend/symbolic.h"
#include "frontend/tracer.h"
#include "ir/shape_env.h"
#include "ir/text.h"
#include "passes/partition.h"
#include "runtime/backend.h"
#include "runtime/log.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

namespace kiln::rt {

std::function<std::vector<Tensor>(const std::vector<Tensor>&)> joint_trace_fn(
    std::function<std::vector<Tensor>(const std::vector<Tensor>&)> fn, std::vector<bool> requires_grad,
    JointInfo* info) {
  return [fn = std::move(fn), requires_grad = std::move(requires_grad), info](const std::vector<Tensor>& traced) {
    std::vector<Tensor> primals;
    info->grad_args.clear();
    for (size_t k = 0; k < traced.size(); ++k)
      if (k < requires_grad.size() && requires_grad[k]) {
        primals.push_back(traced[k]);
        info->grad_args.push_back(k);
      }
    // The function on the primals, the other arguments as they are.
    auto on_primals = [&](const std::vector<Tensor>& p) {
      std::vector<Tensor> args = traced;
      for (size_t i = 0; i < p.size(); ++i) args[info->grad_args[i]] = p[i];
      return fn(args);
    };
    CapturedVjp c = vjp_with_captured(on_primals, primals);
    const std::vector<Tensor>& outs = c.vjp.outputs;
    info->num_outputs = outs.size();
    info->output_differentiable = c.output_differentiable;
    info->grad_captured = c.captured;
    Tracer* tracer = Tracer::current();
    if (!tracer) internal_fail("joint_trace_fn runs under a trace");
    std::vector<Tensor> cot(outs.size());
    info->cotangents.clear();
    for (size_t j = 0; j < outs.size(); ++j) {
      if (!c.output_differentiable[j]) continue;
      cot[j] = tracer->add_input(outs[j].impl()->value()->type(), fmt::format("cotangent{}", j));
      info->cotangents.push_back(cot[j].impl()->value());
    }
    std::vector<Tensor> grads = c.vjp.pullback(cot);
    std::vector<Tensor> result = outs;
    result.insert(result.end(), grads.begin(), grads.end());
    return result;
  };
}

namespace {

// The symbols in a graph's types and attributes.
void collect_symbols(const ir::Expr& e, std::set<std::string>& out) {
  std::vector<std::string> names;
  e.collect_symbols(names);
  out.insert(names.begin(), names.end());
}

std::set<std::string> symbols_of(const ir::Graph& g) {
  std::set<std::string> out;
  auto of_type = [&](const ir::TensorType& t) {
    for (const ir::Expr& e : t.sizes) collect_symbols(e, out);
  };
  for (const ir::Value* v : g.inputs()) of_type(v->type());
  for (const ir::Node* n : g.nodes()) {
    for (const ir::Value* o : n->outputs()) of_type(o->type());
    for (const ir::AttrValue& a : n->attrs().values()) {
      if (const ir::Expr* e = std::get_if<ir::Expr>(&a)) collect_symbols(*e, out);
      if (const auto* es = std::get_if<std::vector<ir::Expr>>(&a))
        for (const ir::Expr& e : *es) collect_symbols(e, out);
    }
  }
  return out;
}

int64_t hinted_bytes(const ir::Value& v, const std::map<std::string, int64_t>& hints) {
  int64_t n = static_cast<int64_t>(element_size(v.type().dtype));
  for (const ir::Expr& e : v.type().sizes) n *= e.is_const() ? e.as_const() : e.evaluate(hints);
  return n;
}

}  // namespace

std::unique_ptr<TrainingProgram> build_training(const std::shared_ptr<ir::Graph>& joint, JointInfo info,
                                                size_t num_arg_tensors, const std::vector<Tensor>& lifted,
                                                const std::vector<std::pair<size_t, const ir::Value*>>& writebacks,
                                                const Backend& be, DriverOptions fwd) {
  auto p = std::make_unique<TrainingProgram>();
  if (fwd.keep_text || !fwd.dump_dir.empty()) p->joint_text = ir::print_graph(*joint, ir::ShapeEnv::current());
  p->joint_graph = joint;
  p->symbols = fwd.params;
  {
    std::vector<size_t> differentiable;  // the results that have cotangents, in order
    for (size_t j = 0; j < info.output_differentiable.size(); ++j)
      if (info.output_differentiable[j]) differentiable.push_back(j);
    int64_t forward_input = 0;
    for (const ir::Value* v : joint->inputs()) {
      auto c = std::find(info.cotangents.begin(), info.cotangents.end(), v);
      p->joint_inputs.push_back(c == info.cotangents.end()
                                    ? forward_input++
                                    : -static_cast<int64_t>(differentiable.at(static_cast<size_t>(c - info.cotangents.begin()))) - 1);
    }
    for (const ir::Node* n : joint->nodes())
      if (n->info().has(ir::traits::Random) || n->info().family == ir::OpFamily::Dropout)
        p->no_replay = fmt::format("it draws random numbers ({})", n->info().name);
  }
  if (!fwd.dump_dir.empty()) debug_dump(fwd.dump_dir, "joint.kir", p->joint_text);
  passes::PartitionSpec spec;
  spec.num_forward_outputs = info.num_outputs;
  spec.num_backward_outputs = info.grad_args.size() + info.grad_captured.size();
  spec.backward_inputs = info.cotangents;
  for (const auto& [input, value] : writebacks) {
    p->writebacks.push_back(input);
    spec.extra_forward_outputs.push_back(value);
  }
  const std::map<std::string, int64_t> hints = fwd.hints;
  spec.bytes = [&hints](const ir::Value& v) { return hinted_bytes(v, hints); };
  passes::Partition part = passes::partition_joint(*joint, spec);
  p->num_saved = part.num_saved;
  p->saved_bytes_at_trace = part.saved_bytes;
  p->partition_report = part.report;
  if (!fwd.dump_dir.empty()) debug_dump(fwd.dump_dir, "partition.txt", part.report);

  for (size_t k : info.grad_args) p->grad_inputs.push_back(k);
  for (const Tensor& t : info.grad_captured) {
    size_t at = 0;
    while (at < lifted.size() && lifted[at].impl() != t.impl()) ++at;
    if (at == lifted.size()) internal_fail("compiled backward: a differentiated captured tensor was not lifted");
    p->grad_inputs.push_back(num_arg_tensors + at);
  }

  // The backward's symbols: from its inputs' dims where one is exactly the symbol, else from a
  // carrier input (a stride-0 vector of that length) sized from the forward's inputs.
  DriverOptions bwd = fwd;
  bwd.name = fwd.name + "_backward";
  bwd.example_inputs.clear();
  bwd.input_strides.clear();
  if (!fwd.dump_dir.empty()) {
    bwd.dump_dir = fwd.dump_dir + "/backward";
    std::error_code ec;
    std::filesystem::create_directories(bwd.dump_dir, ec);
  }
  bwd.params = params_from_inputs(*part.backward);
  for (const std::string& s : symbols_of(*part.backward)) {
    if (bwd.params.count(s)) continue;
    auto src = fwd.params.find(s);
    if (src == fwd.params.end()) internal_fail("compiled backward: symbol {} has no source", s);
    part.backward->add_input(ir::TensorType(ScalarType::Float, {ir::Expr::symbol(s)}), "size_" + s);
    bwd.params[s] = ParamSource{static_cast<int>(part.backward->inputs().size() - 1), 0, false};
    p->carriers.push_back(src->second);
  }
  if (!p->carriers.empty()) p->carrier_element = zeros({1});
  const size_t plain = part.backward->inputs().size() - p->carriers.size();
  for (size_t k = 0; k < part.backward->inputs().size(); ++k)
    bwd.input_strides.push_back(k < plain ? ir::contiguous_strides(part.backward->inputs()[k]->type().sizes)
                                          : std::vector<ir::Expr>{ir::Expr(0)});

  p->forward_comp = compile_graph(part.forward, be, std::move(fwd));
  if (!p->forward_comp.status.ok()) fail("compile", "the forward program: {}", p->forward_comp.status.error);
  p->forward = std::move(p->forward_comp.status.exe);
  p->forward_comp.opts.example_inputs.clear();
  p->backward_comp = compile_graph(part.backward, be, std::move(bwd));
  if (!p->backward_comp.status.ok()) fail("compile", "the backward program: {}", p->backward_comp.status.error);
  p->backward = std::move(p->backward_comp.status.exe);
  p->joint = std::move(info);
  return p;
}

namespace {

// backward with create_graph: the joint graph replayed eagerly on the forward's inputs and the
// cotangents, so that the gradients it returns have history (the forward is computed again).
// `saved`: the saved values (num_saved), then the forward's inputs.
std::vector<Tensor> second_order_backward(const TrainingProgram& p, const std::vector<autograd::SavedTensor>& saved,
                                          size_t num_saved, const std::vector<autograd::TensorMeta>& meta,
                                          const std::vector<Tensor>& grads) {
  if (!p.no_replay.empty())
    fail("backward", "a compiled function's backward cannot be differentiated again (create_graph) because {}; "
                     "differentiate twice with kiln::grad(kiln::grad(f)), which compile() also accepts",
         p.no_replay);
  std::vector<Tensor> inputs;
  for (size_t k = num_saved; k < saved.size(); ++k) inputs.push_back(saved[k].unpack(nullptr, 0));
  std::map<std::string, int64_t> symbols;
  for (const auto& [name, src] : p.symbols) {
    const Tensor& t = inputs.at(static_cast<size_t>(src.input));
    symbols[name] = src.stride ? t.stride(src.dim) : t.size(src.dim);
  }
  std::vector<Tensor> joint_in;
  for (int64_t k : p.joint_inputs) {
    if (k >= 0) {
      joint_in.push_back(inputs.at(static_cast<size_t>(k)));
      continue;
    }
    const auto j = static_cast<size_t>(-k - 1);
    joint_in.push_back(j < grads.size() && grads[j].defined() ? grads[j] : meta.at(j).zeros());
  }
  std::vector<Tensor> out = replay_graph(*p.joint_graph, joint_in, symbols);
  const auto first = static_cast<std::ptrdiff_t>(p.joint.num_outputs);
  return {out.begin() + first, out.begin() + first + static_cast<std::ptrdiff_t>(p.grad_inputs.size())};
}

}  // namespace

std::vector<Tensor> run_training(const std::shared_ptr<const TrainingProgram>& p, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> fwd_out;
  {
    // The library kernels of the program's steps see the arguments, which may require grad
    // (the cpu's attention views them with as_strided); nothing inside the program is
    // differentiated: the node below stands for all of it.
    const NoGradGuard no_grad;
    fwd_out = p->forward->run(inputs);
  }
  const size_t n = p->joint.num_outputs;
  std::vector<Tensor> outs(fwd_out.begin(), fwd_out.begin() + static_cast<std::ptrdiff_t>(n));
  // A result that is an argument itself (or another result) gets a tensor of its own, so that
  // its history is not the argument's.
  std::set<const TensorImpl*> seen;
  for (const Tensor& t : inputs) seen.insert(t.impl());
  for (Tensor& o : outs)
    if (!seen.insert(o.impl()).second) o = o.detach();
  // What the backward reads: the saved values (checked for in-place writes), then the sizes
  // the carriers stand for. The saved values, then the forward's inputs (read only by a
  // backward with create_graph), in one vector: one allocation per call. The saved values are
  // taken before the in-place updates are copied back, so that one that is a written input
  // (read by the backward with its earlier contents) fails its version check, as PyTorch's
  // does; the inputs after, since a create_graph replay reads the buffers' new contents.
  auto saved = std::make_shared<std::vector<autograd::SavedTensor>>();
  const size_t num_saved = fwd_out.size() - n - p->writebacks.size();
  saved->reserve(num_saved + inputs.size());
  for (size_t k = n + p->writebacks.size(); k < fwd_out.size(); ++k) saved->emplace_back(fwd_out[k], false);
  bool wrote_differentiated = false;  // a write under NoGradGuard into a tensor that requires grad
  for (size_t k = 0; k < p->writebacks.size(); ++k) {
    NoGradGuard no_grad;
    Tensor target = inputs.at(p->writebacks[k]);
    wrote_differentiated = wrote_differentiated || target.requires_grad();
    target.copy_(fwd_out.at(n + k));
  }
  for (const Tensor& t : inputs) saved->emplace_back(t, false);
  std::vector<Tensor> carriers;
  for (const ParamSource& s : p->carriers) {
    const Tensor& t = inputs.at(static_cast<size_t>(s.input));
    const int64_t len = s.stride ? t.stride(s.dim) : t.size(s.dim);
    carriers.push_back(p->carrier_element.expand({len}));
  }
  std::vector<autograd::TensorMeta> meta;
  for (const Tensor& o : outs) meta.push_back(autograd::TensorMeta::of(o));
  auto backward = [p, saved, num_saved, carriers, meta, wrote_differentiated](std::vector<Tensor> grads) {
    if (GradMode::is_enabled()) {
      // The replay of the joint graph would read the written tensor's new contents.
      if (wrote_differentiated)
        fail("backward", "create_graph through a compiled step that wrote into a tensor that requires grad (under "
                         "NoGradGuard) is not supported: run that step eagerly to differentiate its backward");
      return second_order_backward(*p, *saved, num_saved, meta, grads);
    }
    std::vector<Tensor> in;
    for (size_t k = 0; k < num_saved; ++k) in.push_back((*saved)[k].unpack(nullptr, 0).contiguous());
    for (size_t j = 0; j < p->joint.num_outputs; ++j) {
      if (!p->joint.output_differentiable[j]) continue;
      const Tensor g = j < grads.size() && grads[j].defined() ? grads[j] : meta[j].zeros();
      in.push_back(g.contiguous());
    }
    in.insert(in.end(), carriers.begin(), carriers.end());
    return p->backward->run(in);
  };
  auto node = std::make_shared<autograd::FunctionNode>("CompiledFunctionBackward", backward,
                                                       [saved] { for (auto& s : *saved) s.release(); });
  for (size_t k : p->grad_inputs) node->mutable_next_edges().push_back(autograd::gradient_edge(inputs.at(k)));
  node->set_output_meta(std::move(meta));
  for (size_t j = 0; j < n; ++j)
    if (p->joint.output_differentiable[j]) autograd::set_history(outs[j], node, static_cast<uint32_t>(j));
  return outs;
}

}  // namespace kiln::rt
