// kiln/test/test_cpu_scalar.cpp — the LLVM scalar emitter (codegen_cpu/llvm_scalar.h) and the
// JIT (codegen_cpu/jit.h) against the reference interpreter.
//
// A small harness builds, for one Compute instruction, an LLVM function
// `void f(void* const* args, const int64_t*, int64_t begin, int64_t end)` that loops over the
// elements (load, from_storage, emit_compute, to_storage, store), JITs it, and compares it
// with rt::interpret_op on edge inputs (NaN, +-inf, -0, subnormals, integer extremes, negative
// divisors, shift counts...) for every unary, binary, ternary and cast prim and every dtype the
// op's shape function accepts. The loops vectorize, so most elements go through the vector
// code (kiln's own f32 math, libmvec for f64) and the tail through scalar code. Results must be
// bit-identical (all NaNs count as equal), except for the transcendental functions, whose
// difference in ulps of the result dtype is bounded per op (kUlpBounds), measured on the edges
// plus a sweep; the maximum per op and dtype is printed. Reductions run through a small loop.
#include "base/cpu_level.h"
#include "codegen_cpu/jit.h"
#include "codegen_cpu/llvm_scalar.h"
#include "base/dtype.h"
#include "base/error.h"
#include "base/half.h"
#include "ir/op.h"
#include "ir/shape_fns.h"
#include "runtime/interpreter/interpreter.h"
#include "test_support/make.h"

#include <gtest/gtest.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cpu {
namespace {

// The tests' kernels stay linked for the rest of the process.
KernelFn keep_linked(std::shared_ptr<const LinkedCode> code) {
  static auto* kept = new std::vector<std::shared_ptr<const LinkedCode>>();
  kept->push_back(code);
  return reinterpret_cast<KernelFn>(code->addrs().at(0));
}

using ir::OpKind;

constexpr ScalarType kAllTypes[] = {ScalarType::Bool,  ScalarType::UInt8, ScalarType::Int8,     ScalarType::Int16, ScalarType::Int32,
                                    ScalarType::Int64, ScalarType::Half,  ScalarType::BFloat16, ScalarType::Float, ScalarType::Double};

// ---- the harness ------------------------------------------------------------------------------

Tensor make_empty(int64_t n, ScalarType t) {
  return dispatch_dtype(t, [&](auto tag) -> Tensor {
    using T = decltype(tag);
    return test::make<T>(std::vector<T>(static_cast<size_t>(n)));
  });
}

std::atomic<int> g_counter{0};

// out[i] = inst(in0[i], in1[i], ...) for i in [begin, end); args = {in0, ..., out}.
KernelFn build_map(const ir::KInst& inst, const std::vector<ScalarType>& in, std::string* ir_text = nullptr) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto m = std::make_unique<llvm::Module>("test_map", *ctx);
  m->setDataLayout(Jit::instance().data_layout());
  m->setTargetTriple(Jit::instance().target_triple());
  llvm::IRBuilder<> b(*ctx);
  ScalarEmitter e{b, *m, native_cpu_level().vector_bits};
  llvm::Type* ptr = b.getPtrTy();
  llvm::Type* i64 = b.getInt64Ty();
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, i64, i64}, false);
  const std::string name = "kiln_test_map_" + std::to_string(g_counter++);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, *m);
  auto* entry = llvm::BasicBlock::Create(*ctx, "entry", f);
  auto* loop = llvm::BasicBlock::Create(*ctx, "loop", f);
  auto* exit = llvm::BasicBlock::Create(*ctx, "exit", f);
  b.SetInsertPoint(entry);
  std::vector<llvm::Value*> ptrs;
  for (size_t k = 0; k <= in.size(); ++k)
    ptrs.push_back(b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, f->getArg(0), k)));
  llvm::Value* begin = f->getArg(2);
  llvm::Value* end = f->getArg(3);
  b.CreateCondBr(b.CreateICmpSLT(begin, end), loop, exit);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(i64, 2);
  i->addIncoming(begin, entry);
  std::vector<llvm::Value*> ops;
  for (size_t k = 0; k < in.size(); ++k) {
    llvm::Type* st = storage_type(*ctx, in[k]);
    ops.push_back(from_storage(e, in[k], b.CreateLoad(st, b.CreateGEP(st, ptrs[k], i))));
  }
  llvm::Value* r = to_storage(e, inst.dtype, emit_compute(e, inst, in, ops));
  b.CreateStore(r, b.CreateGEP(storage_type(*ctx, inst.dtype), ptrs[in.size()], i));
  llvm::Value* next = b.CreateAdd(i, b.getInt64(1));
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, end), loop, exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  JitArtifacts art;
  std::shared_ptr<const LinkedCode> code =
      Jit::instance().add_module(std::move(m), std::move(ctx), {name}, ir_text != nullptr, false, &art, nullptr);
  if (ir_text) *ir_text = art.llvm_ir;
  return keep_linked(std::move(code));
}

