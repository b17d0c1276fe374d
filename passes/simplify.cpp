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

bool only_use_is(const Value* v, const Node* user) {
  return v->uses().size() == 1 && v->uses().front().user == user;
}

// reshape(reshape(x)) is reshape(x); reshape(r), where r is a reduction with keepdim=true read
// by nothing else and the reshape only drops the kept 1s, is the reduction without keepdim (a
// lone reduction as a kernel's root gets the column-sum schedule, passes/lower.cpp: the bias
// gradient of a linear on a 3-D input is one). Null when neither applies.
Value* simplify_reshape(ir::Graph& g, Node* n, const Keep& keep) {
  Value* in = n->input(0);
  if (in->is_input()) return nullptr;
  Node* p = in->producer();
  const ir::TensorType& t = n->output()->type();
  if (p->op() == OpKind::reshape) {
    Node* r = g.create_before(n, OpKind::reshape, {p->input(0)}, n->attrs());
    r->output()->set_type(t);
    return r->output();
  }
  if (p->info().family != OpFamily::Reduction || p->outputs().size() != 1 || !only_use_is(in, n) || (keep && keep(*p)))
    return nullptr;
  const ir::OpInfo& info = p->info();
  const int keepdim = info.schema.attr_index("keepdim");
  const int dims = info.schema.attr_index("dims");
  if (keepdim < 0 || dims < 0 || !p->attr<bool>("keepdim")) return nullptr;
  std::vector<bool> reduced(in->type().sizes.size(), false);
  for (int64_t d : p->attr<std::vector<int64_t>>("dims")) reduced.at(static_cast<size_t>(d)) = true;
  std::vector<ir::Expr> kept;
  for (size_t d = 0; d < reduced.size(); ++d)
    if (!reduced[d]) kept.push_back(in->type().sizes[d]);
  if (kept != t.sizes) return nullptr;
  ir::AttrList attrs = p->attrs();
  attrs.values().at(static_cast<size_t>(keepdim)) = false;
  Node* r = g.create_before(n, p->op(), p->inputs(), std::move(attrs));
  r->output()->set_type(t);
  return r->output();
}

// x with its last two dims swapped, made before `pos`: the source of x when x is itself such
// a swap.
Value* swap_last_two(ir::Graph& g, Node* pos, Value* x) {
  const size_t rank = x->type().sizes.size();
  std::vector<int64_t> d(rank);
  for (size_t i = 0; i < rank; ++i) d[i] = static_cast<int64_t>(i);
  std::swap(d[rank - 2], d[rank - 1]);
  if (!x->is_input() && x->producer()->op() == OpKind::permute && x->producer()->attr<std::vector<int64_t>>("dims") == d)
    return x->producer()->input(0);
  ir::TensorType t = x->type();
  std::swap(t.sizes[rank - 2], t.sizes[rank - 1]);
  Node* p = g.create_before(pos, OpKind::permute, {x}, ir::AttrList({d}));
  p->output()->set_type(t);
  return p->output();
}

// The transpose of a matrix product read by nothing else, (a b)^T, is b^T a^T: the library
// reads transposed operands in place, where the transpose of its result is a copy (a linear's
// weight gradient is one). Null when n is not such a transpose.
Value* transpose_of_product(ir::Graph& g, Node* n, const std::vector<int64_t>& d, const Keep& keep) {
  Value* src = n->input(0);
  if (src->is_input() || !only_use_is(src, n)) return nullptr;
  const OpKind op = src->producer()->op();
  const std::vector<int64_t> swap2 = {1, 0}, swap3 = {0, 2, 1};
  if (!(op == OpKind::mm && d == swap2) && !(op == OpKind::bmm && d == swap3)) return nullptr;
  Node* mm = src->producer();
  if (keep && keep(*mm)) return nullptr;
  Value* bt = swap_last_two(g, n, mm->input(1));
  Value* at = swap_last_two(g, n, mm->input(0));
  Node* r = g.create_before(n, op, {bt, at}, mm->attrs());
  r->output()->set_type(n->output()->type());
  return r->output();
}

// permute(permute(x)) is one permute of x, or x itself when the two cancel; the identity
// permute is x; the transpose of a matrix product is transpose_of_product's. Null otherwise.
Value* simplify_permute(ir::Graph& g, Node* n, const Keep& keep) {
  std::vector<int64_t> d = n->attr<std::vector<int64_t>>("dims");
  if (Value* t = transpose_of_product(g, n, d, keep)) return t;
  Value* src = n->input(0);
  if (!src->is_input() && src->producer()->op() == OpKind::permute) {
    const auto& inner = src->producer()->attr<std::vector<int64_t>>("dims");
    for (int64_t& x : d) x = inner.at(static_cast<size_t>(x));
    src = src->producer()->input(0);
  }
  bool id = true;
  for (size_t i = 0; i < d.size(); ++i) id = id && d[i] == static_cast<int64_t>(i);
  if (id) return src;
  if (src == n->input(0)) return nullptr;
  Node* r = g.create_before(n, OpKind::permute, {src}, ir::AttrList({d}));
  r->output()->set_type(n->output()->type());
  return r->output();
}

}  // namespace

bool fold_constants(ir::Graph& g, const ConstantEvaluator& eval, const Keep& keep) {
  bool changed = false;
  for (Node* n : g.nodes()) {
    if (n->inputs().empty() || n->outputs().size() != 1 || (keep && keep(*n))) continue;
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

bool simplify_algebra(ir::Graph& g, const Keep& keep) {
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
    if (n->outputs().size() != 1 || (keep && keep(*n))) continue;
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
        // where with a constant condition is the branch it picks (a traced copy_ records
        // where(true, value, old) so that the old value keeps a zero gradient, frontend/tensor.cpp).
        if (n->op() == OpKind::where && is_full(n->input(0))) {
          repl = n->input(full_value(n->input(0)).to_bool() ? 1 : 2);
          // A graph input returned as an output is copied (below, such an output keeps its
          // node): a clone of it, which reads nothing of the other branch.
          if (feeds_output(out) && graph_inputs.count(repl) && repl->type() == out->type())
            repl = g.create_before(n, OpKind::clone, {repl}, ir::AttrList())->output();
        }
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
          else if (n->op() == OpKind::reshape) repl = simplify_reshape(g, n, keep);
        } else if (n->op() == OpKind::permute) {
          repl = simplify_permute(g, n, keep);
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
