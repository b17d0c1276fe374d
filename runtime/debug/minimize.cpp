// kiln/runtime/debug/minimize.cpp — the greedy minimizer: candidates from graph rebuilds, kept when still failing.
#include "runtime/debug/minimize.h"

#include "base/error.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "ir/graph_rebuild.h"
#include "runtime/interpreter/interpreter.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <unordered_map>

namespace kiln::rt {

namespace {

// The current best (graph, inputs) and the budget.
class Minimizer {
 public:
  Minimizer(const FailurePredicate& p, const MinimizeOptions& o)
      : pred_(p), opts_(o), t0_(std::chrono::steady_clock::now()) {}

  bool out_of_budget() const {
    return attempts_ >= opts_.max_attempts ||
           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count() > opts_.max_seconds;
  }

  // Rebuilds the current graph under `spec`; the new inputs come from `inputs_for` (by the
  // origin of each new input). Keeps the candidate when it still fails.
  template <typename F> bool try_candidate(const ir::RebuildSpec& spec, F inputs_for) {
    if (out_of_budget()) return false;
    ir::Rebuilt r;
    std::vector<Tensor> ins;
    try {
      r = ir::rebuild_graph(*graph_, spec);
      for (const ir::Value* origin : r.input_origin) ins.push_back(inputs_for(origin));
    } catch (const std::exception&) {
      return false;  // not a valid graph: not a candidate, costs nothing
    }
    ++attempts_;
    bool fails = false;
    try {
      fails = pred_(*r.graph, ins);
    } catch (const std::exception&) {
      fails = false;
    }
    if (!fails) return false;
    graph_ = std::move(r.graph);
    inputs_ = std::move(ins);
    ++accepted_;
    return true;
  }

  // The tensor bound to an original input value of the current graph.
  Tensor input_of(const ir::Value* v) const {
    const auto& gi = graph_->inputs();
    auto it = std::find(gi.begin(), gi.end(), v);
    if (it == gi.end()) internal_fail("minimize: value is not an input");
    return inputs_.at(static_cast<size_t>(it - gi.begin()));
  }

  bool drop_outputs();
  bool drop_nodes();
  bool shrink_sizes();
  bool simplify_values();