Tensor run_map(KernelFn fn, const std::vector<Tensor>& inputs, ScalarType out_dtype) {
  Tensor out = make_empty(inputs.at(0).numel(), out_dtype);
  std::vector<void*> args;
  for (const Tensor& t : inputs) args.push_back(t.data_ptr());
  args.push_back(out.data_ptr());
  fn(args.data(), nullptr, 0, out.numel());
  return out;
}

// ---- inputs -----------------------------------------------------------------------------------

std::vector<double> float_edges() {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  return {0.0,  -0.0,  1.0,    -1.0,  0.5,     -0.5,     1.5,  2.5,   -2.5,    3.0,    -7.0,  7.25,  0.7,  0.99,
          -0.3, 1e-3,  100.0,  -100.0, 300.0,  -129.0,  65504.0, 1e10, -1e10, 3e38,   1e20,  9.3e18, -9.3e18, inf,
          -inf, nan,   -nan,   1e-40, -1e-40,  1e-310,  5e-324, 6e-8,  1.401298464324817e-45, 0.1, 20.0, -20.0, 2.0, 4.0};
}

std::vector<int64_t> int_edges() {
  const int64_t mn = std::numeric_limits<int64_t>::min(), mx = std::numeric_limits<int64_t>::max();
  return {0, 1, -1, 2, -2, 3, -3, 7, -7, 8, 15, 16, 31, 32, 33, 63, 64, 100, -100, 127, 128, 255, -128, -129, 65535,
          -32768, 2147483647, -2147483648LL, mn, mx, mn + 1};
}

// A 1-D tensor of dtype t from doubles (floating dtypes) or int64s (others, wrapping).
Tensor from_values(ScalarType t, const std::vector<double>& f, const std::vector<int64_t>& i) {
  return dispatch_dtype(t, [&](auto tag) -> Tensor {
    using T = decltype(tag);
    std::vector<T> v;
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      for (double d : f) v.push_back(T(static_cast<float>(d)));
    else if constexpr (std::is_floating_point_v<T>)
      for (double d : f) v.push_back(static_cast<T>(d));
    else if constexpr (std::is_same_v<T, bool>)
      for (int64_t x : i) v.push_back(x != 0);
    else
      for (int64_t x : i) v.push_back(static_cast<T>(x));
    return test::make<T>(v);
  });
}

size_t num_edges(ScalarType t) { return is_floating_point(t) ? float_edges().size() : t == ScalarType::Bool ? 2 : int_edges().size(); }
Tensor edges(ScalarType t) {
  return from_values(t, float_edges(), t == ScalarType::Bool ? std::vector<int64_t>{0, 1} : int_edges());
}

// Element j of a 1-D tensor as a tensor of the indices given (a gather done by hand).
Tensor gather(const Tensor& t, const std::vector<int64_t>& idx) {
  const size_t es = element_size(t.dtype());
  Tensor out = make_empty(static_cast<int64_t>(idx.size()), t.dtype());
  auto* dst = static_cast<char*>(out.data_ptr());
  const auto* src = static_cast<const char*>(t.data_ptr());
  for (size_t k = 0; k < idx.size(); ++k) std::memcpy(dst + k * es, src + static_cast<size_t>(idx[k]) * es, es);
  return out;
}

// ---- comparison -------------------------------------------------------------------------------

uint64_t bits_at(const Tensor& t, int64_t k) {
  uint64_t v = 0;
  const size_t es = element_size(t.dtype());
  std::memcpy(&v, static_cast<const char*>(t.data_ptr()) + static_cast<size_t>(k) * es, es);
  return v;
}

