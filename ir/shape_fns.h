// kiln/ir/shape_fns.h — output types of every op from its input types and attributes.
//
// One entry point switching on the op family; each family's function switches over its own
// enum with no default. A bad argument (mismatched dtypes or shapes, a dim out of range, a
// dtype the op does not accept) throws kiln::Error naming the op: "[add] ...".
#pragma once

#include "ir/attr.h"
#include "ir/op.h"
#include "ir/tensor_type.h"

#include <vector>

namespace kiln::ir {

std::vector<TensorType> infer_types(OpKind op, const std::vector<TensorType>& inputs, const AttrList& attrs);

// The result types of an op with the ShapeByDecomposition trait: its decomposition traced on
// `inputs`, which also checks the arguments as the op does. The frontend, which owns the
// decompositions, installs it when the library loads (frontend/decompositions.cpp).
using DecompositionShapes = std::vector<TensorType> (*)(OpKind op, const std::vector<TensorType>& inputs,
                                                        const AttrList& attrs);
void install_decomposition_shapes(DecompositionShapes fn);

// Checks an attribute list against the op's schema (count and types); throws kiln::Error.
void check_attrs(OpKind op, const AttrList& attrs);
// One spatial output size of a convolution (transposed: of its adjoint), PyTorch's formula
// (ir/shape_fns_conv.cpp); the frontend decides "too small" on it with a guard.
Expr conv_output_size(const Expr& in, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation,
                      bool transposed, int64_t output_padding);

}  // namespace kiln::ir
