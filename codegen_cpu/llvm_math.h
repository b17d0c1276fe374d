// kiln/codegen_cpu/llvm_math.h — math functions (kiln's own inline f32 code, else calls through
// one libmvec function each), and IR helpers shared by the scalar emitter's files (private to codegen_cpu).
//
// f32 exp, exp2, expm1, log, log1p, tanh and erf are kiln's own straight-line IR
// (llvm_vecmath.cpp, with its accuracy table in docs/compiler.md). Other transcendental
// functions, and every f64 one, compute through one glibc libmvec function per function and
// type: the widest variant the target has (AVX-512 _ZGVe where the code's level has 512-bit
// vectors, else AVX2 _ZGVd, else SSE _ZGVb), its "home". A call is emitted to a small module
// function `kiln_math_<name>` (noinline, `memory(none) nounwind willreturn`) that puts its
// argument in every lane of the home variant and takes lane 0 back; the call site carries a
// `vector-function-abi-variant` attribute mapping each vector width to the home function or
// to a `kiln_math_<name>_v<lanes>` wrapper that pads narrower vectors into it. The loop
// vectorizer replaces the scalar calls by the vector ones; the declarations are kept in
// `llvm.compiler.used` so that no pass deletes them before it runs, and kiln's loader looks
// external symbols up in libmvec.so.1 first (codegen_cpu/object_loader.cpp); scalar code needs
// it too now (glibc 2.35 or later has every variant named here; Debian 12 has 2.36).
//
// So within one program an element's value never depends on its position: a loop's vector
// body, its scalar remainder, an unvectorized loop and another kernel recomputing the value all
// give the same bits for the same input (glibc's libm and its libmvec variants of different widths differ
// from each other by up to 4 ulp, on up to two thirds of the inputs; an amax over equal inputs
// then broke its tie by position). Code built for another x86-64 level (an exported package's
// x86-64-v3 code on an AVX-512 host) has another home, and may differ from this host's
// kernels in the last bits. The scalar form costs 0.8-2x a libm call (docs/compiler.md). Functions libmvec lacks (lgamma) are plain libm calls, which are
// consistent too; erfinv is emitted inline (the interpreter's algorithm, branch-free).
//
// Accuracy against the interpreter (which calls scalar libm), measured by
// test/test_cpu_scalar.cpp on edge inputs plus a ~7000-value sweep, in ulps of the result
// dtype (AVX-512 libmvec on Zen 4): 4 for erf/log/sigmoid f32; 3 for cos/sin/tan/log10/
// erfinv/sigmoid f64; 2 or less for every other function and dtype; f16/bf16 at most 1. The
// test bounds every transcendental op at 4 ulp (glibc's documented libmvec maximum), and
// requires vector and scalar code to agree bit for bit.
#pragma once

#include "codegen_cpu/llvm_scalar.h"

#include <string_view>

namespace kiln::cpu::detail {

// The math functions with a C library implementation. Unary unless noted.
enum class MathFn : uint8_t {
  exp, exp2, expm1, log, log2, log10, log1p, sin, cos, tan, asin, acos, atan, sinh, cosh, tanh,
  asinh, acosh, atanh, erf, erfc, lgamma,
  pow, atan2, hypot,  // binary
};

// Emits fn(args...) for float or double arguments (the type of args[0]): kiln's own inline
// code where emit_own_math has it, else a call through the function's libmvec variant (above).
llvm::Value* emit_math(ScalarEmitter& e, MathFn fn, llvm::ArrayRef<llvm::Value*> args);

// kiln's own branch-free f32 code for exp, exp2, expm1, log, log1p, tanh and erf
// (llvm_vecmath.cpp), or null for other functions and types.
llvm::Value* emit_own_math(ScalarEmitter& e, MathFn fn, llvm::Value* x);

// erfinv as in runtime/interpreter/interp_unary.cpp (rational first guess, Newton steps on erf / erfc).
llvm::Value* emit_erfinv(ScalarEmitter& e, llvm::Value* y);

// ---- small IR helpers -------------------------------------------------------------------------

bool is_float_dtype(ScalarType t);  // f16, bf16, f32, f64
llvm::Value* fconst(ScalarEmitter& e, llvm::Type* t, double v);
llvm::Value* iconst(llvm::Type* t, uint64_t v);
llvm::Value* is_nan(ScalarEmitter& e, llvm::Value* x);           // fcmp uno x, x
llvm::Value* truthy(ScalarEmitter& e, llvm::Value* x);           // x != 0 (NaN true), any type
llvm::Value* intrinsic1(ScalarEmitter& e, unsigned id, llvm::Value* x);
llvm::Value* intrinsic2(ScalarEmitter& e, unsigned id, llvm::Value* x, llvm::Value* y);
// Rounds a float compute value to the precision of f16/bf16 (identity for other dtypes),
// so that a value of dtype f16 computed in f32 is always exactly representable in f16.
llvm::Value* round_to_dtype(ScalarEmitter& e, ScalarType t, llvm::Value* x);
// Any dtype -> any dtype, in compute types, with the interpreter's convert<To, From>().
llvm::Value* convert(ScalarEmitter& e, ScalarType from, ScalarType to, llvm::Value* x);

// Per-family emitters (llvm_scalar_unary.cpp, llvm_scalar_binary.cpp).
llvm::Value* emit_unary(ScalarEmitter& e, ir::UnaryOp op, ScalarType t, llvm::Value* x);
llvm::Value* emit_binary(ScalarEmitter& e, ir::BinaryOp op, const ir::AttrList& attrs, ScalarType t,
                         llvm::Value* a, llvm::Value* b);

}  // namespace kiln::cpu::detail