bool is_nan_bits(ScalarType t, uint64_t v) {
  switch (t) {
    case ScalarType::Half: return (v & 0x7fff) > 0x7c00;
    case ScalarType::BFloat16: return (v & 0x7fff) > 0x7f80;
    case ScalarType::Float: return (v & 0x7fffffffu) > 0x7f800000u;
    case ScalarType::Double: return (v & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
    default: return false;
  }
}

// Distance in ulps of dtype t (+0 and -0 are 0 apart); NaN vs NaN is 0, NaN vs number is max.
uint64_t ulp_distance(ScalarType t, uint64_t a, uint64_t b) {
  const bool na = is_nan_bits(t, a), nb = is_nan_bits(t, b);
  if (na || nb) return na && nb ? 0 : std::numeric_limits<uint64_t>::max();
  const int bits = static_cast<int>(element_size(t) * 8);
  const uint64_t sign = uint64_t{1} << (bits - 1);
  auto ordered = [&](uint64_t v) -> int64_t {
    const auto mag = static_cast<int64_t>(v & (sign - 1));
    return (v & sign) ? -mag : mag;
  };
  const int64_t d = ordered(a) - ordered(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

// Max ulp error per (op, dtype), printed at the end.
std::map<std::string, uint64_t>& ulp_table() {
  static std::map<std::string, uint64_t> t;
  return t;
}

// Bound in ulps of the result dtype for the transcendental ops (libm/libmvec, kiln's own f32
// math: test_cpu_vecmath.cpp holds those to their tighter documented bounds against a
// correctly rounded reference); others must be exact.
std::optional<uint64_t> ulp_bound(OpKind op) {
  switch (op) {
    case OpKind::exp: case OpKind::exp2: case OpKind::expm1: case OpKind::log: case OpKind::log2:
    case OpKind::log10: case OpKind::log1p: case OpKind::sin: case OpKind::cos: case OpKind::tan:
    case OpKind::asin: case OpKind::acos: case OpKind::atan: case OpKind::sinh: case OpKind::cosh:
    case OpKind::tanh: case OpKind::asinh: case OpKind::acosh: case OpKind::atanh: case OpKind::erf:
    case OpKind::erfc: case OpKind::erfinv: case OpKind::lgamma: case OpKind::sigmoid: case OpKind::pow:
    case OpKind::atan2: case OpKind::hypot:
      return 4;
    default: return std::nullopt;
  }
}

// fmax/fmin pick either zero for (+0, -0) in glibc depending on the argument order and the
// build; those two compare zeros by value.
bool zero_sign_free(OpKind op) { return op == OpKind::fmax || op == OpKind::fmin; }

void expect_match(OpKind op, const std::string& what, const Tensor& got, const Tensor& want,
                  const std::vector<Tensor>& inputs) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.numel(), want.numel()) << what;
  const ScalarType t = got.dtype();
  const std::optional<uint64_t> bound = is_floating_point(t) ? ulp_bound(op) : std::nullopt;
  uint64_t worst = 0;
  int failures = 0;
  for (int64_t k = 0; k < got.numel(); ++k) {
    const uint64_t g = bits_at(got, k), w = bits_at(want, k);
    bool ok = g == w || (is_nan_bits(t, g) && is_nan_bits(t, w));
    if (bound || (zero_sign_free(op) && is_floating_point(t))) {
      const uint64_t d = ulp_distance(t, g, w);
      worst = std::max(worst, d);
      ok = d <= (bound ? *bound : 0);
    }
    if (!ok && ++failures <= 5) {
      std::string ins;
      for (const Tensor& in : inputs) ins += fmt::format(" {:#x}", bits_at(in, k));
      ADD_FAILURE() << what << " element " << k << ": inputs" << ins << fmt::format(" got {:#x} want {:#x}", g, w);
    }
  }
  if (bound) {
    uint64_t& slot = ulp_table()[what];
    slot = std::max(slot, worst);
  }
}

ir::KInst compute(OpKind op, ScalarType out, std::vector<ir::AttrValue> attrs = {}) {
  ir::KInst k;
  k.kind = ir::KOp::Compute;
  k.op = op;
  k.dtype = out;
  k.attrs = ir::AttrList(std::move(attrs));
  k.id = 0;
  return k;
}

// The result dtype of op on inputs of dtype t, or nullopt when the shape function rejects them.
std::optional<ScalarType> result_dtype(OpKind op, const std::vector<ScalarType>& in, const ir::AttrList& attrs) {
  std::vector<ir::TensorType> types;
  for (ScalarType t : in) types.emplace_back(t, std::vector<ir::Expr>{ir::Expr(4)});
  try {
    return ir::infer_types(op, types, attrs).at(0).dtype;
  } catch (const Error&) {
    return std::nullopt;
  }
}

// Runs op on `inputs` through the JIT and the interpreter and compares. Returns false (and
// checks nothing) when the shape function or the interpreter rejects the dtypes.
bool check_op(OpKind op, const std::vector<Tensor>& inputs, std::vector<ir::AttrValue> attrs, const std::string& what) {
  std::vector<ScalarType> in;
  for (const Tensor& t : inputs) in.push_back(t.dtype());
  const ir::AttrList al(attrs);
  const std::optional<ScalarType> out = result_dtype(op, in, al);
  if (!out) return false;
  Tensor want;
  try {
    want = rt::interpret_op(op, inputs, al).at(0);
  } catch (const Error& err) {
    std::printf("[ skip ] %s: %s\n", what.c_str(), err.what());
    return false;
  }
  const KernelFn fn = build_map(compute(op, *out, attrs), in);
  expect_match(op, what, run_map(fn, inputs, *out), want, inputs);
  return true;
}


bool is_prim_of(OpKind op, ir::OpFamily f) { return ir::op_info(op).family == f && ir::op_info(op).level == ir::OpLevel::Prim; }

std::string label(OpKind op, const std::vector<ScalarType>& in, std::string_view extra = "") {
  std::string s(ir::op_name(op));
  if (!extra.empty()) s += fmt::format("[{}]", extra);
  for (ScalarType t : in) s += fmt::format(" {}", dtype_short_name(t));
  return s;
}

// Edges plus a sweep, for the unary float ops.
std::vector<double> unary_float_inputs() {
  std::vector<double> v = float_edges();
  for (int k = 0; k <= 4000; ++k) v.push_back(-20.0 + 0.01 * k);
  for (int j = -320; j <= 320; ++j) {
    v.push_back(std::pow(10.0, j / 40.0));
    v.push_back(-std::pow(10.0, j / 40.0));
  }
  for (int k = 0; k <= 2000; ++k) v.push_back(-1.0 + 0.001 * k);  // erfinv, atanh, asin, acos domain
  return v;
}

TEST(CpuScalar, UnaryOpsMatchInterpreter) {
  int checked = 0;
  for (int k = 0; k < ir::kNumOps; ++k) {
    const auto op = static_cast<OpKind>(k);
    if (!is_prim_of(op, ir::OpFamily::Unary)) continue;
    for (ScalarType t : kAllTypes) {
      Tensor in = is_floating_point(t) ? from_values(t, unary_float_inputs(), {}) : edges(t);
      checked += check_op(op, {in}, {}, label(op, {t})) ? 1 : 0;
    }
  }
  EXPECT_GT(checked, 150);
}

// All pairs of edge values of dtype t; pairs whose divisor is an integer zero are left out for
// the ops where the interpreter raises ZeroDivisionError (DivisionByZeroGivesZero covers them).
std::pair<Tensor, Tensor> pairs(ScalarType t, bool skip_int_zero_divisor) {
  const Tensor e = edges(t);
  const int64_t n = static_cast<int64_t>(num_edges(t));
  std::vector<int64_t> ia, ib;
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = 0; b < n; ++b) {
      if (skip_int_zero_divisor && !is_floating_point(t) && bits_at(e, b) == 0) continue;
      ia.push_back(a);
      ib.push_back(b);
    }
  return {gather(e, ia), gather(e, ib)};
}

