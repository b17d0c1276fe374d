// kiln/passes/online_softmax.cpp — online_softmax (passes/online_softmax.h).
#include "passes/online_softmax.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kiln::passes {

namespace {

// Whether value `a` of stage `sa` and value `b` of stage `sb` are computed the same way: the
// same instructions (loads of the same element, the same ops, constants and attributes) over
// the same values from outside the stages. Only loads, constants, index values and elementwise
// computes count; anything else (a check, a draw, a carry) is not repeated.
bool same_value(const ir::KStage& sa, int a, const ir::KStage& sb, int b, std::set<std::pair<int, int>>& equal) {
  if (equal.count({a, b})) return true;  // a DAG: each pair is compared once
  const ir::KInst* ia = ir::body_inst(sa, a);
  const ir::KInst* ib = ir::body_inst(sb, b);
  if (!ia || !ib) return !ia && !ib && a == b;
  if (ia->kind != ib->kind || ia->dtype != ib->dtype || ia->operands.size() != ib->operands.size()) return false;
  switch (ia->kind) {
    case ir::KOp::Load: {
      // An index that names values of the stage (a gather's, v<id>) would need them matched too.
      if (ir::reads_values(ia->index) || ia->arg != ib->arg || !(ia->index == ib->index)) return false;
      break;
    }
    case ir::KOp::Const:
      if (!(ia->value == ib->value)) return false;
      break;
    case ir::KOp::Index:
      if (!(ia->index == ib->index)) return false;
      break;
    case ir::KOp::Compute:
      if (ia->op != ib->op || !(ia->attrs == ib->attrs)) return false;
      break;
    case ir::KOp::Store:
    case ir::KOp::Check:
    case ir::KOp::Random:
    case ir::KOp::Carry:
    case ir::KOp::Update:
      return false;
  }
  for (size_t i = 0; i < ia->operands.size(); ++i)
    if (!same_value(sa, ia->operands[i], sb, ib->operands[i], equal)) return false;
  equal.insert({a, b});
  return true;
}

// The instructions of `st` that value `id` is computed from, itself included.
void inputs_of(const ir::KStage& st, int id, std::set<int>& seen) {
  const ir::KInst* in = ir::body_inst(st, id);
  if (!in || !seen.insert(id).second) return;
  for (int op : in->operands) inputs_of(st, op, seen);
}

// Whether `b` is the sum of exp(x - max) over `a`'s values x. Beside the exponentials its body
// may only compute and store values elementwise (softmax stores them), never check, draw or
// carry, nor store where data says.
bool sums_exponentials_of(const ir::KStage& a, const ir::KStage& b) {
  if (b.kind != ir::StageKind::Reduce || b.reduce_op != ir::ReductionOp::sum || b.extents != a.extents ||
      !is_floating_point(b.acc_dtype) || !(b.vectorize == ir::KVectorize{}))
    return false;
  const ir::KInst* x = ir::body_inst(a, a.yield);
  const ir::KInst* e = ir::body_inst(b, b.yield);
  const bool wide = x && (x->dtype == ScalarType::Float || x->dtype == ScalarType::Double);  // f16 rounds each step
  if (!wide || !e || e->kind != ir::KOp::Compute || e->op != ir::OpKind::exp ||
      e->dtype != x->dtype || element_size(b.acc_dtype) < element_size(ir::compute_dtype(x->dtype)))
    return false;
  const ir::KInst* d = ir::body_inst(b, e->operands.at(0));
  std::set<std::pair<int, int>> equal;
  if (!d || d->kind != ir::KOp::Compute || d->op != ir::OpKind::sub || d->dtype != x->dtype ||
      d->operands.at(1) != a.result || !same_value(a, a.yield, b, d->operands.at(0), equal))
    return false;
  for (const ir::KInst& in : b.body) {
    const bool plain = in.kind == ir::KOp::Load || in.kind == ir::KOp::Const || in.kind == ir::KOp::Index ||
                       in.kind == ir::KOp::Compute || in.kind == ir::KOp::Store;
    const bool indexed = in.kind == ir::KOp::Load || in.kind == ir::KOp::Store || in.kind == ir::KOp::Index;
    if (!plain || (indexed && ir::reads_values(in.index))) return false;
  }
  return true;
}

// The arguments that stage `st` loads or stores.
std::set<int> args_of(const ir::KStage& st, ir::KOp kind) {
  std::set<int> args;
  for (const ir::KInst& in : st.body)
    if (in.kind == kind) args.insert(in.arg);
  return args;
}

// What is left of sum stage `b` once its max and sum fold into the max's stage: its stores, as
// a loop stage that computes again what they store (the exponentials against the final max).
// False when nothing is stored.
bool keep_stores(ir::KStage& b) {
  std::set<int> needed;
  bool stores = false;
  for (const ir::KInst& in : b.body)
    if (in.kind == ir::KOp::Store) {
      stores = true;
      inputs_of(b, in.operands.at(0), needed);
    }
  if (!stores) return false;
  std::vector<ir::KInst> body;
  for (ir::KInst& in : b.body)
    if (in.kind == ir::KOp::Store || needed.count(in.id)) body.push_back(std::move(in));
  ir::KStage loop;
  loop.kind = ir::StageKind::Loop;
  loop.extents = std::move(b.extents);
  loop.body = std::move(body);
  b = std::move(loop);
  return true;
}

// Joins loop stage `b` (what `keep_stores` left) into the loop stage `c` after it over the
// same nest, when every load of `c` from an argument `b` stores reads the element `b` stored
// in the same iteration: those loads take the stored values instead (softmax's normalization
// reads the exponentials back), and a store of `b` that `c` overwrites at the same element is
// dropped. Each thread walks the same iterations of both stages, so no iteration reads
// another's store.
bool join_into_next(const ir::Kernel& k, ir::KStage& b, ir::KStage& c) {
  if (c.kind != ir::StageKind::Loop || c.ordered || c.extents != b.extents || !(c.vectorize == ir::KVectorize{}))
    return false;
  // c's stores would land before b's later iterations read: b may not read what c stores.
  const std::set<int> read_by_b = args_of(b, ir::KOp::Load);
  for (int arg : args_of(c, ir::KOp::Store))
    if (read_by_b.count(arg)) return false;
  std::map<int, const ir::KInst*> stored;  // argument -> b's store of it
  for (const ir::KInst& in : b.body) {
    if (in.kind != ir::KOp::Store) continue;
    auto [it, fresh] = stored.emplace(in.arg, &in);
    if (!fresh && !(it->second->index == in.index)) return false;  // two elements of one argument
    it->second = &in;
  }
  std::map<int, int> forwarded;  // c's load -> the value b stored there
  std::set<int> stored_by_c;     // arguments c has stored so far, in body order
  for (const ir::KInst& in : c.body) {
    const bool indexed = in.kind == ir::KOp::Load || in.kind == ir::KOp::Store || in.kind == ir::KOp::Index;
    if (indexed && ir::reads_values(in.index)) return false;
    const auto by_b = stored.find(in.arg);
    if (in.kind == ir::KOp::Store && by_b != stored.end() && !(by_b->second->index == in.index))
      return false;  // a later iteration's b would overwrite what c stored at another element
    if (in.kind == ir::KOp::Store) stored_by_c.insert(in.arg);
    if (in.kind != ir::KOp::Load || by_b == stored.end()) continue;
    // The element b stored in this iteration, in the argument's dtype, not yet stored again by c.
    const ir::KInst& s = *by_b->second;
    const ScalarType dt = k.args.at(static_cast<size_t>(in.arg)).dtype;
    if (!(s.index == in.index) || s.dtype != in.dtype || s.dtype != dt || stored_by_c.count(in.arg)) return false;
    forwarded[in.id] = s.operands.at(0);
  }
  std::set<int> overwritten;
  for (const ir::KInst& in : c.body)
    if (in.kind == ir::KOp::Store && stored.count(in.arg) && stored.at(in.arg)->index == in.index) overwritten.insert(in.arg);
  std::vector<ir::KInst> body;
  for (ir::KInst& in : b.body)
    if (in.kind != ir::KOp::Store || !overwritten.count(in.arg)) body.push_back(std::move(in));
  for (ir::KInst& in : c.body) {
    if (forwarded.count(in.id)) continue;
    for (int& op : in.operands)
      if (auto f = forwarded.find(op); f != forwarded.end()) op = f->second;
    body.push_back(std::move(in));
  }
  c.body = std::move(body);
  return true;
}

}  // namespace

