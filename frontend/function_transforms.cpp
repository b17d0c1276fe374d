// kiln/frontend/function_transforms.cpp — grad, value_and_grad and vjp (function_transforms.h):
// trace, replay with a tape, pull back through the derivative rules.
#include "frontend/function_transforms.h"

#include "base/error.h"
#include "frontend/decompositions.h"
#include "frontend/derivatives.h"
#include "frontend/dispatch.h"
#include "frontend/grad_mode.h"
#include "frontend/ops.h"
#include "frontend/symbolic.h"
#include "frontend/tracer.h"

#include <memory>
#include <unordered_map>
#include <unordered_set>

namespace kiln {

namespace {

using autograd::Derivative;
using autograd::GradArgs;
using autograd::TensorMeta;

bool differentiable(const Tensor& t) { return t.defined() && is_floating_point(t.dtype()); }

// One replayed op that depends on a primal.
struct TapeEntry {
  ir::OpKind op;
  ir::AttrList attrs;
  std::vector<Tensor> inputs, outputs;
  std::vector<bool> needs;
  const Derivative* d;
};

// Replays graphs through dispatch, keeping the tape of the ops that depend on the primals.
class Replay {
 public:
  std::vector<TapeEntry> tape;

  void mark_active(const Tensor& t) {
    if (differentiable(t)) active_.insert(t.impl());
  }
  bool active(const Tensor& t) const { return t.defined() && active_.count(t.impl()); }

  // `symbols`: values of size symbols that attributes name (evaluated first), when the graph
  // runs eagerly on concrete tensors; empty inside a trace.
  std::vector<Tensor> run(const ir::Graph& g, const std::vector<Tensor>& inputs,
                          const std::map<std::string, int64_t>& symbols = {}) {
    std::unordered_map<const ir::Value*, Tensor> env;
    if (inputs.size() != g.inputs().size())
      internal_fail("replay: {} inputs for a graph of {}", inputs.size(), g.inputs().size());
    for (size_t i = 0; i < inputs.size(); ++i) env[g.inputs()[i]] = inputs[i];
    auto bound = [&](const ir::Expr& e) { return e.is_const() ? e : ir::Expr(e.evaluate(symbols)); };
    for (const ir::Node* n : g.nodes()) {
      std::vector<Tensor> ins;
      ins.reserve(n->inputs().size());
      for (const ir::Value* v : n->inputs()) ins.push_back(env.at(v));
      ir::AttrList attrs = n->attrs();
      if (!symbols.empty())
        for (ir::AttrValue& a : attrs.values()) {
          if (ir::Expr* e = std::get_if<ir::Expr>(&a)) *e = bound(*e);
          if (auto* es = std::get_if<std::vector<ir::Expr>>(&a))
            for (ir::Expr& e : *es) e = bound(e);
        }
      std::vector<Tensor> outs = node(*n, std::move(ins), attrs);
      for (size_t k = 0; k < n->outputs().size(); ++k) env[n->outputs()[k]] = outs.at(k);
    }
    std::vector<Tensor> out;
    for (const ir::Value* v : g.outputs()) out.push_back(env.at(v));
    return out;
  }

 private:
  std::vector<Tensor> node(const ir::Node& n, std::vector<Tensor> ins, const ir::AttrList& attrs) {
    bool any = false;
    for (const Tensor& t : ins) any = any || active(t);
    if (!any) return dispatch(OpCall{n.op(), std::move(ins), attrs});
    const ir::OpInfo& info = n.info();
    if (info.family == ir::OpFamily::Custom)
      fail(info.name, "custom op '{}' has no derivative, and its input depends on a differentiated argument",
           info.name);
    const Derivative* d = autograd::derivative(n.op());
    if (!d) {
      if (info.level == ir::OpLevel::Prim) internal_fail("prim {} has no derivative entry", info.name);
      std::shared_ptr<ir::Graph> sub = trace_decomposition(n);
      if (!sub) internal_fail("{} has neither a derivative rule nor a decomposition", info.name);
      return run(*sub, ins);
    }
    std::vector<Tensor> outs = dispatch(OpCall{n.op(), ins, attrs});
    if (d->not_differentiable) return outs;
    TapeEntry e{n.op(), attrs, ins, outs, {}, d};
    for (const Tensor& t : ins) e.needs.push_back(active(t));
    for (size_t k = 0; k < outs.size(); ++k)
      if (d->outputs & autograd::bit(static_cast<int>(k))) mark_active(outs[k]);
    tape.push_back(std::move(e));
    return outs;
  }