TEST(CpuScalar, BinaryOpsMatchInterpreter) {
  int checked = 0;
  for (int k = 0; k < ir::kNumOps; ++k) {
    const auto op = static_cast<OpKind>(k);
    if (!is_prim_of(op, ir::OpFamily::Binary)) continue;
    std::vector<std::vector<ir::AttrValue>> variants = {{}};
    if (op == OpKind::div)
      variants = {{std::monostate{}}, {std::string("trunc")}, {std::string("floor")}};
    const bool divides = op == OpKind::div || op == OpKind::remainder || op == OpKind::fmod;
    for (const auto& attrs : variants) {
      for (ScalarType t : kAllTypes) {
        if (!result_dtype(op, {t, t}, ir::AttrList(attrs))) continue;
        const auto [a, b] = pairs(t, divides);
        const std::string mode = attrs.empty() ? "" : std::holds_alternative<std::string>(attrs[0]) ? std::get<std::string>(attrs[0]) : "none";
        checked += check_op(op, {a, b}, attrs, label(op, {t, t}, mode)) ? 1 : 0;
      }
    }
  }
  EXPECT_GT(checked, 150);
}

// The interpreter raises ZeroDivisionError for integer division, remainder and fmod by zero;
// generated code cannot throw and defines the result as 0.
TEST(CpuScalar, DivisionByZeroGivesZero) {
  for (ScalarType t : {ScalarType::UInt8, ScalarType::Int8, ScalarType::Int32, ScalarType::Int64}) {
    const Tensor a = from_values(t, {}, {7, -7, 0, std::numeric_limits<int64_t>::min()});
    const Tensor z = from_values(t, {}, {0, 0, 0, 0});
    const Tensor zeros = from_values(t, {}, {0, 0, 0, 0});
    for (const auto& [op, attrs] : std::vector<std::pair<OpKind, std::vector<ir::AttrValue>>>{
             {OpKind::div, {std::string("trunc")}}, {OpKind::div, {std::string("floor")}}, {OpKind::remainder, {}}, {OpKind::fmod, {}}}) {
      EXPECT_THROW(rt::interpret_op(op, {a, z}, ir::AttrList(attrs)), Error);
      const KernelFn fn = build_map(compute(op, t, attrs), {t, t});
      expect_match(op, label(op, {t, t}, "by zero"), run_map(fn, {a, z}, t), zeros, {a, z});
    }
  }
}

