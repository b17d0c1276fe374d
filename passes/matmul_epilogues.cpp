// kiln/passes/matmul_epilogues.cpp — fold_matmul_epilogues (passes/matmul_epilogues.h).
#include "passes/matmul_epilogues.h"

#include "ir/op.h"
#include "passes/simplify.h"

#include <cmath>
#include <numbers>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kiln::passes {

namespace {

using ir::Expr;
using ir::Node;
using ir::OpKind;
using ir::Value;

Node* producer_of(Value* v, OpKind op) {
  Node* p = v->producer();
  return p && p->op() == op ? p : nullptr;
}

// The only user of v (nullptr when it has several, or is a graph output).
Node* only_user(Value* v) {
  if (v->uses().empty()) return nullptr;
  Node* u = v->uses().front().user;
  for (const ir::Use& use : v->uses())
    if (use.user != u || u == nullptr) return nullptr;
  return u;
}

bool is_full(Value* v, double value) {
  Node* f = producer_of(v, OpKind::full);
  return f && f->attr<Scalar>("value").to_double() == value;
}

// The other operand of a two-input node when one of them is x.
Value* other_operand(Node* n, Value* x) {
  if (n->inputs().size() != 2) return nullptr;
  if (n->input(0) == x) return n->input(1);
  if (n->input(1) == x) return n->input(0);
  return nullptr;
}

Value* converted_from(Value* v, ScalarType from) {
  Node* c = producer_of(v, OpKind::convert_element_type);
  return c && c->input(0)->type().dtype == from ? c->input(0) : nullptr;
}

// An operand of the product that widens a value of dtype `lp`: convert(s), or a reshape or
// permute of convert(s) (a linear of a 3-D input reshapes its widened rows).
struct Narrow {
  Value* source = nullptr;
  Node* view = nullptr;  // to apply to the source again, or nullptr
};

std::optional<Narrow> narrowed(Value* v, ScalarType lp) {
  if (Value* s = converted_from(v, lp)) return Narrow{s, nullptr};
  Node* view = v->producer();
  if (!view || (view->op() != OpKind::reshape && view->op() != OpKind::permute)) return std::nullopt;
  if (Value* s = converted_from(view->input(0), lp)) return Narrow{s, view};
  return std::nullopt;
}

Value* rebuild(ir::Graph& g, const Narrow& n, Node* at) {
  if (!n.view) return n.source;
  return g.create_before(at, n.view->op(), {n.source}, n.view->attrs())->output();
}

struct Activation {
  std::string name;       // "gelu_tanh"
  Value* result = nullptr;
  std::vector<Node*> nodes;  // what computes it from x
};

// gelu's tanh form from x, as frontend/decompositions_activation.cpp writes it:
//   x * sigmoid(((x + x * x * x * 0.044715) * sqrt(2 / pi)) * 2)
// Each intermediate value must be used inside the pattern only; x is used by exactly the four
// nodes that read it.
std::optional<Activation> match_gelu_tanh(Value* x) {
  Node* sq = nullptr;
  for (const ir::Use& u : x->uses())
    if (u.user && u.user->op() == OpKind::mul && u.user->input(0) == x && u.user->input(1) == x) sq = u.user;
  if (!sq) return std::nullopt;
  Node* cube = only_user(sq->output());
  if (!cube || cube->op() != OpKind::mul || other_operand(cube, sq->output()) != x) return std::nullopt;
  Node* scaled = only_user(cube->output());
  if (!scaled || scaled->op() != OpKind::mul) return std::nullopt;
  Value* kappa = other_operand(scaled, cube->output());
  if (!kappa || !is_full(kappa, 0.044715)) return std::nullopt;
  Node* inner = only_user(scaled->output());
  if (!inner || inner->op() != OpKind::add || other_operand(inner, scaled->output()) != x) return std::nullopt;
  Node* by_beta = only_user(inner->output());
  if (!by_beta || by_beta->op() != OpKind::mul) return std::nullopt;
  Value* beta = other_operand(by_beta, inner->output());
  if (!beta || !is_full(beta, std::numbers::sqrt2 * std::numbers::inv_sqrtpi)) return std::nullopt;
  Node* twice = only_user(by_beta->output());
  if (!twice || twice->op() != OpKind::mul) return std::nullopt;
  Value* two = other_operand(twice, by_beta->output());
  if (!two || !is_full(two, 2.0)) return std::nullopt;
  Node* sig = only_user(twice->output());
  if (!sig || sig->op() != OpKind::sigmoid) return std::nullopt;
  Node* out = only_user(sig->output());
  if (!out || out->op() != OpKind::mul || other_operand(out, sig->output()) != x) return std::nullopt;
  const std::set<Node*> inside = {sq, cube, inner, out};
  for (const ir::Use& u : x->uses())
    if (!inside.count(u.user)) return std::nullopt;
  return Activation{"gelu_tanh", out->output(), {sq, cube, scaled, inner, by_beta, twice, sig, out}};
}

// Whether v's only use rounds it to dt.
bool rounds_to(Value* v, ScalarType dt) {
  Node* c = only_user(v);
  return c && c->op() == OpKind::convert_element_type && c->output()->type().dtype == dt;
}

// relu as it reaches the backend: maximum(x, 0), x first (maximum(-0.0, 0) is -0.0, as
// std::max gives; the other order gives +0.0 and does not fold), 0 a full of x's shape or an
// expanded one.
std::optional<Activation> match_relu(Value* x) {
  Node* m = only_user(x);
  if (!m || m->op() != OpKind::maximum || m->input(0) != x || m->input(1) == x) return std::nullopt;
  Value* zero = m->input(1);
  if (Node* e = producer_of(zero, OpKind::expand)) zero = e->input(0);
  // +0.0 only: maximum(y, -0.0) gives -0.0 for a negative y, the epilogue +0.0.
  if (!is_full(zero, 0.0) || std::signbit(zero->producer()->attr<Scalar>("value").to_double()) ||
      zero->type().dtype != x->type().dtype)
    return std::nullopt;
  return Activation{"relu", m->output(), {m}};
}

// Whether the user lowers one of `ops` on the backend (its nodes stay as they are).
bool user_lowered(const MatmulEpilogues& can, std::initializer_list<OpKind> ops) {
  for (OpKind k : ops)
    if (can.user_lowered && can.user_lowered(k)) return true;
  return false;
}

// The activation of x that the backend's epilogue computes as the op does. relu folds only on
// an f32 sum: after a rounding to f16/bf16 its -0.0 could come from a negative sum, which the
// epilogue's relu of the wide sum makes +0.0.
std::optional<Activation> match_activation(Value* x, const MatmulEpilogues& can) {
  if (can.gelu_tanh && !user_lowered(can, {OpKind::mul, OpKind::add, OpKind::sigmoid}))
    if (std::optional<Activation> a = match_gelu_tanh(x)) return a;
  if (can.relu && x->type().dtype == ScalarType::Float && !user_lowered(can, {OpKind::maximum})) return match_relu(x);
  return std::nullopt;
}

// The bias a broadcast operand e of the sum [..., n] stands for: e = expand(bias) with bias
// [n] or [1, ..., 1, n]; when `widened`, of dtype lp under a convert, taken before the expand
// (linear) or after it (addmm_activation's own decomposition).
Value* row_bias(Value* e, Expr n, bool widened, ScalarType lp) {
  if (widened) {
    if (Value* narrow = converted_from(e, lp)) e = narrow, widened = false;
  }
  Node* ex = producer_of(e, OpKind::expand);
  if (!ex) return nullptr;
  Value* b = ex->input(0);
  if (widened && !(b = converted_from(b, lp))) return nullptr;
  const std::vector<Expr>& s = b->type().sizes;
  if (s.empty() || !(s.back() == n)) return nullptr;
  for (size_t i = 0; i + 1 < s.size(); ++i)
    if (!(s[i] == Expr(1))) return nullptr;
  return b;
}

// Folds the product `mm` when it heads the pattern; whether it did.
bool fold_one(ir::Graph& g, Node* mm, const MatmulEpilogues& can) {
  const ir::TensorType& pt = mm->output()->type();
  if (pt.dtype != ScalarType::Float || pt.rank() != 2) return false;
  if (user_lowered(can, {OpKind::mm, OpKind::add, OpKind::convert_element_type})) return false;
  // The operands: f32 ones, or (where the backend's library takes them) f16/bf16 ones both
  // widened to f32.
  Narrow a{mm->input(0)}, b{mm->input(1)};
  ScalarType dt = ScalarType::Float;
  for (ScalarType lp : {ScalarType::Half, ScalarType::BFloat16}) {
    if (!can.low_precision_operands) break;
    std::optional<Narrow> la = narrowed(mm->input(0), lp), lb = narrowed(mm->input(1), lp);
    if (la && lb) a = *la, b = *lb, dt = lp;
  }
  const bool widened = dt != ScalarType::Float;
  // Optionally reshaped ([m, n] -> [..., n], the rows split), then the sum with the bias.
  Value* p = mm->output();
  Node* user = only_user(p);
  Node* reshape = nullptr;
  if (user && user->op() == OpKind::reshape) {
    const std::vector<Expr>& rs = user->output()->type().sizes;
    Expr rows = 1;
    for (size_t i = 0; i + 1 < rs.size(); ++i) rows = rows * rs[i];
    if (rs.empty() || !(rs.back() == pt.sizes[1]) || !(rows == pt.sizes[0])) return false;
    reshape = user;
    p = user->output();
    user = only_user(p);
  }
  if (!user || user->op() != OpKind::add || !(user->output()->type().sizes == p->type().sizes)) return false;
  Value* bias = row_bias(other_operand(user, p), pt.sizes[1], widened, dt);
  if (!bias || (!widened && bias->type().dtype != dt)) return false;
  // Without low-precision operands, an f16/bf16 linear (widened operands, a sum only rounded)
  // has its bias added by the rounding kernel for free: folding would only add a kernel that
  // widens the bias. (An f32 linear whose result is then converted folds.)
  for (ScalarType lp : {ScalarType::Half, ScalarType::BFloat16})
    if (!can.low_precision_operands && rounds_to(user->output(), lp) && narrowed(mm->input(0), lp) &&
        narrowed(mm->input(1), lp))
      return false;
  // The result: the sum, then the activation if it folds, rounded to the operands' dtype when
  // widened.
  Value* y = user->output();
  std::string act = "none";
  if (!widened) {
    if (std::optional<Activation> f = match_activation(y, can)) act = f->name, y = f->result;
  } else if (std::optional<Activation> f = match_activation(y, can); f && rounds_to(f->result, dt)) {
    act = f->name, y = only_user(f->result)->output();  // the activation, then one rounding
  } else {
    if (!rounds_to(y, dt)) return false;
    y = only_user(y)->output();  // the rounded sum
    if (Node* up = only_user(y); up && up->op() == OpKind::convert_element_type &&
                                 up->output()->type().dtype == ScalarType::Float) {
      // gelu widens the rounded sum again and rounds its result: it folds with the sum, which
      // then rounds once. Not relu: relu of the rounded sum keeps a -0.0 that relu of the
      // wide sum makes +0.0.
      if (std::optional<Activation> f = match_activation(up->output(), {.gelu_tanh = can.gelu_tanh, .low_precision_operands = true, .user_lowered = can.user_lowered});
          f && rounds_to(f->result, dt))
        act = f->name, y = only_user(f->result)->output();
    }
  }
  // The node, on the bias row itself (a value a library call reads in place, which the op
  // broadcasts over the rows); reshaped back when the product was.
  Node* at = y->producer();
  std::vector<Expr> n1 = {pt.sizes[1]};
  if (bias->type().rank() != 1) bias = g.create_before(at, OpKind::reshape, {bias}, ir::AttrList({n1}))->output();
  Value* ra = rebuild(g, a, at);
  Value* rb = rebuild(g, b, at);
  Value* r = g.create_before(at, OpKind::addmm_activation, {bias, ra, rb}, ir::AttrList({act}))->output();
  if (reshape) r = g.create_before(at, OpKind::reshape, {r}, ir::AttrList({y->type().sizes}))->output();
  y->replace_all_uses_with(r);
  return true;
}

}  // namespace

bool fold_matmul_epilogues(ir::Graph& g, const MatmulEpilogues& epilogues) {
  std::vector<Node*> products;
  for (Node* n : g.nodes())
    if (n->op() == OpKind::mm) products.push_back(n);
  bool changed = false;
  for (Node* mm : products) changed |= fold_one(g, mm, epilogues);
  if (changed) dce(g);  // what computed the folded values
  return changed;
}

}  // namespace kiln::passes
