// kiln/passes/split_reductions.cpp — split_reductions (passes/split_reductions.h).
#include "passes/split_reductions.h"

#include "ir/op.h"
#include "passes/kernel_builder.h"

#include <optional>
#include <vector>

namespace kiln::passes {

namespace {

using ir::Expr;
using ir::Node;
using ir::OpKind;

bool splittable_op(OpKind op) {
  switch (op) {
    case OpKind::sum:
    case OpKind::prod:
    case OpKind::amax:
    case OpKind::amin:
    case OpKind::any:
    case OpKind::all: return true;
    default: return false;
  }
}

// The chunk count for K results of L elements each (1: leave the reduction alone). Split rows
// are also cut to at most kMaxRowChunk elements, so that the partials' row kernel unrolls its
// items (passes/schedule_launch.cpp, row_items: 32 per thread of 1024).
int64_t chunks_for(int64_t k, int64_t l, bool row, int64_t sms) {
  const int64_t want = row ? 4 * sms : 256 * sms;
  const int64_t min_chunk = row ? kMinRowChunk : kMinColumnChunk;
  int64_t c = 1;
  while (k * c < want && l % (2 * c) == 0 && l / (2 * c) >= min_chunk) c *= 2;
  if (row && c > 1)
    while (l / c > kMaxRowChunk && l % (2 * c) == 0 && l / (2 * c) >= min_chunk) c *= 2;
  return c;
}

// Rewrites `n` when it qualifies; whether it did.
bool split_one(ir::Graph& g, Node* n, int64_t sms) {
  const ir::TensorType& xt = n->input(0)->type();
  std::vector<int64_t> sizes;
  for (const Expr& e : xt.sizes) {
    const std::optional<int64_t> c = e.maybe_const();
    if (!c) return false;
    sizes.push_back(*c);
  }
  const std::vector<int64_t>& dims = n->attrs().get<std::vector<int64_t>>(n->op(), "dims");
  if (dims.empty()) return false;
  for (size_t i = 1; i < dims.size(); ++i)
    if (dims[i] != dims[i - 1] + 1) return false;  // one run of consecutive dims
  const auto first = static_cast<size_t>(dims.front()), last = static_cast<size_t>(dims.back());
  int64_t l = 1, k = 1;
  for (size_t d = 0; d < sizes.size(); ++d) (d >= first && d <= last ? l : k) *= sizes[d];
  if (k <= 1 || l <= 1) return false;  // one result: fusion splits it; nothing to reduce
  const bool row = last + 1 == sizes.size();
  const int64_t c = chunks_for(k, l, row, sms);
  if (c < 2) return false;

  std::vector<Expr> shape;
  for (size_t d = 0; d < first; ++d) shape.emplace_back(sizes[d]);
  shape.emplace_back(c);
  shape.emplace_back(l / c);
  for (size_t d = last + 1; d < sizes.size(); ++d) shape.emplace_back(sizes[d]);
  // Partials in the dtype the kernels accumulate in (f64 for float sums and products).
  const ScalarType dt = n->output()->type().dtype;
  const ScalarType acc = lowering::accumulate_dtype(ir::as_reduction(n->op()), xt.dtype, dt);
  const bool widen = acc != dt;
  ir::Value* x = g.create_before(n, OpKind::reshape, {n->input(0)}, ir::AttrList({shape}))->output(0);
  if (widen) x = g.create_before(n, OpKind::convert_element_type, {x}, ir::AttrList({acc}))->output(0);
  const auto at = static_cast<int64_t>(first);
  ir::Value* p = g.create_before(n, n->op(), {x}, ir::AttrList({std::vector<int64_t>{at + 1}, false}))->output(0);
  ir::Value* y = g.create_before(n, n->op(), {p}, ir::AttrList({std::vector<int64_t>{at}, false}))->output(0);
  if (widen) y = g.create_before(n, OpKind::convert_element_type, {y}, ir::AttrList({dt}))->output(0);
  if (!(y->type().sizes == n->output()->type().sizes))  // keepdim: the reduced dims back as 1s
    y = g.create_before(n, OpKind::reshape, {y}, ir::AttrList({n->output()->type().sizes}))->output(0);
  n->output()->replace_all_uses_with(y);
  g.erase(n);
  return true;
}

}  // namespace

bool split_reductions(ir::Graph& g, const ScheduleTarget& t) {
  const int64_t sms = t.sms > 0 ? t.sms : kAssumedSms;
  std::vector<Node*> candidates;
  for (Node* n : g.nodes())
    if (splittable_op(n->op())) candidates.push_back(n);
  bool changed = false;
  for (Node* n : candidates) changed |= split_one(g, n, sms);
  return changed;
}

}  // namespace kiln::passes