TEST(CpuScalar, TernaryOpsMatchInterpreter) {
  for (ScalarType t : kAllTypes) {
    // where: every (cond, a, b) over a subset of the edges.
    const Tensor e = edges(t);
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(num_edges(t)), 14);
    std::vector<int64_t> ic, ia, ib;
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t a = 0; a < n; ++a)
        for (int64_t b = 0; b < n; ++b) {
          ic.push_back(c);
          ia.push_back(a);
          ib.push_back(b);
        }
    const Tensor cond = gather(edges(ScalarType::Bool), ic);
    check_op(OpKind::where, {cond, gather(e, ia), gather(e, ib)}, {}, label(OpKind::where, {ScalarType::Bool, t, t}));
    if (t == ScalarType::Bool) continue;
    // clamp: every triple over the edges (NaN bounds, lo > hi, infinities, integer extremes).
    const int64_t m = static_cast<int64_t>(num_edges(t));
    std::vector<int64_t> ix, il, ih;
    for (int64_t x = 0; x < m; ++x)
      for (int64_t l = 0; l < m; l += 2)
        for (int64_t h = 1; h < m; h += 2) {
          ix.push_back(x);
          il.push_back(l);
          ih.push_back(h);
        }
    check_op(OpKind::clamp, {gather(e, ix), gather(e, il), gather(e, ih)}, {}, label(OpKind::clamp, {t, t, t}));
  }
}

TEST(CpuScalar, CastsMatchInterpreter) {
  for (ScalarType from : kAllTypes) {
    const Tensor in = edges(from);
    for (ScalarType to : kAllTypes)
      check_op(OpKind::convert_element_type, {in}, {to}, label(OpKind::convert_element_type, {from}, dtype_short_name(to)));
    check_op(OpKind::clone, {in}, {}, label(OpKind::clone, {from}));
  }
}

// ---- reductions -------------------------------------------------------------------------------

