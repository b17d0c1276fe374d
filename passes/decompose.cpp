// kiln/passes/decompose.cpp — inlining expansions until every op is at the target level.
#include "passes/decompose.h"

#include "base/error.h"
#include "ir/shape_env.h"

#include <unordered_map>
#include <vector>

namespace kiln::passes {

namespace {

// Composites nest a few levels at most (cross_entropy -> log_softmax -> prims); a graph still
// holding ops above the level after this many rounds has a decomposition that emits itself.
constexpr int kMaxRounds = 16;

// Composite < Core < Prim in the enum: an op is above `level` when its level is lower.
bool above(ir::OpLevel op, ir::OpLevel level) { return static_cast<int>(op) < static_cast<int>(level); }

// Whether a decomposition's result type equals the node's up to sizes the trace's ShapeEnv
// decides (and guards) equal. A decomposition may take a size from another operand than the
// node's shape function did: cross_entropy's batch from the logits rather than the target,
// lerp's shape from a stride-0 weight whose sizes stayed static while the others became symbols.
bool equal_under_guards(const ir::TensorType& a, const ir::TensorType& b) {
  ir::ShapeEnv* env = ir::ShapeEnv::current();
  if (!env || a.dtype != b.dtype || a.device != b.device || a.sizes.size() != b.sizes.size()) return false;
  for (size_t d = 0; d < a.sizes.size(); ++d)
    if (a.sizes[d] != b.sizes[d] && !env->guard_bool(ir::eq(a.sizes[d], b.sizes[d]))) return false;
  return true;
}

}  // namespace

void inline_expansion(ir::Graph& g, ir::Node* n, const ir::Graph& sub) {
  const ir::OpKind op = n->op();
  if (sub.inputs().size() != n->inputs().size())
    internal_fail("decompose: the expansion of {} has {} inputs for {}", ir::op_name(op), sub.inputs().size(),
                  n->inputs().size());
  if (sub.outputs().size() != n->outputs().size())
    internal_fail("decompose: the decomposition of {} gives {} results for {} outputs", ir::op_name(op),
                  sub.outputs().size(), n->outputs().size());
  std::unordered_map<const ir::Value*, ir::Value*> map;
  for (size_t i = 0; i < sub.inputs().size(); ++i) map[sub.inputs()[i]] = n->input(i);
  for (const ir::Node* s : sub.nodes()) {
    std::vector<ir::Value*> ins;
    ins.reserve(s->inputs().size());
    for (const ir::Value* v : s->inputs()) ins.push_back(map.at(v));
    ir::Node* copy = g.create_before(n, s->op(), std::move(ins), s->attrs());
    for (size_t k = 0; k < s->outputs().size(); ++k) map[s->output(k)] = copy->output(k);
  }
  for (size_t k = 0; k < n->outputs().size(); ++k) {
    ir::Value* result = map.at(sub.outputs()[k]);
    // Sizes equal only by the guards: a reshape (a view, free) gives the uses the node's type.
    if (result->type() != n->output(k)->type() && equal_under_guards(result->type(), n->output(k)->type()))
      result = g.create_before(n, ir::OpKind::reshape, {result}, ir::AttrList({n->output(k)->type().sizes}))->output(0);
    if (result->type() != n->output(k)->type())
      internal_fail("decompose: the decomposition of {} gives {} where the node has {}", ir::op_name(op),
                    result->type().str(), n->output(k)->type().str());
    n->output(k)->replace_all_uses_with(result);
  }
  g.erase(n);
}

bool decompose(ir::Graph& g, const DecomposeOptions& opts) {
  bool changed = false;
  for (int round = 0;; ++round) {
    std::vector<ir::Node*> pending;
    for (ir::Node* n : g.nodes())
      if (above(n->info().level, opts.level) && !(opts.keep && opts.keep(*n))) pending.push_back(n);
    if (pending.empty()) return changed;
    if (round == kMaxRounds)
      internal_fail("decompose: the graph still holds ops above level {} after {} rounds (first: {})",
                    ir::level_name(opts.level), kMaxRounds, ir::op_name(pending.front()->op()));
    if (!opts.expand) internal_fail("decompose: no decomposition provider for {}", ir::op_name(pending.front()->op()));
    for (ir::Node* n : pending) {
      std::shared_ptr<ir::Graph> sub = opts.expand(*n);
      if (!sub)
        internal_fail("decompose: {} ({}) has no decomposition", ir::op_name(n->op()), ir::level_name(n->info().level));
      inline_expansion(g, n, *sub);
    }
    changed = true;
  }
}

}  // namespace kiln::passes
