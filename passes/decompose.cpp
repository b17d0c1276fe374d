// kiln/passes/decompose.cpp — inlining traced decompositions until only prims remain.
//
// decompose_node traces the node's decomposition with trace_types() on the node's input
// types and its attributes, then copies the traced graph in front of the node, mapping the
// traced inputs to the node's inputs. A decomposition must not capture eager tensors (they
// would become extra graph inputs); constants come from factories, which record into the trace.
#include "passes/decompose.h"

#include "base/error.h"
#include "frontend/tracer.h"
#include "passes/decompositions.h"

#include <unordered_map>
#include <vector>

namespace kiln::passes {

namespace {

// Composites nest a few levels at most (cross_entropy -> log_softmax -> prims); a graph still
// holding composites after this many rounds has a decomposition that emits itself.
constexpr int kMaxRounds = 16;

}  // namespace

void decompose_node(ir::Graph& g, ir::Node* n) {
  const ir::OpKind op = n->op();
  Decomposition decomp = decomposition_for(op);
  if (!decomp) internal_fail("decompose: {} ({}) has no decomposition", ir::op_name(op), ir::level_name(n->info().level));

  std::vector<ir::TensorType> types;
  for (const ir::Value* v : n->inputs()) types.push_back(v->type());
  const ir::AttrList attrs = n->attrs();
  TracedProgram sub = trace_types([&](const std::vector<Tensor>& in) { return decomp(in, attrs); }, types);
  if (!sub.lifted.empty())
    internal_fail("decompose: the decomposition of {} captured {} eager tensor(s)", ir::op_name(op), sub.lifted.size());
  if (sub.graph->outputs().size() != n->outputs().size())
    internal_fail("decompose: the decomposition of {} gives {} results for {} outputs", ir::op_name(op),
                  sub.graph->outputs().size(), n->outputs().size());

  std::unordered_map<const ir::Value*, ir::Value*> map;
  for (size_t i = 0; i < sub.graph->inputs().size(); ++i) map[sub.graph->inputs()[i]] = n->input(i);
  for (const ir::Node* s : sub.graph->nodes()) {
    std::vector<ir::Value*> ins;
    ins.reserve(s->inputs().size());
    for (const ir::Value* v : s->inputs()) ins.push_back(map.at(v));
    ir::Node* copy = g.create_before(n, s->op(), std::move(ins), s->attrs());
    for (size_t k = 0; k < s->outputs().size(); ++k) map[s->output(k)] = copy->output(k);
  }
  for (size_t k = 0; k < n->outputs().size(); ++k) {
    ir::Value* result = map.at(sub.graph->outputs()[k]);
    if (result->type() != n->output(k)->type())
      internal_fail("decompose: the decomposition of {} gives {} where the node has {}", ir::op_name(op),
                    result->type().str(), n->output(k)->type().str());
    n->output(k)->replace_all_uses_with(result);
  }
  g.erase(n);
}

bool decompose(ir::Graph& g) {
  bool changed = false;
  for (int round = 0;; ++round) {
    std::vector<ir::Node*> pending;
    for (ir::Node* n : g.nodes())
      if (n->info().level != ir::OpLevel::Prim) pending.push_back(n);
    if (pending.empty()) return changed;
    if (round == kMaxRounds)
      internal_fail("decompose: {} still holds non-prim ops after {} rounds (first: {})", "the graph", kMaxRounds,
                    ir::op_name(pending.front()->op()));
    for (ir::Node* n : pending) decompose_node(g, n);
    changed = true;
  }
}

}  // namespace kiln::passes
