// kiln/passes/simplify.cpp — DCE, CSE, constant folding and algebraic identities.
#include "passes/simplify.h"

#include "base/error.h"

#include <limits>
#include <map>
#include <set>

namespace kiln::passes {

using ir::Node;
using ir::OpFamily;
using ir::OpKind;
using ir::Value;

bool dce(ir::Graph& g) {
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    std::vector<Node*> dead;
    for (Node* n : g.nodes()) {
      bool used = false;
      for (const Value* o : n->outputs()) used = used || o->has_uses();
      if (!used) dead.push_back(n);
    }
    for (auto it = dead.rbegin(); it != dead.rend(); ++it) g.erase(*it);
    again = !dead.empty();
    changed = changed || again;
  }
  return changed;
}

bool cse(ir::Graph& g) {
  bool changed = false;
  std::map<std::pair<OpKind, std::vector<Value*>>, std::vector<Node*>> seen;
  std::vector<Node*> dead;
  for (Node* n : g.nodes()) {
    auto& bucket = seen[{n->op(), n->inputs()}];
    Node* same = nullptr;
    for (Node* m : bucket)
      if (m->attrs() == n->attrs()) same = m;
    if (!same) {
      bucket.push_back(n);
      continue;
    }
    for (size_t i = 0; i < n->outputs().size(); ++i) n->output(i)->replace_all_uses_with(same->output(i));
    dead.push_back(n);
    changed = true;
  }
  for (auto it = dead.rbegin(); it != dead.rend(); ++it) g.erase(*it);
  return changed;
}

namespace {

bool is_full(const Value* v) { return !v->is_input() && v->producer()->op() == OpKind::full; }
Scalar full_value(const Value* v) { return v->producer()->attr<Scalar>("value"); }

// Replaces n's single output by full(sizes, value) of the same type.
void replace_by_full(ir::Graph& g, Node* n, const Scalar& value) {
  const ir::TensorType& t = n->output()->type();
  Node* f = g.create_before(n, OpKind::full, {}, ir::AttrList({t.sizes, value, t.dtype, t.device}));
  n->output()->replace_all_uses_with(f->output());
}

bool elementwise(const Node* n) {
  const OpFamily f = n->info().family;
  return f == OpFamily::Unary || f == OpFamily::Binary || f == OpFamily::Ternary || f == OpFamily::Cast;
}

}  // namespace

bool fold_constants(ir::Graph& g, const ConstantEvaluator& eval) {
  bool changed = false;
  for (Node* n : g.nodes()) {
    if (n->inputs().empty() || n->outputs().size() != 1) continue;
    bool all_full = true;
    for (const Value* in : n->inputs()) all_full = all_full && is_full(in);
    if (!all_full) continue;
    if (n->info().family == OpFamily::View) {
      replace_by_full(g, n, full_value(n->input(0)));
      changed = true;
      continue;
    }
    if (!elementwise(n) || !eval) continue;
    std::vector<Scalar> args;
    for (const Value* in : n->inputs()) args.push_back(full_value(in));
    const std::optional<Scalar> r = eval(*n, args);
    if (!r) continue;  // e.g. integer division by zero: left for run time to report
    replace_by_full(g, n, *r);
    changed = true;
  }
  if (changed) dce(g);
  return changed;
}

bool simplify_algebra(ir::Graph& g) {
  std::set<const Value*> graph_inputs(g.inputs().begin(), g.inputs().end());
  auto feeds_output = [&](const Value* v) {
    for (const ir::Use& u : v->uses())
      if (!u.user) return true;
    return false;
  };
  auto is_const = [](const Value* v, double c) {
    if (!is_full(v)) return false;
    const Scalar s = full_value(v);
    return s.to_double() == c && !s.is_bool();
  };
  bool changed = false;
  for (Node* n : g.nodes()) {
    if (n->outputs().size() != 1) continue;
    Value* out = n->output();
    Value* repl = nullptr;
    const bool integral = !is_floating_point(out->type().dtype);
    switch (n->info().family) {
      case OpFamily::Binary: {
        Value* a = n->input(0);
        Value* b = n->input(1);
        switch (ir::as_binary(n->op())) {
          case ir::BinaryOp::mul:
            if (is_const(b, 1)) repl = a;
            else if (is_const(a, 1)) repl = b;
            break;
          case ir::BinaryOp::div:
            if (is_const(b, 1) && !integral && !n->attrs().get_opt<std::string>(n->op(), "rounding_mode")) repl = a;
            break;
          case ir::BinaryOp::add:
            if (integral && is_const(b, 0)) repl = a;
            else if (integral && is_const(a, 0)) repl = b;
            break;
          case ir::BinaryOp::sub:
            if (integral && is_const(b, 0)) repl = a;
            break;
          default: break;  // no other identity is exact for every input
        }
        break;
      }
      case OpFamily::Ternary:
        // clamp with a bound at the dtype's extreme (a one-sided clamp with a scalar bound,
        // frontend/ops_ternary.cpp) is maximum / minimum, NaN propagating alike.
        if (n->op() == OpKind::clamp) {
          const ScalarType dt = out->type().dtype;
          auto extreme = [&](const Value* v, bool high) {
            if (!is_full(v)) return false;
            const Scalar s = full_value(v);
            if (s.is_bool()) return false;
            if (is_floating_point(dt)) return s.to_double() == (high ? 1 : -1) * std::numeric_limits<double>::infinity();
            return s.is_integral() && s.to_int() == (high ? iinfo_max(dt) : iinfo_min(dt));
          };
          const bool no_lo = extreme(n->input(1), false), no_hi = extreme(n->input(2), true);
          if (no_lo && no_hi) {
            repl = n->input(0);
          } else if (no_lo || no_hi) {
            Node* m = g.create_before(n, no_hi ? OpKind::maximum : OpKind::minimum,
                                      {n->input(0), n->input(no_hi ? 1 : 2)}, ir::AttrList());
            m->output()->set_type(out->type());
            repl = m->output();
          }
        }
        break;
      case OpFamily::Unary:
        if (n->op() == OpKind::neg && !n->input(0)->is_input() && n->input(0)->producer()->op() == OpKind::neg)
          repl = n->input(0)->producer()->input(0);
        break;
      case OpFamily::Cast:
        if (n->op() == OpKind::clone || n->op() == OpKind::detach || n->input(0)->type().dtype == out->type().dtype)
          repl = n->input(0);
        break;
      case OpFamily::View:
        if (n->op() == OpKind::reshape || n->op() == OpKind::expand) {
          if (n->input(0)->type().sizes == out->type().sizes) repl = n->input(0);
        } else if (n->op() == OpKind::permute) {
          const auto& d = n->attr<std::vector<int64_t>>("dims");
          bool id = true;
          for (size_t i = 0; i < d.size(); ++i) id = id && d[i] == static_cast<int64_t>(i);
          if (id) repl = n->input(0);
        }
        break;
      default: break;
    }
    if (!repl || repl->type() != out->type()) continue;
    if (feeds_output(out) && graph_inputs.count(repl)) continue;
    out->replace_all_uses_with(repl);
    changed = true;
  }
  if (changed) dce(g);
  return changed;
}

}  // namespace kiln::passes
