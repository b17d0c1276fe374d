// kiln/frontend/autograd_engine.cpp — backward() and grad(): running the recorded graph.
//
// The engine finds every node reachable from the roots' grad_fns, counts how many edges reach
// each, and runs a node once all of them delivered (Kahn's order; among ready nodes the one made
// last first, as PyTorch does, so the order is deterministic). Gradients arriving at one input
// of a node add up. Before a node runs, the hooks on its outputs' tensors run and retain_grad
// keeps a copy; grad() captures the gradient of each requested input there (or at a leaf's
// accumulator) and runs only the nodes that lead to one. Without retain_graph every node frees
// what it saved once it ran. The backward itself records history only with create_graph.
#include "frontend/autograd.h"

#include "base/error.h"
#include "frontend/autograd_meta.h"
#include "frontend/autograd_node.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"

#include <map>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace kiln::autograd {

namespace {

std::string size_str(const Tensor& t) {
  std::string s = "torch.Size([";
  for (int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "])";
}

struct Capture {
  Node* node = nullptr;
  uint32_t slot = 0;
};

class GraphTask {
 public:
  GraphTask(bool retain_graph, bool create_graph, bool accumulate)
      : retain_(retain_graph), create_(create_graph), accumulate_(accumulate) {}

  void add_root(const Edge& e, Tensor grad) {
    roots_.push_back(e);
    add_grad(e, std::move(grad));
  }

  // Grads of these edges are captured; only nodes that lead to one run.
  void set_captures(std::vector<Edge> edges) {
    captures_ = std::move(edges);
    captured_.resize(captures_.size());
  }

  void run();
  std::vector<Tensor> take_captured() { return std::move(captured_); }
  const std::vector<bool>& captured_any() const { return captured_any_; }

 private:
  void add_grad(const Edge& e, Tensor g) {
    if (!e.valid() || !g.defined()) return;
    std::vector<Tensor>& buf = buffers_[e.fn.get()];
    const size_t n = std::max<size_t>(e.fn->output_meta().size(), e.input_nr + 1);
    if (buf.size() < n) buf.resize(n);
    Tensor& slot = buf[e.input_nr];
    slot = slot.defined() ? slot + g : g;
  }
  void discover();
  void execute(Node* n);

  bool retain_, create_, accumulate_;
  std::vector<Edge> roots_;
  std::vector<Edge> captures_;
  std::vector<Tensor> captured_;
  std::vector<bool> captured_any_;
  std::unordered_map<Node*, std::vector<Tensor>> buffers_;
  std::unordered_map<Node*, int> deps_;
  std::unordered_map<Node*, std::shared_ptr<Node>> alive_;  // every reachable node, kept alive for the run
  std::unordered_set<Node*> needed_;                        // with captures: the nodes leading to one
};

void GraphTask::discover() {
  std::vector<Node*> stack;
  for (const Edge& e : roots_)
    if (e.valid() && alive_.emplace(e.fn.get(), e.fn).second) stack.push_back(e.fn.get());
  std::vector<Node*> order;
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    order.push_back(n);
    for (const Edge& e : n->next_edges()) {
      if (!e.valid()) continue;
      ++deps_[e.fn.get()];
      if (alive_.emplace(e.fn.get(), e.fn).second) stack.push_back(e.fn.get());
    }
  }
  if (captures_.empty()) return;
  // A node is needed when a capture point is reachable from it: fixed point over the edges.
  std::unordered_set<Node*> targets;
  for (const Edge& c : captures_) targets.insert(c.fn.get());
  bool changed = true;
  for (Node* n : order)
    if (targets.count(n)) needed_.insert(n);
  while (changed) {
    changed = false;
    for (Node* n : order) {
      if (needed_.count(n)) continue;
      for (const Edge& e : n->next_edges())
        if (e.valid() && needed_.count(e.fn.get())) {
          needed_.insert(n);
          changed = true;
          break;
        }
    }
  }
}

void GraphTask::execute(Node* n) {
  std::vector<Tensor> grads = std::move(buffers_[n]);
  buffers_.erase(n);
  grads.resize(n->output_meta().size());
  // The hooks of the tensors this node made, and retain_grad.
  for (uint32_t k = 0; k < grads.size(); ++k) {
    const std::shared_ptr<OutputSlot> slot = n->slot_if_any(k);
    if (!slot || !grads[k].defined()) continue;
    for (const auto& [handle, hook] : slot->hooks) {
      Tensor changed = hook(grads[k]);
      if (changed.defined()) grads[k] = changed;
    }
    if (slot->retain) slot->retained = create_ ? grads[k] : grads[k].detach();
  }
  auto* acc = dynamic_cast<AccumulateGrad*>(n);
  for (size_t c = 0; c < captures_.size(); ++c) {
    if (captures_[c].fn.get() != n || captures_[c].input_nr >= grads.size() || !grads[captures_[c].input_nr].defined())
      continue;
    Tensor g = grads[captures_[c].input_nr];
    if (acc) {  // a leaf's own hooks run on its captured gradient too
      if (const AutogradMeta* m = meta_of(acc->leaf()))
        for (const auto& [handle, hook] : m->hooks) {
          Tensor changed = hook(g);
          if (changed.defined()) g = changed;
        }
    }
    captured_[c] = captured_[c].defined() ? captured_[c] + g : g;
    captured_any_[c] = true;
  }
  const bool runs = acc ? accumulate_ && (captures_.empty() || needed_.count(n))
                        : captures_.empty() || needed_.count(n);
  bool any = false;
  for (const Tensor& g : grads) any = any || g.defined();
  if (runs && any) {
    std::vector<Tensor> out;
    {
      AutoGradMode mode(create_);
      out = n->apply(std::move(grads));
    }
    const std::vector<Edge>& edges = n->next_edges();
    for (size_t i = 0; i < edges.size() && i < out.size(); ++i) add_grad(edges[i], std::move(out[i]));
  }
  if (!retain_) n->release_saved();
}

void GraphTask::run() {
  captured_any_.assign(captures_.size(), false);
  discover();
  auto later = [](Node* a, Node* b) { return a->sequence_nr() < b->sequence_nr(); };
  std::priority_queue<Node*, std::vector<Node*>, decltype(later)> ready(later);
  std::unordered_set<Node*> queued;
  for (const Edge& e : roots_)
    if (e.valid() && deps_[e.fn.get()] == 0 && queued.insert(e.fn.get()).second) ready.push(e.fn.get());
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    execute(n);
    for (const Edge& e : n->next_edges()) {
      if (!e.valid()) continue;
      if (--deps_[e.fn.get()] == 0 && queued.insert(e.fn.get()).second) ready.push(e.fn.get());
    }
  }
}