  std::unordered_set<const TensorImpl*> active_;
};

void accumulate(std::unordered_map<const TensorImpl*, Tensor>& grads, const Tensor& at, const Tensor& g) {
  Tensor& slot = grads[at.impl()];
  slot = slot.defined() ? slot + g : g;
}

// The pullback of a replay: cotangents of `outputs` to cotangents of `primals`.
std::vector<Tensor> pull_back(const std::vector<TapeEntry>& tape, const std::vector<Tensor>& primals,
                              const std::vector<Tensor>& outputs, const std::vector<Tensor>& cotangents) {
  if (cotangents.size() != outputs.size())
    fail("vjp", "the pullback takes one cotangent per output: {} outputs, got {} cotangents", outputs.size(),
         cotangents.size());
  std::unordered_map<const TensorImpl*, Tensor> grads;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const Tensor& c = cotangents[j];
    if (!c.defined() || !differentiable(outputs[j])) continue;
    if (sym_sizes(c) != sym_sizes(outputs[j]))
      fail("vjp", "the cotangent of output {} has shape {}, expected the output's shape {}", j,
           ir::str(sym_sizes(c)), ir::str(sym_sizes(outputs[j])));
    accumulate(grads, outputs[j], c.to(outputs[j].dtype()));
  }
  for (auto it = tape.rbegin(); it != tape.rend(); ++it) {
    const TapeEntry& e = *it;
    std::vector<Tensor> out_grads;
    bool any = false;
    for (const Tensor& o : e.outputs) {
      auto f = grads.find(o.impl());
      out_grads.push_back(f == grads.end() ? Tensor() : f->second);
      any = any || out_grads.back().defined();
    }
    if (!any) continue;
    GradArgs a{e.op, e.attrs, e.inputs, e.outputs, {}, {}, std::move(out_grads), e.needs};
    for (const Tensor& t : e.inputs) a.input_meta.push_back(TensorMeta::of(t));
    for (const Tensor& t : e.outputs) a.output_meta.push_back(TensorMeta::of(t));
    const std::vector<Tensor> in_grads = e.d->fn(a);
    for (size_t i = 0; i < e.inputs.size() && i < in_grads.size(); ++i)
      if (e.needs[i] && in_grads[i].defined()) accumulate(grads, e.inputs[i], in_grads[i]);
  }
  std::vector<Tensor> out;
  for (const Tensor& p : primals) {
    if (!differentiable(p)) {
      out.emplace_back();
      continue;
    }
    auto f = grads.find(p.impl());
    out.push_back(f != grads.end() ? f->second : sym_full(sym_sizes(p), 0, p.dtype(), p.device()));
  }
  return out;
}

// A differentiable identity of t with an identity of its own (the tape tells primals apart even
// when one tensor is passed twice, and a gradient of an enclosing transform flows through it).
Tensor fresh_alias(const Tensor& t) {
  if (!t.defined()) return t;
  return dispatch1(ir::OpKind::reshape, {t}, {sym_sizes(t)});
}

}  // namespace

namespace {

CapturedVjp vjp_impl(const TensorFn& fn, const std::vector<Tensor>& primals, bool captured) {
  if (!fn) fail("vjp", "received an empty function");
  for (size_t i = 0; i < primals.size(); ++i)
    if (!primals[i].defined()) fail("vjp", "primal {} is an undefined tensor", i);
  std::vector<Tensor> args;
  for (const Tensor& p : primals) args.push_back(fresh_alias(p));
  std::vector<Tensor> traced_args;
  TracedProgram program;
  {
    // fn is traced with grad mode on, whatever encloses the transform (as torch.func.grad
    // ignores an enclosing no_grad); a NoGradGuard inside fn stops gradients there.
    const AutoGradMode grad_on(true);
    const TracingForGrad for_grad;
    program = trace(
        [&](const std::vector<Tensor>& t) {
          traced_args = t;
          return fn(t);
        },
        args);
  }
  auto replay = std::make_shared<Replay>();
  for (const Tensor& a : args) replay->mark_active(a);
  CapturedVjp c;
  std::vector<Tensor> wrt = args;
  if (captured)
    for (const Tensor& t : program.lifted)
      if (!t.is_traced() && t.requires_grad() && differentiable(t)) {
        replay->mark_active(t);
        c.captured.push_back(t);
        wrt.push_back(t);
      }
  std::vector<Tensor> inputs = args;
  inputs.insert(inputs.end(), program.lifted.begin(), program.lifted.end());
  // Captured tensors fn updates in place (a batch norm's running statistics): their new
  // contents are extra results of the replay, written back as the eager function would.
  // So are arguments fn writes into (a traced argument rebound to a new value).
  const size_t n_out = program.graph->outputs().size();
  for (const auto& [k, v] : program.lifted_updates) program.graph->add_output(v);
  std::vector<size_t> written;
  for (size_t k = 0; k < traced_args.size(); ++k)
    if (traced_args[k].impl()->value() != program.graph->inputs().at(k)) {
      written.push_back(k);
      program.graph->add_output(traced_args[k].impl()->value());
    }
  std::vector<Tensor> outputs = replay->run(*program.graph, inputs);
  for (size_t w = 0; w < written.size(); ++w) {
    NoGradGuard no_grad;
    Tensor dst = primals[written[w]];
    dst.copy_(outputs.at(n_out + program.lifted_updates.size() + w));
  }
  for (size_t u = 0; u < program.lifted_updates.size(); ++u) {
    const Tensor& target = program.lifted.at(program.lifted_updates[u].first);
    const Tensor& value = outputs.at(n_out + u);
    if (Tracer* t = Tracer::current(); t && (value.is_traced() || target.is_traced())) {
      t->update_lifted(target, value);
    } else {
      NoGradGuard no_grad;
      Tensor dst = target;
      dst.copy_(value);
    }
  }
  outputs.resize(n_out);
  for (const Tensor& o : outputs) c.output_differentiable.push_back(replay->active(o));
  c.vjp.outputs = outputs;
  c.vjp.pullback = [replay, wrt, outputs](const std::vector<Tensor>& cotangents) {
    return pull_back(replay->tape, wrt, outputs, cotangents);
  };
  return c;
}

}  // namespace