// out[0] = fold of in[begin, end) (reduce ops), or out[0] = the int64 position of the first
// extreme (argmax/argmin), with the emitter's identity/combine/argcmp.
KernelFn build_reduce(ir::ReductionOp op, ScalarType t, ScalarType acc, std::string* ir_text = nullptr) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto m = std::make_unique<llvm::Module>("test_reduce", *ctx);
  m->setDataLayout(Jit::instance().data_layout());
  m->setTargetTriple(Jit::instance().target_triple());
  llvm::IRBuilder<> b(*ctx);
  ScalarEmitter e{b, *m, native_cpu_level().vector_bits};
  llvm::Type* ptr = b.getPtrTy();
  llvm::Type* i64 = b.getInt64Ty();
  const bool arg = op == ir::ReductionOp::argmax || op == ir::ReductionOp::argmin;
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, i64, i64}, false);
  const std::string name = "kiln_test_reduce_" + std::to_string(g_counter++);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, *m);
  auto* entry = llvm::BasicBlock::Create(*ctx, "entry", f);
  auto* loop = llvm::BasicBlock::Create(*ctx, "loop", f);
  auto* exit = llvm::BasicBlock::Create(*ctx, "exit", f);
  b.SetInsertPoint(entry);
  llvm::Value* in = b.CreateLoad(ptr, f->getArg(0));
  llvm::Value* out = b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, f->getArg(0), 1));
  llvm::Type* st = storage_type(*ctx, t);
  auto load = [&](llvm::Value* i) { return from_storage(e, t, b.CreateLoad(st, b.CreateGEP(st, in, i))); };
  llvm::Value* begin = f->getArg(2);
  llvm::Value* end = f->getArg(3);
  // argmax/argmin start from element `begin`; the others from the identity.
  llvm::Value* start = arg ? b.CreateAdd(begin, b.getInt64(1)) : begin;
  llvm::Value* init = arg ? load(begin) : reduce_identity(e, op, acc);
  b.CreateCondBr(b.CreateICmpSLT(start, end), loop, exit);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(i64, 2);
  llvm::PHINode* a = b.CreatePHI(init->getType(), 2);
  llvm::PHINode* pos = b.CreatePHI(i64, 2);
  i->addIncoming(start, entry);
  a->addIncoming(init, entry);
  pos->addIncoming(begin, entry);
  llvm::Value* x = load(i);
  llvm::Value* next_a;
  llvm::Value* next_pos = pos;
  if (arg) {
    llvm::Value* take = emit_argcmp(e, op, t, a, x);
    next_a = b.CreateSelect(take, x, a);
    next_pos = b.CreateSelect(take, i, pos);
  } else {
    next_a = reduce_combine(e, op, acc, a, x);
  }
  llvm::Value* next = b.CreateAdd(i, b.getInt64(1));
  i->addIncoming(next, loop);
  a->addIncoming(next_a, loop);
  pos->addIncoming(next_pos, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, end), loop, exit);
  b.SetInsertPoint(exit);
  llvm::PHINode* ra = b.CreatePHI(init->getType(), 2);
  ra->addIncoming(init, entry);
  ra->addIncoming(next_a, loop);
  llvm::PHINode* rp = b.CreatePHI(i64, 2);
  rp->addIncoming(begin, entry);
  rp->addIncoming(next_pos, loop);
  if (arg)
    b.CreateStore(rp, out);
  else
    b.CreateStore(to_storage(e, acc, ra), out);
  b.CreateRetVoid();
  JitArtifacts art;
  std::shared_ptr<const LinkedCode> code =
      Jit::instance().add_module(std::move(m), std::move(ctx), {name}, ir_text != nullptr, false, &art, nullptr);
  if (ir_text) *ir_text = art.llvm_ir;
  return keep_linked(std::move(code));
}

void check_reduce(ir::ReductionOp op, const Tensor& in, const std::string& what) {
  const ScalarType t = in.dtype();
  const bool arg = op == ir::ReductionOp::argmax || op == ir::ReductionOp::argmin;
  const OpKind kind = ir::op_from_name(ir::reduction_name(op)).value();
  std::vector<ir::AttrValue> attrs = arg ? std::vector<ir::AttrValue>{int64_t{0}, false}
                                         : std::vector<ir::AttrValue>{std::vector<int64_t>{0}, false};
  const Tensor want = rt::interpret_op(kind, {in}, ir::AttrList(attrs)).at(0);
  const ScalarType out_t = want.dtype();
  const ScalarType acc = arg ? t : out_t;
  const KernelFn fn = build_reduce(op, t, acc);
  Tensor got = make_empty(1, out_t);
  void* args[] = {in.data_ptr(), got.data_ptr()};
  fn(args, nullptr, 0, in.numel());
  expect_match(kind, what, got, want, {in});
}