// The roots' edges and gradients, checked as PyTorch checks them.
void add_roots(GraphTask& task, const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
               std::string_view op) {
  if (!grad_outputs.empty() && grad_outputs.size() != outputs.size())
    fail(op, "grad_tensors has {} tensors, but tensors has {}", grad_outputs.size(), outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    if (!out.defined()) fail(op, "element {} of tensors is undefined", i);
    const Edge e = gradient_edge(out);
    if (!e.valid()) fail(op, "element {} of tensors does not require grad and does not have a grad_fn", i);
    Tensor g = i < grad_outputs.size() ? grad_outputs[i] : Tensor();
    if (!g.defined()) {
      if (out.numel() != 1) fail(op, "grad can be implicitly created only for scalar outputs");
      g = ones_like(out);
    } else {
      if (!(g.sizes() == out.sizes()))
        fail(op, "Mismatch in shape: grad_output[{}] has a shape of {} and output[{}] has a shape of {}.", i,
             size_str(g), i, size_str(out));
      if (g.dtype() != out.dtype()) g = g.to(out.dtype());
    }
    task.add_root(e, std::move(g));
  }
}

}  // namespace

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph, const std::vector<Tensor>& inputs) {
  if (tensors.empty()) fail("backward", "backward() received no tensors");
  GraphTask task(retain_graph.value_or(create_graph), create_graph, /*accumulate=*/true);
  add_roots(task, tensors, grad_tensors, "backward");
  if (!inputs.empty()) {
    // Only these get gradients: capture at them, then accumulate into each.
    std::vector<Edge> edges;
    for (const Tensor& t : inputs) {
      const Edge e = gradient_edge(t);
      if (!e.valid()) fail("backward", "One of the differentiated Tensors does not require grad");
      edges.push_back(e);
    }
    GraphTask capture(retain_graph.value_or(create_graph), create_graph, /*accumulate=*/false);
    add_roots(capture, tensors, grad_tensors, "backward");
    capture.set_captures(edges);
    capture.run();
    std::vector<Tensor> got = capture.take_captured();
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!got[i].defined()) continue;
      AutogradMeta& m = ensure_meta(inputs[i]);
      if (meta_of(inputs[i])->grad_fn) {  // a non-leaf asked for by name keeps its gradient as retain_grad would
        m.grad = m.grad.defined() ? m.grad + got[i] : got[i];
      } else {
        Tensor g = create_graph ? got[i] : got[i].detach();
        m.grad = m.grad.defined() ? m.grad + g : g;
      }
    }
    return;
  }
  task.run();
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph, bool create_graph,
                         bool allow_unused) {
  if (outputs.empty()) fail("grad", "grad() received no outputs");
  GraphTask task(retain_graph.value_or(create_graph), create_graph, /*accumulate=*/false);
  add_roots(task, outputs, grad_outputs, "grad");
  std::vector<Edge> edges;
  for (const Tensor& t : inputs) {
    if (!t.defined()) fail("grad", "One of the differentiated Tensors is undefined");
    const Edge e = gradient_edge(t);
    if (!e.valid()) fail("grad", "One of the differentiated Tensors does not require grad");
    edges.push_back(e);
  }
  task.set_captures(edges);
  task.run();
  std::vector<Tensor> got = task.take_captured();
  for (size_t i = 0; i < got.size(); ++i) {
    if (!got[i].defined() && !allow_unused)
      fail("grad", "One of the differentiated Tensors appears to not have been used in the graph. Set "
                   "allow_unused=True if this is the desired behavior.");
    if (got[i].defined() && !create_graph) got[i] = got[i].detach();
  }
  return got;
}

}  // namespace kiln::autograd
