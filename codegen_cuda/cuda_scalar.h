// kiln/codegen_cuda/cuda_scalar.h — CUDA C spelling of scalar types, constants, casts and ops (internal).
//
// The pieces of the CUDA emitter that know about one scalar at a time: the C type a dtype is
// stored as and computed in (f16/bf16 compute in float, bool computes as `bool` and is stored
// as an unsigned char), literals, conversions with the interpreter's semantics, the rendering
// of every Unary/Binary/Ternary/Cast prim of ir/ops.def as a C expression over already named
// operands, index expressions (ir::Expr) with Python floor semantics, and the device prelude
// those expressions call into (cuda_prelude.cpp). Pure string building: no CUDA headers.
#pragma once

#include "base/dtype.h"
#include "base/scalar.h"
#include "ir/expr.h"
#include "ir/kernel.h"
#include "ir/op.h"

#include <string>
#include <vector>

namespace kiln::cuda::detail {

// The C type values of `t` are computed in: float for f16/bf16/f32, bool, kiln_i64, ...
std::string compute_type(ScalarType t);
// The C type elements of `t` are stored as: __half, __nv_bfloat16, kiln_u8 for bool, ...
std::string storage_type(ScalarType t);

// A literal of compute_type(t) holding v converted to t (exact; inf and NaN included).
std::string literal(const Scalar& v, ScalarType t);
// The smallest / largest value of t as a compute_type(t) literal (-inf / +inf for floats).
std::string lowest_literal(ScalarType t);
std::string highest_literal(ScalarType t);

// Converts the compute value `x` of dtype `from` to dtype `to` (a compute value again) with
// PyTorch CPU semantics: to bool is x != 0, floating -> integer goes through int64 for int64
// and uint8 and through int32 for int32, int16 and int8 (NaN and out-of-range give the
// intermediate's lowest value), integers wrap, a result of f16/bf16 is rounded to that type.
std::string convert(const std::string& x, ScalarType from, ScalarType to);
// Element `elem` (an lvalue of storage_type(t)) as a compute value, and back.
std::string load_value(const std::string& elem, ScalarType t);
std::string store_value(const std::string& x, ScalarType t);

// The C expression for a Compute instruction: `operands` are the C names of its operands,
// `operand_dtype` the dtype of the first operand that is not a condition (where's second).
// Throws InternalError for a dtype the op does not accept.
std::string render_compute(const ir::KInst& in, const std::vector<std::string>& operands, ScalarType operand_dtype);

// An index expression as a kiln_i64 C expression (floordiv/mod with Python semantics).
std::string render_expr(const ir::Expr& e);
// The same in 32-bit int arithmetic (symbols cast to int), for a kernel whose every value of
// every subexpression fits (ir::KLaunch::index32, ir::indices_fit_32_bits).
std::string render_expr32(const ir::Expr& e);

// The device prelude: fixed-width types, helpers, block reduction; the f16/bf16 headers when
// asked for.
std::string prelude(bool half, bool bfloat16);

}  // namespace kiln::cuda::detail