VjpResult vjp(const TensorFn& fn, const std::vector<Tensor>& primals) { return vjp_impl(fn, primals, false).vjp; }

CapturedVjp vjp_with_captured(const TensorFn& fn, const std::vector<Tensor>& primals) {
  return vjp_impl(fn, primals, true);
}

std::vector<Tensor> replay_graph(const ir::Graph& g, const std::vector<Tensor>& inputs,
                                 const std::map<std::string, int64_t>& symbols) {
  return Replay().run(g, inputs, symbols);  // no primals: every op dispatches as a user's call
}

namespace {

std::vector<size_t> resolve_argnums(std::string_view op, const std::vector<int64_t>& argnums, size_t n) {
  if (argnums.empty()) fail(op, "argnums is empty: name at least one argument to differentiate");
  std::vector<size_t> out;
  for (int64_t a : argnums) {
    const int64_t k = a < 0 ? a + static_cast<int64_t>(n) : a;
    if (k < 0 || k >= static_cast<int64_t>(n))
      fail(op, "argnums {} is out of range for a function called with {} arguments", a, n);
    out.push_back(static_cast<size_t>(k));
  }
  return out;
}

std::vector<Tensor> value_and_grad_at(std::string_view op, const TensorFn& fn, const std::vector<int64_t>& argnums,
                                      bool has_aux, const std::vector<Tensor>& args) {
  const std::vector<size_t> which = resolve_argnums(op, argnums, args.size());
  for (size_t k : which)
    if (!is_floating_point(args[k].dtype()))
      fail(op, "differentiating with respect to argument {} requires a floating-point tensor, got {}", k,
           c10_type_name(args[k].dtype()));
  VjpResult r = vjp(fn, args);
  if (r.outputs.empty()) fail(op, "the function returned no tensors");
  if (!has_aux && r.outputs.size() > 1)
    fail(op, "the function returned {} tensors; it must return one scalar (or pass has_aux = true to return "
             "auxiliary tensors after it)",
         r.outputs.size());
  const Tensor& value = r.outputs[0];
  if (value.dim() != 0 || !is_floating_point(value.dtype()))
    fail(op, "Gradient only defined for scalar-output functions of a floating dtype. Output had shape: {} and dtype {}",
         ir::str(sym_sizes(value)), c10_type_name(value.dtype()));
  std::vector<Tensor> cot(r.outputs.size());
  cot[0] = sym_full({}, 1, value.dtype(), value.device());
  const std::vector<Tensor> grads = r.pullback(cot);
  std::vector<Tensor> out = r.outputs;
  for (size_t k : which) out.push_back(grads[k]);
  return out;
}

}  // namespace

TensorFn value_and_grad(TensorFn fn, std::vector<int64_t> argnums, bool has_aux) {
  return [fn = std::move(fn), argnums = std::move(argnums), has_aux](const std::vector<Tensor>& args) {
    return value_and_grad_at("value_and_grad", fn, argnums, has_aux, args);
  };
}

TensorFn grad(TensorFn fn, std::vector<int64_t> argnums, bool has_aux) {
  return [fn = std::move(fn), argnums = std::move(argnums), has_aux](const std::vector<Tensor>& args) {
    std::vector<Tensor> all = value_and_grad_at("grad", fn, argnums, has_aux, args);
    const size_t n_out = all.size() - argnums.size();
    std::vector<Tensor> out(all.begin() + static_cast<std::ptrdiff_t>(n_out), all.end());
    if (has_aux) out.insert(out.end(), all.begin() + 1, all.begin() + static_cast<std::ptrdiff_t>(n_out));
    return out;
  };
}

}  // namespace kiln
