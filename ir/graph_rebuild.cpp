// kiln/ir/graph_rebuild.cpp — rebuild_graph: liveness from the kept outputs, then one copy in order.
#include "ir/graph_rebuild.h"

#include "base/error.h"
#include "ir/verifier.h"

#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace kiln::ir {

namespace {

using Subst = std::map<std::string, Expr>;

Expr concretize(const Expr& e, const Subst& s) { return s.empty() || e.is_const() ? e : e.substitute(s); }

TensorType concretize(const TensorType& t, const Subst& s) {
  TensorType out = t;
  for (Expr& e : out.sizes) e = concretize(e, s);
  return out;
}

AttrList concretize(const AttrList& attrs, const Subst& s) {
  if (s.empty()) return attrs;
  std::vector<AttrValue> out = attrs.values();
  for (AttrValue& v : out) {
    if (auto* e = std::get_if<Expr>(&v)) *e = concretize(*e, s);
    else if (auto* list = std::get_if<std::vector<Expr>>(&v))
      for (Expr& x : *list) x = concretize(x, s);
  }
  return AttrList(std::move(out));
}

// Follows replacements to the value that finally stands for v (nullptr target: v itself
// becomes a fresh input).
const Value* resolve(const Value* v, const RebuildSpec& spec) {
  for (int guard = 0; guard < 1 << 20; ++guard) {
    auto it = spec.replace.find(v);
    if (it == spec.replace.end() || it->second == nullptr) return v;
    v = it->second;
  }
  fail("rebuild", "replacement cycle");
}

}  // namespace

Rebuilt rebuild_graph(const Graph& g, const RebuildSpec& spec) {
  // Bind the symbols of retyped inputs to their new sizes.
  Subst subst;
  for (const auto& [i, ty] : spec.input_types) {
    if (i >= g.inputs().size()) fail("rebuild", "input {} out of range ({} inputs)", i, g.inputs().size());
    const TensorType& old = g.inputs()[i]->type();
    if (old.rank() != ty.rank() || old.dtype != ty.dtype)
      fail("rebuild", "input {}: new type {} must keep dtype and rank of {}", i, ty.str(), old.str());
    for (size_t d = 0; d < old.sizes.size(); ++d)
      if (old.sizes[d].is_symbol()) subst.emplace(old.sizes[d].symbol_name(), ty.sizes[d]);
  }

  std::vector<size_t> positions;
  if (spec.outputs) positions = *spec.outputs;
  else for (size_t k = 0; k < g.outputs().size(); ++k) positions.push_back(k);
  std::vector<const Value*> outs;
  for (size_t k : positions) {
    auto o = spec.output_values.find(k);
    outs.push_back(resolve(o != spec.output_values.end() ? o->second : g.outputs().at(k), spec));
  }

  // Liveness: walk backwards from the outputs through replacements.
  auto is_fresh = [&](const Value* v) {
    auto it = spec.replace.find(v);
    return it != spec.replace.end() && it->second == nullptr;
  };
  std::unordered_set<const Value*> live(outs.begin(), outs.end());
  std::vector<const Node*> order;
  for (const Node* n : g.nodes()) order.push_back(n);
  std::unordered_set<const Node*> live_nodes;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Node* n = *it;
    bool needed = false;
    for (const Value* o : n->outputs())
      if (live.count(o) && !is_fresh(o)) needed = true;
    if (!needed) continue;
    live_nodes.insert(n);
    for (const Value* in : n->inputs()) live.insert(resolve(in, spec));
  }

  Rebuilt r;
  r.graph = std::make_unique<Graph>();
  std::unordered_map<const Value*, Value*> map;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value* v = g.inputs()[i];
    if (!live.count(v) && !spec.keep_all_inputs) continue;
    auto t = spec.input_types.find(i);
    map[v] = r.graph->add_input(t != spec.input_types.end() ? t->second : concretize(v->type(), subst), v->name());
    r.input_origin.push_back(v);
  }
  // Fresh inputs, in definition order of the values they replace.
  for (const Node* n : g.nodes())
    for (const Value* o : n->outputs())
      if (live.count(o) && is_fresh(o)) {
        map[o] = r.graph->add_input(concretize(o->type(), subst));
        r.input_origin.push_back(o);
      }
  for (const Node* n : g.nodes()) {
    if (!live_nodes.count(n)) continue;
    std::vector<Value*> ins;
    for (const Value* in : n->inputs()) ins.push_back(map.at(resolve(in, spec)));
    Node* copy = r.graph->create(n->op(), std::move(ins), concretize(n->attrs(), subst));
    for (size_t k = 0; k < n->outputs().size(); ++k)
      if (!is_fresh(n->output(k))) map[n->output(k)] = copy->output(k);
  }
  for (const Value* v : outs) r.graph->add_output(map.at(v));
  verify(*r.graph);
  return r;
}

}  // namespace kiln::ir
