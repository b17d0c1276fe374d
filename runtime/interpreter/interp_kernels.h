// kiln/runtime/interpreter/interp_kernels.h — the interpreter's per-family implementations (internal).
//
// interpret_op() switches on the op family and calls one of these, defined in
// interp_<family>.cpp; each switches over its family's enum with no default. Inputs are eager CPU tensors whose dtypes and shapes the
// shape functions have already checked; outputs are fresh contiguous tensors (views excepted).
#pragma once

#include "frontend/tensor.h"
#include "ir/attr.h"
#include "ir/op.h"

#include <vector>

namespace kiln::rt::interp {

// SymInt attributes, which arrive as plain integers or as (constant) expressions
// (interp_factory.cpp).
int64_t sym_int(const ir::AttrValue& v);
std::vector<int64_t> sym_ints(const ir::AttrValue& v);

// A fresh contiguous CPU tensor (uninitialized).
Tensor empty_contiguous(IntArrayRef sizes, ScalarType dtype);

Tensor unary(ir::UnaryOp op, const Tensor& a);
Tensor binary(ir::BinaryOp op, const Tensor& a, const Tensor& b, const ir::AttrList& attrs);
Tensor ternary(ir::TernaryOp op, const Tensor& a, const Tensor& b, const Tensor& c);
Tensor cast(ir::CastOp op, const Tensor& a, const ir::AttrList& attrs);
// Converts every element of src into dst (same sizes; any dtypes, any strides).
void copy_into(const Tensor& dst, const Tensor& src);
Tensor reduction(ir::ReductionOp op, const Tensor& a, const ir::AttrList& attrs);
Tensor scan(ir::ScanOp op, const Tensor& a, const ir::AttrList& attrs);
Tensor view(ir::ViewOp op, const Tensor& a, const ir::AttrList& attrs);
Tensor shape(ir::ShapeOp op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs);
Tensor index(ir::IndexOp op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs);
Tensor factory(ir::FactoryOp op, const ir::AttrList& attrs);
Tensor random(ir::RandomOp op, const ir::AttrList& attrs);
Tensor matmul(ir::MatmulOp op, const Tensor& a, const Tensor& b);
Tensor conv(ir::ConvOp op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs);
Tensor sort(ir::SortOp op, const Tensor& a, const ir::AttrList& attrs);

}  // namespace kiln::rt::interp
