// kiln/passes/row_domain.cpp — inlinable nodes, reduction domains, hinted sizes.
#include "passes/row_domain.h"

#include "passes/lower_index.h"

#include <algorithm>

namespace kiln::passes {

using ir::Expr;
using ir::OpFamily;

bool is_inlinable(const ir::Node* n) {
  switch (n->info().family) {
    case OpFamily::Unary:
    case OpFamily::Binary:
    case OpFamily::Ternary:
    case OpFamily::Cast:
    case OpFamily::View:
    case OpFamily::Factory:
    case OpFamily::Shape:
    case OpFamily::Random:  // a Philox draw at the element's flat index (ir::KOp::Random)
      return true;
    case OpFamily::Index: return indexed_read_inlinable(n);
    case OpFamily::Reduction:
    case OpFamily::Scan:
    case OpFamily::Matmul:
    case OpFamily::Conv:
    case OpFamily::Sort:
    KILN_CASE_COMPOSITE_FAMILIES:  // decomposed before lowering, or an extern lowering
    case OpFamily::Custom:
      return false;
  }
  return false;
}

bool is_reduction(const ir::Node* n) { return n->info().family == OpFamily::Reduction; }

bool matmul_kernelable(const ir::Node* n) {
  return n->info().family == OpFamily::Matmul && n->output()->type().dtype != ScalarType::Bool;
}

bool RowDomain::is_reduced(size_t d) const {
  for (int64_t x : dims)
    if (static_cast<size_t>(x) == d) return true;
  return false;
}

std::vector<Expr> RowDomain::pick(bool reduced) const {
  std::vector<Expr> out;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (is_reduced(d) == reduced) out.push_back(sizes[d]);
  return out;
}

std::vector<Expr> RowDomain::interleave(const std::vector<Expr>& kept_idx, const std::vector<Expr>& red_idx) const {
  std::vector<Expr> idx;
  size_t k = 0, r = 0;
  for (size_t d = 0; d < sizes.size(); ++d) idx.push_back(is_reduced(d) ? red_idx.at(r++) : kept_idx.at(k++));
  return idx;
}

std::vector<Expr> RowDomain::row_index(const std::vector<Expr>& grid_idx, bool keepdim) const {
  return keepdim ? interleave(grid_idx, std::vector<Expr>(dims.size(), Expr(0))) : grid_idx;
}

ReduceInfo reduce_info(const ir::Node* n) {
  ReduceInfo ri;
  ri.dom.sizes = n->input(0)->type().sizes;
  ri.op = ir::as_reduction(n->op());
  ri.keepdim = n->attr<bool>("keepdim");
  if (ri.op == ir::ReductionOp::argmax || ri.op == ir::ReductionOp::argmin) {
    std::optional<int64_t> dim = n->attrs().get_opt<int64_t>(n->op(), "dim");
    if (dim && !ri.dom.sizes.empty()) {
      ri.dom.dims = {*dim};
    } else {
      for (size_t d = 0; d < ri.dom.sizes.size(); ++d) ri.dom.dims.push_back(static_cast<int64_t>(d));
    }
  } else {
    ri.dom.dims = n->attr<std::vector<int64_t>>("dims");
  }
  return ri;
}

std::optional<int64_t> hinted(const Expr& e, const std::map<std::string, int64_t>& hints) {
  if (auto c = e.maybe_const()) return *c;
  std::vector<std::string> syms;
  e.collect_symbols(syms);
  std::map<std::string, int64_t> b;
  for (const std::string& s : syms) {
    auto it = hints.find(s);
    if (it == hints.end()) return std::nullopt;
    b[s] = it->second;
  }
  return e.evaluate(b);
}

std::optional<int64_t> hinted_numel(const std::vector<Expr>& sizes, const std::map<std::string, int64_t>& hints) {
  Expr n = 1;
  for (const Expr& e : sizes) n = n * e;
  return hinted(n, hints);
}

SplitLayout split_layout(const std::vector<Expr>& sizes, const std::map<std::string, int64_t>& hints,
                         bool columns) {
  SplitLayout l;
  l.total = 1;
  for (const Expr& e : sizes) l.total = l.total * e;
  Expr inner = 1;
  for (size_t d = 1; d < sizes.size(); ++d) inner = inner * sizes[d];
  // Rows of fewer than kRowSplitMin elements are chunked flat instead: a partial per row of 4
  // ([262144, 4]) would be 262144 partials (on a GPU, as many blocks summing 4 elements each).
  const bool long_rows = sizes.size() >= 2 && hinted(sizes[0], hints).value_or(0) >= 16 &&
                         hinted(inner, hints).value_or(0) >= kRowSplitMin;
  l.by_columns = columns && long_rows && hinted(inner, hints).value_or(0) >= kColumnSplitMin;
  l.by_rows = long_rows && !l.by_columns;
  l.chunks = l.by_columns ? inner
             : l.by_rows  ? sizes[0]
                          : Expr(std::min<int64_t>(256, std::max<int64_t>(1, hinted(l.total, hints).value_or(0) / 16384)));
  l.chunk = l.total.is_const() ? Expr((l.total.as_const() + l.chunks.as_const() - 1) / l.chunks.as_const())
                               : ir::floordiv(l.total + l.chunks - 1, l.chunks);
  return l;
}

std::vector<Expr> SplitLayout::partial_extents(const std::vector<Expr>& sizes) const {
  if (by_columns) return {sizes[0]};
  if (by_rows) return std::vector<Expr>(sizes.begin() + 1, sizes.end());
  // Static sizes: no chunk is empty. Symbolic: a chunk past the end has length 0.
  Expr len = ir::min(chunk, total - ir::grid_expr(0) * chunk);
  if (!total.is_const()) len = ir::max(Expr(0), len);
  return {len};
}

std::vector<Expr> SplitLayout::partial_index(const std::vector<Expr>& sizes) const {
  const std::vector<Expr> ext = partial_extents(sizes);
  if (by_columns) {
    std::vector<Expr> idx{ir::stage_expr(0)};
    for (const Expr& i : unravel(ir::grid_expr(0), std::vector<Expr>(sizes.begin() + 1, sizes.end()))) idx.push_back(i);
    return idx;
  }
  if (by_rows) {
    std::vector<Expr> idx{ir::grid_expr(0)};
    for (const Expr& v : loop_vars(ext, ir::stage_expr)) idx.push_back(v);
    return idx;
  }
  return unravel(ir::grid_expr(0) * chunk + ir::stage_expr(0), sizes);
}

}  // namespace kiln::passes
