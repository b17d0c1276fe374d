// kiln/passes/row_domain.h — what fusion inlines and the domains reductions run over.
//
// Shared by the fuse pass (which decides the groups) and the kernel builder (which builds
// them): which nodes a kernel evaluates inline at its consumer's index, the domain of a
// reduction (input sizes and reduced dims: its kept dims are a row kernel's grid), and
// sizes judged by the symbols' trace-time values for performance choices.
#pragma once

#include "ir/graph.h"
#include "ir/kernel.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::passes {

// Pointwise, cast, view, factory and shape (cat, pad) nodes, and the reads of gather and
// index_select (indexed_read in lower_index.h): evaluated inline wherever read.
bool is_inlinable(const ir::Node* n);
bool is_reduction(const ir::Node* n);
// mm and bmm whose products a Matmul kernel can sum: every dtype but bool (the frontend refuses
// a bool product; the interpreter and the library raise PyTorch's error). Which of them a backend computes in kernels rather than in a library
// is its choice (LowerOptions::extern_lowering returns "" for those).
bool matmul_kernelable(const ir::Node* n);

// The domain of a reduction: input sizes and the (sorted) reduced dims.
struct RowDomain {
  std::vector<ir::Expr> sizes;
  std::vector<int64_t> dims;
  bool operator==(const RowDomain&) const = default;
  std::vector<ir::Expr> kept() const { return pick(false); }
  std::vector<ir::Expr> reduced() const { return pick(true); }
  bool is_reduced(size_t d) const;
  std::vector<ir::Expr> pick(bool reduced) const;
  // The full index from kept (grid) and reduced (stage) indices.
  std::vector<ir::Expr> interleave(const std::vector<ir::Expr>& kept_idx, const std::vector<ir::Expr>& red_idx) const;
  // The index at which a consumer reads the reduction's result at grid row `grid_idx`:
  // the row itself, with a 0 for each reduced dim when the result keeps them.
  std::vector<ir::Expr> row_index(const std::vector<ir::Expr>& grid_idx, bool keepdim) const;
};

struct ReduceInfo {
  RowDomain dom;
  bool keepdim = false;
  ir::ReductionOp op = ir::ReductionOp::sum;
};
ReduceInfo reduce_info(const ir::Node* n);

// The value of e with every symbol at its hint, or nothing when a symbol has none.
std::optional<int64_t> hinted(const ir::Expr& e, const std::map<std::string, int64_t>& hints);
std::optional<int64_t> hinted_numel(const std::vector<ir::Expr>& sizes, const std::map<std::string, int64_t>& hints);

// How a full reduction of an input of `sizes` splits into partials (a split group): over dim 0
// when it is long enough and its rows hold at least kRowSplitMin elements (each partial
// reduces the inner dims with plain index arithmetic),
// else over a fixed number of chunks of the flattened input, each ceil(total / chunks) long
// (the last ones shorter or empty). With `columns` allowed and rows of at least
// kColumnSplitMin elements, each partial is instead a column: it reduces dim 0 at one point of
// the inner dims. With symbolic sizes the choice and the chunk count come from the hints; the
// lengths stay symbolic.
inline constexpr int64_t kColumnSplitMin = 4096;
inline constexpr int64_t kRowSplitMin = 64;
struct SplitLayout {
  bool by_rows = false;
  bool by_columns = false;
  ir::Expr total;   // elements of the input
  ir::Expr chunks;  // partials (the partial kernel's grid)
  ir::Expr chunk;   // elements per partial (flat layout)
  // The partial's reduce-stage extents and the input index it reads at partial grid_expr(0).
  std::vector<ir::Expr> partial_extents(const std::vector<ir::Expr>& sizes) const;
  std::vector<ir::Expr> partial_index(const std::vector<ir::Expr>& sizes) const;
};
SplitLayout split_layout(const std::vector<ir::Expr>& sizes, const std::map<std::string, int64_t>& hints,
                         bool columns);

}  // namespace kiln::passes
