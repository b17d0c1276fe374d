// kiln/codegen_cpu/llvm_random.cpp — LLVM IR for ir::KOp::Random: element `index` of a Philox
// draw (seed, offset), bit for bit the uniform/normal prims of frontend/ops_random.h.
//
// Philox4x32-10 is integer arithmetic (32x32->64 multiplies, xors, key bumps), which the loop
// vectorizer may widen freely. The float steps follow the specification's order exactly and
// carry no fast-math flags (no contraction into FMA, which an AVX2 host would otherwise do):
//   uniform  u = float(w0 >> 8) * 2^-24 (f64: 53 bits of w0:w1 * 2^-53), low + (high - low) * u
//            in double, rounded to the dtype (f16/bf16 through float), then one step down when
//            it rounded to >= high;
//   normal   sqrt(-2 log u1) * cos(2 pi u2) in double from w0:w1 and w2:w3, mean + std * n,
//            rounded to the dtype. log and cos are libm's own calls, marked nobuiltin so that
//            they are never swapped for libmvec's vector variants (other ulps).
#include "codegen_cpu/llvm_scalar.h"

#include "base/error.h"

#include <llvm/IR/Module.h>

#include <numbers>

namespace kiln::cpu {

namespace {

constexpr uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;
constexpr int kPhiloxRounds = 10;

struct Words {
  llvm::Value* w[4];
};

Words philox(llvm::IRBuilder<>& b, llvm::Value* index, llvm::Value* seed, llvm::Value* offset) {
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  auto lo = [&](llvm::Value* x) { return b.CreateTrunc(x, i32); };
  auto hi = [&](llvm::Value* x) { return b.CreateTrunc(b.CreateLShr(x, 32), i32); };
  llvm::Value* c[4] = {lo(index), hi(index), lo(offset), hi(offset)};
  llvm::Value* key[2] = {lo(seed), hi(seed)};
  for (int round = 0; round < kPhiloxRounds; ++round) {
    if (round > 0) {
      key[0] = b.CreateAdd(key[0], b.getInt32(kPhiloxW0));
      key[1] = b.CreateAdd(key[1], b.getInt32(kPhiloxW1));
    }
    llvm::Value* p0 = b.CreateMul(b.getInt64(kPhiloxM0), b.CreateZExt(c[0], i64));
    llvm::Value* p1 = b.CreateMul(b.getInt64(kPhiloxM1), b.CreateZExt(c[2], i64));
    llvm::Value* next[4] = {b.CreateXor(b.CreateXor(hi(p1), c[1]), key[0]), lo(p1),
                            b.CreateXor(b.CreateXor(hi(p0), c[3]), key[1]), lo(p0)};
    for (int i = 0; i < 4; ++i) c[i] = next[i];
  }
  return {{c[0], c[1], c[2], c[3]}};
}

// ((u64(hi) << 32) | lo) >> 11, as i64.
llvm::Value* bits53(llvm::IRBuilder<>& b, llvm::Value* hi_word, llvm::Value* lo_word) {
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Value* w = b.CreateOr(b.CreateShl(b.CreateZExt(hi_word, i64), 32), b.CreateZExt(lo_word, i64));
  return b.CreateLShr(w, 11);
}

llvm::Value* libm_call(ScalarEmitter& e, const char* name, llvm::Value* x) {
  llvm::Type* d = e.b.getDoubleTy();
  llvm::FunctionCallee f = e.m.getOrInsertFunction(name, llvm::FunctionType::get(d, {d}, false));
  llvm::CallInst* call = e.b.CreateCall(f, {x});
  call->addFnAttr(llvm::Attribute::NoBuiltin);
  call->addFnAttr(llvm::Attribute::NoUnwind);
  call->setOnlyReadsMemory();  // errno aside, a pure function of x (the vectorizer may not widen it)
  return call;
}

// The next value of a W-bit IEEE pattern below `bits` (finite or +inf): a negative value's
// magnitude grows, a positive one's shrinks, and a zero becomes the negative smallest subnormal.
llvm::Value* next_down_bits(llvm::IRBuilder<>& b, llvm::Value* bits) {
  auto* ty = llvm::cast<llvm::IntegerType>(bits->getType());
  const llvm::APInt sign = llvm::APInt::getSignMask(ty->getBitWidth());
  llvm::Value* magnitude = b.CreateAnd(bits, llvm::ConstantInt::get(ty, ~sign));
  llvm::Value* zero = b.CreateICmpEQ(magnitude, llvm::ConstantInt::get(ty, 0));
  llvm::Value* negative = b.CreateICmpNE(b.CreateAnd(bits, llvm::ConstantInt::get(ty, sign)), llvm::ConstantInt::get(ty, 0));
  llvm::Value* step = b.CreateSelect(negative, b.CreateAdd(bits, llvm::ConstantInt::get(ty, 1)),
                                     b.CreateSub(bits, llvm::ConstantInt::get(ty, 1)));
  return b.CreateSelect(zero, llvm::ConstantInt::get(ty, sign | 1), step);
}

}  // namespace

llvm::Value* emit_random(ScalarEmitter& e, const ir::KInst& in, llvm::Value* index, llvm::Value* seed, llvm::Value* offset) {
  auto& b = e.b;
  llvm::Type* d = b.getDoubleTy();
  const ScalarType dt = in.dtype;
  const double a = in.attrs.get<double>(0), s = in.attrs.get<double>(1);
  const Words w = philox(b, index, seed, offset);
  // A double rounded to the dtype, in compute type (f16/bf16 through float, as round_to does).
  auto round = [&](llvm::Value* v) -> llvm::Value* {
    if (dt == ScalarType::Double) return v;
    llvm::Value* f = b.CreateFPTrunc(v, b.getFloatTy());
    return dt == ScalarType::Float ? f : from_storage(e, dt, to_storage(e, dt, f));
  };
  if (in.op == ir::OpKind::normal) {
    const double inv53 = 1.0 / 9007199254740992.0;
    llvm::Value* u1 = b.CreateFMul(b.CreateUIToFP(b.CreateAdd(bits53(b, w.w[0], w.w[1]), b.getInt64(1)), d),
                                   llvm::ConstantFP::get(d, inv53));
    llvm::Value* u2 = b.CreateFMul(b.CreateUIToFP(bits53(b, w.w[2], w.w[3]), d), llvm::ConstantFP::get(d, inv53));
    llvm::Value* radius = b.CreateUnaryIntrinsic(
        llvm::Intrinsic::sqrt, b.CreateFMul(llvm::ConstantFP::get(d, -2.0), libm_call(e, "log", u1)));
    llvm::Value* n = b.CreateFMul(
        radius, libm_call(e, "cos", b.CreateFMul(llvm::ConstantFP::get(d, 2.0 * std::numbers::pi), u2)));
    return round(b.CreateFAdd(llvm::ConstantFP::get(d, a), b.CreateFMul(llvm::ConstantFP::get(d, s), n)));
  }
  if (in.op != ir::OpKind::uniform) internal_fail("emit_random: {} is not uniform or normal", ir::op_name(in.op));
  llvm::Value* u;
  if (dt == ScalarType::Double) {
    u = b.CreateFMul(b.CreateUIToFP(bits53(b, w.w[0], w.w[1]), d), llvm::ConstantFP::get(d, 1.0 / 9007199254740992.0));
  } else {
    llvm::Value* f = b.CreateFMul(b.CreateUIToFP(b.CreateLShr(w.w[0], 8), b.getFloatTy()),
                                  llvm::ConstantFP::get(b.getFloatTy(), 1.0 / 16777216.0));
    u = b.CreateFPExt(f, d);
  }
  llvm::Value* r = round(b.CreateFAdd(llvm::ConstantFP::get(d, a), b.CreateFMul(llvm::ConstantFP::get(d, s - a), u)));
  if (!(s > a)) return r;
  // Rounded up to high: one step down in the dtype (specification: results lie in [low, high)).
  llvm::Value* wide = dt == ScalarType::Double ? r : b.CreateFPExt(r, d);
  llvm::Value* over = b.CreateFCmpOGE(wide, llvm::ConstantFP::get(d, s));
  llvm::Value* down;
  if (dt == ScalarType::Double || dt == ScalarType::Float) {
    llvm::Type* it = b.getIntNTy(dt == ScalarType::Double ? 64 : 32);
    down = b.CreateBitCast(next_down_bits(b, b.CreateBitCast(r, it)), r->getType());
  } else {
    llvm::Value* stored = to_storage(e, dt, r);  // half, or bf16 as i16
    const bool half = dt == ScalarType::Half;
    llvm::Value* bits = half ? b.CreateBitCast(stored, b.getInt16Ty()) : stored;
    llvm::Value* lowered = next_down_bits(b, bits);
    down = from_storage(e, dt, half ? b.CreateBitCast(lowered, b.getHalfTy()) : lowered);
  }
  return b.CreateSelect(over, down, r);
}

}  // namespace kiln::cpu