  std::unique_ptr<ir::Graph> graph_;
  std::vector<Tensor> inputs_;
  const FailurePredicate& pred_;
  MinimizeOptions opts_;
  std::chrono::steady_clock::time_point t0_;
  int attempts_ = 0, accepted_ = 0;
};

bool Minimizer::drop_outputs() {
  const size_t n = graph_->outputs().size();
  if (n <= 1) return false;
  for (size_t k = 0; k < n; ++k) {
    ir::RebuildSpec spec;
    spec.outputs = std::vector<size_t>{k};
    if (try_candidate(spec, [&](const ir::Value* v) { return input_of(v); })) return true;
  }
  return false;
}

// Every value of the current graph as the reference interpreter computes it (empty on failure).
std::unordered_map<const ir::Value*, Tensor> all_values(const ir::Graph& g, const std::vector<Tensor>& inputs) {
  std::unordered_map<const ir::Value*, Tensor> env;
  try {
    for (size_t i = 0; i < inputs.size(); ++i) env[g.inputs()[i]] = inputs[i];
    for (const ir::Node* n : g.nodes()) {
      std::vector<Tensor> args;
      for (const ir::Value* v : n->inputs()) args.push_back(env.at(v));
      std::vector<Tensor> outs = interpret_op(n->op(), args, n->attrs());
      for (size_t k = 0; k < outs.size(); ++k) env[n->output(k)] = outs[k].contiguous().clone();
    }
  } catch (const std::exception&) {
    env.clear();
  }
  return env;
}

bool Minimizer::drop_nodes() {
  bool changed = false;
  // Latest nodes first: removing a node near the outputs makes its whole cone dead at once.
  for (bool progress = true; progress && !out_of_budget();) {
    progress = false;
    auto values = all_values(*graph_, inputs_);
    std::vector<const ir::Node*> nodes;
    for (const ir::Node* n : graph_->nodes()) nodes.push_back(n);
    for (auto it = nodes.rbegin(); it != nodes.rend() && !progress; ++it) {
      const ir::Node* n = *it;
      for (const ir::Value* o : n->outputs()) {
        if (!o->has_uses()) continue;
        auto value_for = [&](const ir::Value* v) -> Tensor {
          if (v->is_input()) return input_of(v);
          auto f = values.find(v);
          if (f != values.end()) return f->second;
          return zeros(v->type().static_sizes(), TensorOptions(v->type().dtype));
        };
        // Bypass: an input of the node with the same type.
        std::set<const ir::Value*> tried;
        for (const ir::Value* in : n->inputs()) {
          if (in->type() != o->type() || !tried.insert(in).second) continue;
          ir::RebuildSpec spec;
          spec.replace[o] = in;
          if (try_candidate(spec, value_for)) {
            progress = true;
            break;
          }
        }
        if (progress) break;
        // Return an input of the node instead of an output it makes (any type).
        for (const ir::Use& u : o->uses()) {
          if (u.user != nullptr || progress) continue;
          for (const ir::Value* in : n->inputs()) {
            if (in->is_input()) continue;
            ir::RebuildSpec spec;
            spec.output_values[u.index] = in;
            if (try_candidate(spec, value_for)) {
              progress = true;
              break;
            }
          }
        }
        if (progress) break;
        // Cut: the node's output becomes a graph input (unless the node only reads inputs
        // and this would not shrink anything).
        if (!o->type().is_static()) continue;
        bool reads_only_inputs = std::all_of(n->inputs().begin(), n->inputs().end(),
                                             [](const ir::Value* v) { return v->is_input(); });
        if (reads_only_inputs && std::any_of(o->uses().begin(), o->uses().end(),
                                             [](const ir::Use& u) { return u.user == nullptr; }))
          continue;  // an output computed from inputs only: cutting it leaves nothing to run
        ir::RebuildSpec spec;
        spec.replace[o] = nullptr;
        if (try_candidate(spec, value_for)) {
          progress = true;
          break;
        }
      }
    }
    changed = changed || progress;
  }
  return changed;
}

// A slice of t keeping the leading `n` elements along dim d.
Tensor shrink_dim(const Tensor& t, int64_t d, int64_t n) { return t.narrow(d, 0, n).contiguous().clone(); }

bool Minimizer::shrink_sizes() {
  bool changed = false;
  auto try_sizes = [&](const std::function<bool(size_t, size_t, int64_t)>& selected, int64_t from, int64_t to) {
    ir::RebuildSpec spec;
    std::map<size_t, std::vector<std::pair<size_t, int64_t>>> cuts;
    for (size_t i = 0; i < graph_->inputs().size(); ++i) {
      ir::TensorType ty = graph_->inputs()[i]->type();
      bool any = false;
      for (size_t d = 0; d < ty.sizes.size(); ++d)
        if (ty.sizes[d].is_const() && ty.sizes[d].as_const() == from && selected(i, d, from)) {
          ty.sizes[d] = ir::Expr(to);
          cuts[i].push_back({d, to});
          any = true;
        }
      if (any) spec.input_types[i] = ty;
    }
    if (cuts.empty()) return false;
    return try_candidate(spec, [&](const ir::Value* v) {
      const auto& gi = graph_->inputs();
      const size_t i = static_cast<size_t>(std::find(gi.begin(), gi.end(), v) - gi.begin());
      Tensor t = inputs_.at(i);
      if (auto c = cuts.find(i); c != cuts.end())
        for (const auto& [d, n] : c->second) t = shrink_dim(t, static_cast<int64_t>(d), n);
      return t;
    });
  };
  auto targets = [](int64_t n) {
    std::vector<int64_t> out = {1};
    if (n / 2 > 1) out.push_back(n / 2);
    return out;
  };
  for (bool progress = true; progress && !out_of_budget();) {
    progress = false;
    // Sizes shared by several inputs first, everywhere at once; then each (input, dim).
    std::set<int64_t, std::greater<>> sizes;
    for (const ir::Value* v : graph_->inputs())
      for (const ir::Expr& e : v->type().sizes)
        if (e.is_const() && e.as_const() > 1) sizes.insert(e.as_const());
    for (int64_t n : sizes) {
      for (int64_t to : targets(n))
        if (try_sizes([](size_t, size_t, int64_t) { return true; }, n, to)) {
          progress = true;
          break;
        }
      if (progress) break;
    }
    if (progress) {
      changed = true;
      continue;
    }
    for (size_t i = 0; i < graph_->inputs().size() && !progress; ++i) {
      const ir::TensorType ty = graph_->inputs()[i]->type();
      for (size_t d = 0; d < ty.sizes.size() && !progress; ++d) {
        if (!ty.sizes[d].is_const() || ty.sizes[d].as_const() <= 1) continue;
        for (int64_t to : targets(ty.sizes[d].as_const()))
          if (try_sizes([&](size_t ii, size_t dd, int64_t) { return ii == i && dd == d; }, ty.sizes[d].as_const(),
                        to)) {
            progress = true;
            break;
          }
      }
    }
    changed = changed || progress;
  }
  return changed;
}

bool Minimizer::simplify_values() {
  bool changed = false;
  for (size_t i = 0; i < inputs_.size() && !out_of_budget(); ++i) {
    const Tensor cur = inputs_[i];
    const ScalarType dt = cur.dtype();
    std::vector<Tensor> candidates = {zeros(cur.sizes(), TensorOptions(dt)), ones(cur.sizes(), TensorOptions(dt))};
    if (dt != kBool && cur.numel() > 0)
      candidates.push_back((arange(cur.numel(), TensorOptions(kInt64)).remainder(3)).to(dt).reshape(cur.sizes()));
    for (const Tensor& c : candidates) {
      if (equal(c, cur)) break;  // already as simple as this candidate: stop here
      ir::RebuildSpec spec;
      spec.keep_all_inputs = true;
      const ir::Value* target = graph_->inputs()[i];
      if (try_candidate(spec, [&](const ir::Value* v) { return v == target ? c : input_of(v); })) {
        changed = true;
        break;
      }
    }
  }
  return changed;
}

}  // namespace

MinimizeResult minimize(const ir::Graph& g, const std::vector<Tensor>& inputs, const FailurePredicate& still_fails,
                        const MinimizeOptions& opts) {
  Minimizer m(still_fails, opts);
  m.graph_ = specialize_graph(g, inputs);
  for (const Tensor& t : inputs) m.inputs_.push_back(t.contiguous());
  MinimizeResult res;
  res.nodes_before = g.num_nodes();
  bool fails = false;
  try {
    fails = still_fails(*m.graph_, m.inputs_);
  } catch (const std::exception& e) {
    fail("minimize", "the predicate threw on the original graph: {}", e.what());
  }
  if (!fails) fail("minimize", "the original graph does not fail; nothing to minimize");
  for (bool again = true; again && !m.out_of_budget();) {
    again = m.drop_outputs();
    again = m.drop_nodes() || again;
    again = m.shrink_sizes() || again;
    again = m.simplify_values() || again;
  }
  res.out_of_budget = m.out_of_budget();
  res.attempts = m.attempts_;
  res.accepted = m.accepted_;
  res.nodes_after = m.graph_->num_nodes();
  res.graph = std::shared_ptr<ir::Graph>(m.graph_.release());
  res.inputs = std::move(m.inputs_);
  return res;
}

DiffKind classify(const RunResult& a, const RunResult& b, const Tolerance& tol) {
  if (a.status == b.status) return a.ok() && !compare_runs(a, b, tol).empty() ? DiffKind::Values : DiffKind::None;
  if (b.ok()) return DiffKind::AFails;
  if (a.ok()) return DiffKind::BFails;
  return a.status == RunResult::Status::InternalError ? DiffKind::AFails : DiffKind::BFails;
}

FailurePredicate backends_differ(const ir::Graph& g, const std::vector<Tensor>& inputs, GraphRunner a, GraphRunner b,
                                 Tolerance tol) {
  const RunResult ra = a(g, inputs), rb = b(g, inputs);
  const DiffKind kind = classify(ra, rb, tol);
  if (kind == DiffKind::None) fail("minimize", "the two backends agree on this graph and inputs");
  const RunResult::Status sa = ra.status, sb = rb.status;
  return [=](const ir::Graph& cg, const std::vector<Tensor>& ci) {
    const RunResult ca = a(cg, ci), cb = b(cg, ci);
    if (classify(ca, cb, tol) != kind) return false;
    if (kind == DiffKind::AFails) return ca.status == sa;
    if (kind == DiffKind::BFails) return cb.status == sb;
    return true;
  };
}

}  // namespace kiln::rt
