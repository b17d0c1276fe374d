// kiln/codegen_cpu/llvm_math.cpp — math calls computed through one libmvec function each, and erfinv.
//
// See codegen_cpu/llvm_math.h for the scheme and the accuracy notes. On an AVX-512 host, a
// call of sinf in a kernel is emitted as `call float @kiln_math_sinf(float %x)` with the
// attribute "vector-function-abi-variant"="_ZGVbN4v_kiln_math_sinf(kiln_math_sinf_v4),
// _ZGVdN8v_kiln_math_sinf(kiln_math_sinf_v8),_ZGVeN16v_kiln_math_sinf(_ZGVeN16v_sinf)": every
// width computes through _ZGVeN16v_sinf. (The vectorizer does not check a variant's ISA
// letter, so only the widths the target has are listed.)
#include "codegen_cpu/llvm_math.h"


#include "base/error.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <string>

namespace kiln::cpu::detail {

namespace {

struct MathEntry {
  const char* name;  // the double version; float appends 'f'
  int arity;
  bool libmvec;  // glibc's libmvec has vector variants
};

MathEntry entry(MathFn fn) {
  switch (fn) {
    case MathFn::exp: return {"exp", 1, true};
    case MathFn::exp2: return {"exp2", 1, true};
    case MathFn::expm1: return {"expm1", 1, true};
    case MathFn::log: return {"log", 1, true};
    case MathFn::log2: return {"log2", 1, true};
    case MathFn::log10: return {"log10", 1, true};
    case MathFn::log1p: return {"log1p", 1, true};
    case MathFn::sin: return {"sin", 1, true};
    case MathFn::cos: return {"cos", 1, true};
    case MathFn::tan: return {"tan", 1, true};
    case MathFn::asin: return {"asin", 1, true};
    case MathFn::acos: return {"acos", 1, true};
    case MathFn::atan: return {"atan", 1, true};
    case MathFn::sinh: return {"sinh", 1, true};
    case MathFn::cosh: return {"cosh", 1, true};
    case MathFn::tanh: return {"tanh", 1, true};
    case MathFn::asinh: return {"asinh", 1, true};
    case MathFn::acosh: return {"acosh", 1, true};
    case MathFn::atanh: return {"atanh", 1, true};
    case MathFn::erf: return {"erf", 1, true};
    case MathFn::erfc: return {"erfc", 1, true};
    case MathFn::lgamma: return {"lgamma", 1, false};
    case MathFn::pow: return {"pow", 2, true};
    case MathFn::atan2: return {"atan2", 2, true};
    case MathFn::hypot: return {"hypot", 2, true};
  }
  internal_fail("emit_math: unknown function {}", static_cast<int>(fn));
}

void mark_pure(llvm::Function* f) {
  f->setDoesNotAccessMemory();
  f->setDoesNotThrow();
  f->setWillReturn();
  f->setNoSync();
  f->setDoesNotFreeMemory();
}

// The function `name` of type fty, scalar or a vector narrower than home's, that computes each
// lane as `home` (a libmvec vector function of the same element type) does: the arguments'
// lanes fill home's first lanes and `spare` (an ordinary argument of the function) the others,
// and the result's lanes are taken back. libmvec computes each lane on its own (a lane's bits
// do not depend on its neighbours), but a special value in any lane (a huge sin argument, an
// exp that underflows) sends the whole vector to a per-lane scalar fallback: spare lanes that
// copied such a value would make each call of a scalar remainder cost 16 fallbacks. It is
// noinline: the loop vectorizer must see the scalar call and widen it to the vector variants,
// not the call of home after inlining.
llvm::Function* home_wrapper(llvm::Module& m, llvm::Function* home, const std::string& name, llvm::FunctionType* fty,
                             double spare) {
  if (llvm::Function* f = m.getFunction(name)) return f;
  auto* f = llvm::Function::Create(fty, llvm::Function::InternalLinkage, name, m);
  mark_pure(f);
  f->addFnAttr(llvm::Attribute::NoInline);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(m.getContext(), "entry", f));
  const unsigned home_lanes = llvm::cast<llvm::FixedVectorType>(home->getReturnType())->getNumElements();
  const auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(fty->getReturnType());
  const unsigned lanes = vt != nullptr ? vt->getNumElements() : 1;
  KILN_INTERNAL_ASSERT(lanes < home_lanes);
  llvm::Type* elem = home->getReturnType()->getScalarType();
  llvm::Constant* spare_lane = llvm::ConstantFP::get(elem, spare);
  llvm::SmallVector<int, 16> widen, narrow;  // widen: a's lanes, then lane `lanes` (spare's first)
  for (unsigned l = 0; l < home_lanes; ++l) widen.push_back(static_cast<int>(l < lanes ? l : lanes));
  for (unsigned l = 0; l < lanes; ++l) narrow.push_back(static_cast<int>(l));
  llvm::SmallVector<llvm::Value*, 2> wide_args;
  for (llvm::Argument& a : f->args()) {
    if (vt == nullptr) {
      wide_args.push_back(b.CreateInsertElement(llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(home_lanes), spare_lane),
                                                &a, uint64_t{0}));
    } else {
      wide_args.push_back(b.CreateShuffleVector(&a, llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(lanes), spare_lane), widen));
    }
  }
  llvm::CallInst* r = b.CreateCall(home, wide_args);
  r->setDoesNotAccessMemory();
  r->setDoesNotThrow();
  b.CreateRet(vt != nullptr ? b.CreateShuffleVector(r, narrow) : b.CreateExtractElement(r, uint64_t{0}));
  return f;
}

}  // namespace

