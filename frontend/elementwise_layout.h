// kiln/frontend/elementwise_layout.h — the memory layout of an eager elementwise op's output.
//
// PyTorch's elementwise ops (TensorIterator) give their output the layout of their inputs: a
// unary op on a transposed tensor returns a transposed tensor, an add of two channels-last
// tensors a channels-last one, and where the inputs disagree the output follows their dims'
// order of strides, compared input by input. Code depends on it: `x.t().exp().view(-1)` is an
// error in PyTorch, and strides are part of what a port compares. kiln's eager kernels write
// row-major outputs, so the dispatcher runs an elementwise op on its inputs viewed in the
// chosen dim order (where they are row-major when they share a layout) and views the output
// back (run_eager, frontend/dispatch.cpp). Traced and compiled programs are unaffected.
//
// The rule is TensorIterator's, step for step:
// 1. inputs of one shape that are all row-major (size-1 dims ignored): row-major;
// 2. 4-d inputs of one shape that are all channels-last: channels-last;
// 3. inputs of one shape, each non-overlapping and dense, with equal strides: those strides;
// 4. otherwise the dims are sorted, innermost first, by an insertion sort whose comparison asks
//    each input in turn: a smaller stride goes inner, equal strides put the smaller size inner,
//    and a dim an input broadcasts (stride 0, or size 1 under a larger size) defers to the
//    next input; the output is dense in that order (row-major when the order is the identity).
#pragma once

#include "base/int_array_ref.h"

#include <cstdint>
#include <vector>

namespace kiln {

class TensorImpl;

// Whether the elements of the layout occupy exactly the places of a dense block, each its own
// (PyTorch's is_non_overlapping_and_dense; dims of size 0 or 1 ignored).
bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides);

// The strides of an elementwise op's output of `shape` from `inputs` (each of rank up to the
// shape's, aligned at the right as broadcasting aligns them), by the rule above. Empty when the
// output is row-major, which is also the answer for a rank below 2 or no inputs.
std::vector<int64_t> elementwise_output_strides(IntArrayRef shape, const std::vector<const TensorImpl*>& inputs);

// The dims of `strides` (dense and non-overlapping over `shape`) from the outermost to the
// innermost in memory: the permutation under which an output of these strides is row-major.
// Dims of size 1 keep their relative place among dims of equal stride.
std::vector<int64_t> outer_to_inner(IntArrayRef shape, IntArrayRef strides);

}  // namespace kiln
