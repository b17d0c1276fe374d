// kiln/passes/lower_index.h — index arithmetic for lowering: views and data movement as
// index remapping, linear offsets, and small reduction tables.
//
// view_source_index answers "which element of the view's input does element `idx` of the
// view read?" for every View prim; shape_source_pieces answers it for cat and constant_pad,
// whose elements come from one of several sources chosen by a predicate on the index.
#pragma once

#include "ir/graph.h"
#include "ir/kernel.h"

#include <string>
#include <vector>

namespace kiln::passes {

// sum(idx[i] * strides[i]).
ir::Expr linear_index(const std::vector<ir::Expr>& idx, const std::vector<ir::Expr>& strides);
// Row-major multi-index of `flat` in a tensor of `sizes` (dims of size 1 give 0).
std::vector<ir::Expr> unravel(const ir::Expr& flat, const std::vector<ir::Expr>& sizes);
// The index variable of a loop of `extent`: 0 when the extent is 1 (the loop runs once).
ir::Expr loop_var(const ir::Expr& extent, const ir::Expr& var);
// loop_var of each extent with its variable: var(0), var(1), ... (ir::grid_expr or
// ir::stage_expr).
std::vector<ir::Expr> loop_vars(const std::vector<ir::Expr>& extents, ir::Expr (*var)(size_t));
// A kernel's grid over `extents`, walked in `order` (positions into extents; empty: in order),
// without the leading dims of extent 1, so that the first grid dim, the one a backend shares
// among its threads, is a real one (a batch of 1 would otherwise run on one thread). Sets *grid
// to the extents walked and returns the index of every dim of `extents`: its grid variable, or 0.
std::vector<ir::Expr> grid_vars(const std::vector<ir::Expr>& extents, const std::vector<size_t>& order,
                                std::vector<ir::Expr>* grid);

// The index into the input of view node `n` read by element `idx` of its output.
std::vector<ir::Expr> view_source_index(const ir::Node* n, const std::vector<ir::Expr>& idx);

// One source of a cat / constant_pad element: input `input` at `index` (input -1: the pad
// value) where `predicate` (a 0/1 Expr) holds; `always`: no predicate needed.
struct PieceIndex {
  int input = -1;
  std::vector<ir::Expr> index;
  ir::Expr predicate;
  bool always = false;
};
// Pieces in priority order: the first whose predicate holds supplies the element, the last
// is the default.
std::vector<PieceIndex> shape_source_pieces(const ir::Node* n, const std::vector<ir::Expr>& idx);

// gather and index_select read one element of self per output element, at a position taken
// from the index tensor: out[i] = self[i with dim replaced by index[...]]. A kernel computes
// them inline (a load of the index, a bounds check that raises the op's error, a load of self
// at the checked position, ir::value_expr): index_select's index 1-D, gather's of self's rank.
// gather's other coordinates are the output's own; where the shapes do not prove the index no
// larger than self along a dim (static or equal sizes), that coordinate is checked against
// self's size too (`unproven`), so that a graph whose sizes break the rule raises the op's error
// instead of reading outside self. 0-dim operands stay library calls.
bool indexed_read_inlinable(const ir::Node* n);
struct IndexedRead {
  std::vector<ir::Expr> index_at;  // the element of the index tensor read for output element idx
  int64_t dim = 0;                 // the dim of self the index picks
  ir::Expr bound;                  // self's size along dim
  std::vector<int64_t> unproven;   // gather: the other dims of self whose coordinate is checked
};
IndexedRead indexed_read(const ir::Node* n, const std::vector<ir::Expr>& idx);
// The element of self read for output element idx when the index holds `picked`.
std::vector<ir::Expr> indexed_source(const IndexedRead& r, const std::vector<ir::Expr>& idx, const ir::Expr& picked);
// The dims d (other than skip_dim; -1: none) along which index.size(d) <= other.size(d) is not
// proven: by the sizes themselves (equal, or constants in order) or, under a trace, by its
// ShapeEnv (a guard the shape function recorded).
std::vector<int64_t> unproven_dims(const std::vector<ir::Expr>& index, const std::vector<ir::Expr>& other,
                                   int64_t skip_dim);

// scatter, scatter_add and scatter_reduce write into a copy of self: for every element i of the
// index, out[i with dim replaced by index[i]] = src[i] (or folds it in). Kernels compute them
// (passes/lower.cpp, the Scatter group) when every operand has rank >= 1. One grid point walks
// one line of the index along `dim` in order (an ordered stage), so that repeated positions end
// as the interpreter's do: the last write wins, and folds run in row-major order.
// scatter_reduce's "mean" also counts the values each position receives (a temporary beside the
// output) and divides at the end. Where the shapes do not prove the index no larger than src
// (along a dim) or than self (outside `dim`), that coordinate of the src read or of the write is
// checked (IndexedWrite::unproven_src, unproven_self), as gather's are.
bool indexed_write_kernelable(const ir::Node* n);
// The lines along `dim` of a tensor of some sizes, one per grid point, walked in order (a
// scatter's index lines, a scan's lines): the grid is the sizes without `dim`. With a tile
// (dim not the last), a grid point walks `tile` consecutive elements of the last dim at each
// position of its line instead of one, and the last grid dim counts the tiles, so that a CPU
// thread reads and writes rows instead of columns (LowerOptions::line_tile).
struct LineWalk {
  int64_t dim = 0;
  std::vector<ir::Expr> grid;
  int64_t tile = 0;
  ir::Expr last;  // the size of the last dim (tile > 0)
  // The stage extents of a pass over `n` positions of the line: {n}, or {n, this tile's elements}.
  std::vector<ir::Expr> line_extents(const ir::Expr& n) const;
  // The element at grid index `grid_idx` and stage index `stage_idx` (line position[, tile element]).
  std::vector<ir::Expr> at(const std::vector<ir::Expr>& grid_idx, const std::vector<ir::Expr>& stage_idx) const;
};
LineWalk line_walk(const std::vector<ir::Expr>& sizes, int64_t dim, int64_t tile);

// A scatter's walk: the index's lines.
struct IndexedWrite : LineWalk {
  ir::Expr length;  // the index's size along dim: the line's elements, in order
  ir::Expr bound;   // self's size along dim
  // The index spans self outside `dim` (equal sizes): the grid point copies self's whole line
  // (tile) before writing into it, and one kernel does everything. Otherwise a first kernel
  // copies self.
  bool whole_lines = false;
  std::vector<int64_t> unproven_src, unproven_self;
};
IndexedWrite indexed_write(const ir::Node* n, int64_t tile = 0);

// Reductions whose partial results combine with the same op (not argmax/argmin): a full
// reduction may be split into partials, and the outer-reduction tile schedule applies.
bool split_supported(ir::ReductionOp op);
bool tile_supported(ir::ReductionOp op);

// The runtime parameters a kernel reads: symbols of its Exprs other than loop variables.
std::vector<std::string> collect_params(const ir::Kernel& k);

}  // namespace kiln::passes