llvm::Value* emit_math(ScalarEmitter& e, MathFn fn, llvm::ArrayRef<llvm::Value*> args) {
  const MathEntry en = entry(fn);
  KILN_INTERNAL_ASSERT(static_cast<int>(args.size()) == en.arity);
  if (en.arity == 1)
    if (llvm::Value* own = emit_own_math(e, fn, args[0])) return own;
  llvm::Type* t = args[0]->getType();
  KILN_INTERNAL_ASSERT(t->isFloatTy() || t->isDoubleTy());
  const bool is_f32 = t->isFloatTy();
  const std::string scalar_name = std::string(en.name) + (is_f32 ? "f" : "");
  llvm::SmallVector<llvm::Type*, 2> params(en.arity, t);
  llvm::FunctionType* fty = llvm::FunctionType::get(t, params, false);
  if (!en.libmvec) {
    auto callee = e.m.getOrInsertFunction(scalar_name, fty);
    mark_pure(llvm::cast<llvm::Function>(callee.getCallee()));
    llvm::CallInst* call = e.b.CreateCall(callee, args);
    call->setDoesNotAccessMemory();
    call->setDoesNotThrow();
    return call;
  }

  // Every evaluation goes through one libmvec function, the widest the target has (its
  // "home" variant): the scalar form and the narrower vector forms are small functions of
  // this module that pad their lanes into a call of it (home_wrapper). Wider loops (none at
  // the target's own width) call the scalar form per lane.
  struct Isa { char letter; unsigned f32_lanes, f64_lanes; bool available; };
  const Isa isas[] = {{'b', 4, 2, true}, {'d', 8, 4, e.vector_bits >= 256}, {'e', 16, 8, e.vector_bits >= 512}};
  const std::string vparams(static_cast<size_t>(en.arity), 'v');
  const Isa* home = &isas[0];
  for (const Isa& isa : isas)
    if (isa.available) home = &isa;
  auto lanes_of = [&](const Isa& isa) { return is_f32 ? isa.f32_lanes : isa.f64_lanes; };
  auto mangled = [&](const Isa& isa, const std::string& name) {
    return "_ZGV" + std::string(1, isa.letter) + "N" + std::to_string(lanes_of(isa)) + vparams + "_" + name;
  };
  const std::string home_name = mangled(*home, scalar_name);
  llvm::Function* home_fn = e.m.getFunction(home_name);
  if (home_fn == nullptr) {
    llvm::Type* vt = llvm::FixedVectorType::get(t, lanes_of(*home));
    llvm::SmallVector<llvm::Type*, 2> vparams_t(en.arity, vt);
    home_fn = llvm::Function::Create(llvm::FunctionType::get(vt, vparams_t, false), llvm::Function::ExternalLinkage,
                                     home_name, e.m);
    mark_pure(home_fn);
    llvm::appendToCompilerUsed(e.m, {home_fn});
  }
  const std::string wrapper = "kiln_math_" + scalar_name;
  const double spare = fn == MathFn::acosh ? 2.0 : 0.5;  // inside every function's domain
  llvm::Function* scalar_fn = home_wrapper(e.m, home_fn, wrapper, fty, spare);
  std::string variants;
  for (const Isa& isa : isas) {
    if (!isa.available) continue;
    if (!variants.empty()) variants += ',';
    if (&isa == home) {
      variants += mangled(isa, wrapper) + "(" + home_name + ")";
      continue;
    }
    const std::string vname = wrapper + "_v" + std::to_string(lanes_of(isa));
    llvm::Type* vt = llvm::FixedVectorType::get(t, lanes_of(isa));
    llvm::SmallVector<llvm::Type*, 2> vparams_t(en.arity, vt);
    if (e.m.getFunction(vname) == nullptr)
      llvm::appendToCompilerUsed(e.m, {home_wrapper(e.m, home_fn, vname, llvm::FunctionType::get(vt, vparams_t, false), spare)});
    variants += mangled(isa, wrapper) + "(" + vname + ")";
  }
  llvm::CallInst* call = e.b.CreateCall(scalar_fn, args);
  call->setDoesNotAccessMemory();
  call->setDoesNotThrow();
  call->addFnAttr(llvm::Attribute::get(e.m.getContext(), "vector-function-abi-variant", variants));
  return call;
}

