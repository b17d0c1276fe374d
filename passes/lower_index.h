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
// at the checked position, ir::value_expr), when the shapes make every other coordinate of
// self provably in bounds: gather's index no larger than self outside `dim` (static or equal
// sizes), index_select's index 1-D. Otherwise they stay library calls.
bool indexed_read_inlinable(const ir::Node* n);
struct IndexedRead {
  std::vector<ir::Expr> index_at;  // the element of the index tensor read for output element idx
  int64_t dim = 0;                 // the dim of self the index picks
  ir::Expr bound;                  // self's size along dim
};
IndexedRead indexed_read(const ir::Node* n, const std::vector<ir::Expr>& idx);
// The element of self read for output element idx when the index holds `picked`.
std::vector<ir::Expr> indexed_source(const IndexedRead& r, const std::vector<ir::Expr>& idx, const ir::Expr& picked);

// Reductions whose partial results combine with the same op (not argmax/argmin): a full
// reduction may be split into partials, and the outer-reduction tile schedule applies.
bool split_supported(ir::ReductionOp op);
bool tile_supported(ir::ReductionOp op);

// The runtime parameters a kernel reads: symbols of its Exprs other than loop variables.
std::vector<std::string> collect_params(const ir::Kernel& k);

}  // namespace kiln::passes