TEST(CpuScalar, ReductionsMatchInterpreter) {
  using R = ir::ReductionOp;
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  // Floats: exact sums (small integers), infinities, NaN anywhere, ties for argmax/argmin.
  const std::vector<std::vector<double>> float_cases = {
      {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25},
      {3, -1, 3, 2, -1, 0.5, 3, -1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2},
      {1, 2, nan, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20},
      {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, nan},
      {inf, 1, -inf, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18},
      {-inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf},
      {0.5, 0.25, 2, 4, 1, 1, 1, 1, 1, 1, 1, 1, 0.5, 2, 1, 1, 1, 1, 1, 1, 1},
      {7},
  };
  const std::vector<std::vector<int64_t>> int_cases = {
      {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20},
      {std::numeric_limits<int64_t>::max(), 1, 2, 3, std::numeric_limits<int64_t>::min(), 5, -1, -1, 100, 100, 7, 7, 7, 7, 7, 7, 7},
      {3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3},
      {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
      {-5},
  };
  const R ops[] = {R::sum, R::prod, R::amax, R::amin, R::any, R::all, R::argmax, R::argmin};
  for (ScalarType t : kAllTypes) {
    const size_t ncases = is_floating_point(t) ? float_cases.size() : int_cases.size();
    for (size_t c = 0; c < ncases; ++c) {
      const Tensor in = is_floating_point(t) ? from_values(t, float_cases[c], {}) : from_values(t, {}, int_cases[c]);
      for (R op : ops) {
        // The interpreter sums f16/bf16 in double and rounds once; an f16 accumulator cannot.
        if ((op == R::sum || op == R::prod) && (t == ScalarType::Half || t == ScalarType::BFloat16)) continue;
        // Products of 1..25 and of 1..18 are not exact in f32 (the interpreter uses double).
        if (op == R::prod && t == ScalarType::Float && (c == 0 || c == 4)) continue;
        check_reduce(op, in, fmt::format("{} {} case {}", ir::reduction_name(op), dtype_short_name(t), c));
      }
    }
  }
}

// sum over f32 vectorizes thanks to `reassoc`; amax through llvm.maximum does too.
TEST(CpuScalar, FloatReductionsVectorize) {
  for (ir::ReductionOp op : {ir::ReductionOp::sum, ir::ReductionOp::amax}) {
    std::string ir_text;
    build_reduce(op, ScalarType::Float, ScalarType::Float, &ir_text);
    const bool vec = ir_text.find("<8 x float>") != std::string::npos || ir_text.find("<16 x float>") != std::string::npos;
    EXPECT_TRUE(vec) << ir::reduction_name(op) << ":\n" << ir_text;
  }
}

// ---- vector math ------------------------------------------------------------------------------

double time_ms(KernelFn fn, void* const* args, int64_t n) {
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    fn(args, nullptr, 0, n);
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// A loop of 16M tanhf / expf (and erf, sigmoid; f64 log, sin) must vectorize: f32 math is
// kiln's own inline code (llvm_vecmath.cpp), so the optimized IR computes on <8 x float> or
// <16 x float> and calls nothing but intrinsics; f64's vector loop calls a libmvec variant on
// <4 x double> or <8 x double>.
TEST(CpuScalar, MathLoopsVectorize) {
  const int64_t n = int64_t{1} << 24;
  for (auto [op, t] : std::vector<std::pair<OpKind, ScalarType>>{{OpKind::tanh, ScalarType::Float},
                                                                  {OpKind::exp, ScalarType::Float},
                                                                  {OpKind::sigmoid, ScalarType::Float},
                                                                  {OpKind::erf, ScalarType::Float},
                                                                  {OpKind::log, ScalarType::Double},
                                                                  {OpKind::sin, ScalarType::Double}}) {
    std::string ir_text;
    const KernelFn fn = build_map(compute(op, t), {t}, &ir_text);
    const std::string what = std::string(ir::op_name(op)) + " " + std::string(dtype_short_name(t));
    if (t == ScalarType::Float) {
      const bool vec = ir_text.find("fmuladd.v8f32") != std::string::npos || ir_text.find("fmuladd.v16f32") != std::string::npos;
      EXPECT_TRUE(vec) << what << " did not vectorize:\n" << ir_text;
      for (size_t at = ir_text.find("call "); at != std::string::npos; at = ir_text.find("call ", at + 1)) {
        const size_t callee = ir_text.find('@', at);
        EXPECT_EQ(ir_text.compare(callee, 6, "@llvm."), 0) << what << " calls out of the loop: " << ir_text.substr(at, 80);
      }
    } else {
      // A call of a libmvec variant (or of a wrapper padding into it) inside the vector loop,
      // not just the declarations and wrapper bodies every module carries.
      const size_t body = ir_text.find("vector.body:");
      const size_t end = ir_text.find("middle.block:", body);
      const std::string loop = body == std::string::npos ? "" : ir_text.substr(body, end - body);
      const bool vec = loop.find("x double> @_ZGV") != std::string::npos || loop.find("x double> @kiln_math_") != std::string::npos;
      EXPECT_TRUE(vec) << what << " did not vectorize:\n" << ir_text;
    }
    if (op != OpKind::tanh && op != OpKind::exp) continue;
    std::vector<float> in(static_cast<size_t>(n)), out(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) in[static_cast<size_t>(k)] = -8.0f + 16.0f * static_cast<float>(k) / static_cast<float>(n);
    void* args[] = {in.data(), out.data()};
    const double jit_ms = time_ms(fn, args, n);
    auto t0 = std::chrono::steady_clock::now();
    for (int64_t k = 0; k < n; ++k)
      out[static_cast<size_t>(k)] = op == OpKind::tanh ? std::tanh(in[static_cast<size_t>(k)]) : std::exp(in[static_cast<size_t>(k)]);
    const double libm_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ perf ] 16M %sf: JIT (kiln's inline math) %.1f ms, scalar libm loop %.1f ms\n", std::string(ir::op_name(op)).c_str(),
                jit_ms, libm_ms);
  }
}

// An element's value does not depend on where it sits: the vectorized body of a loop and its
// scalar remainder compute the same bits for the same input (codegen_cpu/llvm_math.cpp routes
// both through one libmvec function). Each input is computed once in a long run, which puts
// it in a vector lane, and once alone (a run of one element, the scalar remainder). Before,
// libmvec's lanes and libm's remainder differed by up to 4 ulp on one input in three, and an
// amax over equal inputs broke its tie by position (the backward fuzz's seed 6535744).
TEST(CpuScalar, MathGivesTheSameBitsInVectorAndScalarCode) {
  int checked = 0;
  for (int k = 0; k < ir::kNumOps; ++k) {
    const auto op = static_cast<OpKind>(k);
    const bool unary = is_prim_of(op, ir::OpFamily::Unary);
    if (!unary && op != OpKind::pow && op != OpKind::atan2 && op != OpKind::hypot) continue;
    for (ScalarType t : {ScalarType::Float, ScalarType::Double}) {
      std::vector<Tensor> inputs;
      if (unary) {
        inputs = {from_values(t, unary_float_inputs(), {})};
      } else {
        const auto [a, b] = pairs(t, false);
        inputs = {a, b};
      }
      std::vector<ScalarType> in(inputs.size(), t);
      const std::optional<ScalarType> out = result_dtype(op, in, {});
      if (!out || !is_floating_point(*out)) continue;
      const KernelFn fn = build_map(compute(op, *out), in);
      const Tensor whole = run_map(fn, inputs, *out);
      Tensor alone = make_empty(whole.numel(), *out);
      std::vector<void*> args;
      for (const Tensor& x : inputs) args.push_back(x.data_ptr());
      args.push_back(alone.data_ptr());
      for (int64_t i = 0; i < whole.numel(); ++i) fn(args.data(), nullptr, i, i + 1);
      int failures = 0;
      for (int64_t i = 0; i < whole.numel(); ++i) {
        const uint64_t v = bits_at(whole, i), s = bits_at(alone, i);
        if (v != s && !(is_nan_bits(*out, v) && is_nan_bits(*out, s)) && ++failures <= 3) {
          std::string ins;
          for (const Tensor& x : inputs) ins += fmt::format(" {:#x}", bits_at(x, i));
          ADD_FAILURE() << label(op, in) << " element " << i << ": inputs" << ins
                        << fmt::format(" vector code {:#x}, scalar code {:#x}", v, s);
        }
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 50);
}

// Prints the measured maximum ulp differences (the report's table); runs last by name order.
TEST(CpuScalar, ZzPrintUlpTable) {
  for (const auto& [what, ulps] : ulp_table())
    if (ulps > 0) std::printf("[ ulps ] %-28s %llu\n", what.c_str(), static_cast<unsigned long long>(ulps));
}

}  // namespace
}  // namespace kiln::cpu