bool online_softmax(ir::Kernel& k, const ScheduleTarget&) {
  if (k.schedule.outer_reduction) return false;  // a column's reduce stage is alone
  bool changed = false;
  for (size_t i = 0; i < k.stages.size(); ++i) {
    ir::KStage& a = k.stages[i];
    if (a.kind != ir::StageKind::Reduce || a.reduce_op != ir::ReductionOp::amax || a.sum_exp >= 0 ||
        a.extents.empty() || !(a.vectorize == ir::KVectorize{}))
      continue;
    std::set<int> stored_between;  // B's sum moves up to A: the stages between must not store what it reads
    for (size_t j = i + 1; j < k.stages.size(); ++j) {
      ir::KStage& b = k.stages[j];
      if (sums_exponentials_of(a, b)) {
        // B's values must be A's: B may not read what A, a stage between or B itself stores.
        const std::set<int> by_a = args_of(a, ir::KOp::Store), by_b = args_of(b, ir::KOp::Store);
        bool clash = false;
        for (int arg : args_of(b, ir::KOp::Load))
          clash |= stored_between.count(arg) > 0 || by_a.count(arg) > 0 || by_b.count(arg) > 0;
        if (clash) break;
        a.sum_exp = b.result;
        a.sum_exp_dtype = b.acc_dtype;
        if (!keep_stores(b)) k.stages.erase(k.stages.begin() + static_cast<std::ptrdiff_t>(j));
        else if (j + 1 < k.stages.size() && join_into_next(k, b, k.stages[j + 1]))
          k.stages.erase(k.stages.begin() + static_cast<std::ptrdiff_t>(j));
        changed = true;
        break;
      }
      const std::set<int> s = args_of(b, ir::KOp::Store);
      stored_between.insert(s.begin(), s.end());
    }
  }
  return changed;
}

bool online_softmax(ir::ExecPlan& plan, const ScheduleTarget& t) { return for_each_kernel(plan, t, online_softmax); }

}  // namespace kiln::passes