// The interpreter's Erfinv (runtime/interpreter/interp_unary.cpp), computing both of its branches and
// selecting; the same operations in the same order, so scalar results match it exactly.
llvm::Value* emit_erfinv(ScalarEmitter& e, llvm::Value* y) {
  auto& b = e.b;
  llvm::Type* t = y->getType();
  auto c = [&](double v) { return fconst(e, t, v); };
  llvm::Value* ay = intrinsic1(e, llvm::Intrinsic::fabs, y);
  llvm::Value* k = c(1.1283791670955125738961589);  // 2 / sqrt(pi), rounded to t as C(...) does
  auto newton_step_erf = [&](llvm::Value* x) {  // x -= (erf(x) - ay) / (k * exp(-x * x))
    llvm::Value* num = b.CreateFSub(emit_math(e, MathFn::erf, {x}), ay);
    llvm::Value* den = b.CreateFMul(k, emit_math(e, MathFn::exp, {b.CreateFMul(b.CreateFNeg(x), x)}));
    return b.CreateFSub(x, b.CreateFDiv(num, den));
  };
  // Central range |y| <= 0.7.
  llvm::Value* z = b.CreateFMul(ay, ay);
  llvm::Value* num = b.CreateFAdd(b.CreateFMul(b.CreateFAdd(b.CreateFMul(b.CreateFAdd(b.CreateFMul(c(-0.140543331), z), c(0.914624893)), z), c(-1.645349621)), z), c(0.886226899));
  llvm::Value* den = b.CreateFAdd(b.CreateFMul(b.CreateFAdd(b.CreateFMul(b.CreateFAdd(b.CreateFMul(b.CreateFAdd(b.CreateFMul(c(0.012229801), z), c(-0.329097515)), z), c(1.442710462)), z), c(-2.118377725)), z), c(1.0));
  llvm::Value* xc = b.CreateFDiv(b.CreateFMul(ay, num), den);
  for (int step = 0; step < 2; ++step) xc = newton_step_erf(xc);
  // Tail.
  llvm::Value* tail = b.CreateFSub(c(1.0), ay);
  llvm::Value* zt = intrinsic1(e, llvm::Intrinsic::sqrt, b.CreateFNeg(emit_math(e, MathFn::log, {b.CreateFDiv(tail, c(2.0))})));
  llvm::Value* tnum = b.CreateFAdd(b.CreateFMul(b.CreateFAdd(b.CreateFMul(b.CreateFAdd(b.CreateFMul(c(1.641345311), zt), c(3.429567803)), zt), c(-1.624906493)), zt), c(-1.970840454));
  llvm::Value* tden = b.CreateFAdd(b.CreateFMul(b.CreateFAdd(b.CreateFMul(c(1.637067800), zt), c(3.543889200)), zt), c(1.0));
  llvm::Value* xt = b.CreateFDiv(tnum, tden);
  for (int step = 0; step < 4; ++step) {  // x -= (tail - erfc(x)) / (k * exp(-x * x))
    llvm::Value* r = b.CreateFSub(tail, emit_math(e, MathFn::erfc, {xt}));
    llvm::Value* d = b.CreateFMul(k, emit_math(e, MathFn::exp, {b.CreateFMul(b.CreateFNeg(xt), xt)}));
    xt = b.CreateFSub(xt, b.CreateFDiv(r, d));
  }
  llvm::Value* x = b.CreateSelect(b.CreateFCmpOLE(ay, c(0.7)), xc, xt);  // NaN takes the tail and stays NaN
  llvm::Value* res = intrinsic2(e, llvm::Intrinsic::copysign, x, y);
  llvm::Value* inf = intrinsic2(e, llvm::Intrinsic::copysign, llvm::ConstantFP::getInfinity(t), y);
  res = b.CreateSelect(b.CreateFCmpOEQ(ay, c(1.0)), inf, res);
  return b.CreateSelect(b.CreateFCmpOGT(ay, c(1.0)), llvm::ConstantFP::getQNaN(t), res);
}

}  // namespace kiln::cpu::detail
