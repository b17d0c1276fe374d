// kiln/codegen_cpu/kernel_codegen.cpp — builds LLVM IR for ir::Kernels and compiles it (libkiln_llvm).
//
// Layout of a generated kernel `k`:
//   void k(void* const* args, const int64_t* params, int64_t begin, int64_t end)
//     loads the buffer pointers and calls k.body(ptr noalias a0, ..., params, begin, end),
//     which is always inlined (so the noalias facts survive as alias scopes).
//   k.body: for p0 in [begin, end): for p1 ...: { stage 0; stage 1; ... }
// A Reduce stage keeps its accumulator in an alloca that SROA turns into a phi, so the loop
// vectorizer sees an ordinary reduction (float sum/prod carry `reassoc`). A kernel with Check
// instructions takes args[n] after its n buffers: the ir::KernelFault of the launch. Each
// check site keeps a "failed" flag (and, for bounds, the least and greatest value seen) in
// allocas, reductions again, so checked loops still vectorize; the body's exit claims the
// record for the first site whose flag is set (cmpxchg, threads race for it). The
// outer-reduction-tile schedule iterates the reduce loop outside a tile of the last grid
// dim with one accumulator per tile point.
#include "codegen_cpu/jit.h"
#include "codegen_cpu/module_compiler.h"

#include "base/cpu_level.h"
#include "base/error.h"
#include "base/timing.h"
#include "codegen_cpu/llvm_math.h"
#include "codegen_cpu/llvm_scalar.h"

#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <unordered_map>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>

namespace kiln::cpu {

namespace {

using ir::Expr;
using ir::ExprKind;

// The kernel's vector register width (passes/schedule_loops.cpp), as LLVM's function attribute.
void set_vector_width(llvm::Function* f, const ir::Kernel& k) {
  if (k.schedule.vector_bits > 0) f->addFnAttr("prefer-vector-width", std::to_string(k.schedule.vector_bits));
}

// What the loop vectorizer is told about a loop (0: its own choice).
struct LoopHint {
  unsigned interleave = 0;  // independent vector accumulators
  unsigned width = 0;       // lanes
  // Keeps LLVM's full unroller, which runs before the vectorizer, off a short loop of constant
  // length: unrolled, a 64-element row becomes a serial chain of scalar adds the vectorizer
  // never sees (layer_norm [64, 64] took 6 µs that way).
  bool no_unroll = false;
  // ir::KVectorize::masked_tail: a main loop over a multiple of ir::kMaskedTailChunk
  // iterations and a tail loop of fewer, one vector per iteration with the last one masked
  // (`llvm.loop.vectorize.predicate.enable`). The body is emitted twice.
  bool masked_tail = false;
  bool predicate = false;  // set on the tail loop
  // An ordered stage (ir::KStage::ordered) runs as written, not vectorized, when it carries a
  // value (a scan's running total): `sequential`. Otherwise its order is through memory (a
  // scatter storing at positions read from data), and LLVM's dependence analysis vectorizes
  // only what it proves independent: the 64 columns of a scatter's or a scan's tile
  // (index_add [16384, 512] rows into [8192, 512]: 29 -> 4 ms), never a walk along the
  // positions. (Math calls need no scalar loop: vector and scalar code compute the same bits,
  // codegen_cpu/llvm_math.cpp.)
  bool sequential = false;
};

// The loop hint a stage's vectorize schedule asks for; stage loops are never unrolled.
LoopHint hint_for(const ir::KStage& st) {
  const ir::KVectorize& v = st.vectorize;
  LoopHint h{.no_unroll = true};
  h.sequential = st.ordered && std::any_of(st.body.begin(), st.body.end(),
                                           [](const ir::KInst& in) { return in.kind == ir::KOp::Carry; });
  h.interleave = static_cast<unsigned>(v.interleave);
  h.width = static_cast<unsigned>(v.lanes);
  h.masked_tail = v.masked_tail;
  return h;
}

class KernelGen {
 public:
  KernelGen(llvm::Module& m, const ir::Kernel& k, int vector_bits)
      : C_(m.getContext()), M_(m), B_(C_), E_{B_, m, vector_bits}, k_(k) {}

  llvm::Function* build(const std::string& symbol);

 private:
  llvm::Type* i64() { return llvm::Type::getInt64Ty(C_); }
  llvm::Value* c64(int64_t v) { return llvm::ConstantInt::get(i64(), static_cast<uint64_t>(v), true); }

  llvm::AllocaInst* entry_alloca(llvm::Type* t, llvm::Value* n = nullptr) {
    llvm::IRBuilder<> eb(&F_->getEntryBlock(), F_->getEntryBlock().begin());
    return eb.CreateAlloca(t, n);
  }

  // for (iv = lo; iv < hi; ++iv) body(iv); the hint, where set, goes to the loop vectorizer.
  void loop(llvm::Value* lo, llvm::Value* hi, const std::function<void(llvm::Value*)>& body, LoopHint hint = {}) {
    if (hint.masked_tail) {
      hint.masked_tail = false;
      llvm::Value* mid = B_.CreateAdd(lo, B_.CreateAnd(B_.CreateSub(hi, lo), c64(-ir::kMaskedTailChunk)));
      loop(lo, mid, body, hint);
      hint.interleave = 0;
      hint.predicate = true;
      return loop(mid, hi, body, hint);
    }
    llvm::BasicBlock* pre = B_.GetInsertBlock();
    llvm::BasicBlock* head = llvm::BasicBlock::Create(C_, "loop", F_);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(C_, "loop.exit", F_);
    B_.CreateCondBr(B_.CreateICmpSLT(lo, hi), head, exit);
    B_.SetInsertPoint(head);
    llvm::PHINode* iv = B_.CreatePHI(i64(), 2);
    iv->addIncoming(lo, pre);
    const int64_t loops_before = loops_made_++;
    body(iv);
    // A loop around other loops is never unrolled: LLVM's full unroller copies short ones of
    // constant length (a column sum's 8 batch rows) with every vectorized loop inside, which
    // multiplied a kernel's code, and its compile time, by the trip count for no measurable
    // gain.
    if (loops_made_ > loops_before + 1) hint.no_unroll = true;
    llvm::Value* next = B_.CreateAdd(iv, c64(1), "", /*HasNUW=*/true, /*HasNSW=*/true);
    iv->addIncoming(next, B_.GetInsertBlock());
    llvm::BranchInst* latch = B_.CreateCondBr(B_.CreateICmpSLT(next, hi), head, exit);
    if (hint.interleave > 0 || hint.width > 0 || hint.no_unroll || hint.predicate || hint.sequential) {
      llvm::SmallVector<llvm::Metadata*, 4> ops{nullptr};
      auto add = [&](const char* name, unsigned v) {
        llvm::Metadata* kv[] = {llvm::MDString::get(C_, name), llvm::ConstantAsMetadata::get(B_.getInt32(v))};
        ops.push_back(llvm::MDNode::get(C_, kv));
      };
      if (hint.interleave > 0) add("llvm.loop.interleave.count", hint.interleave);
      if (hint.width > 0) add("llvm.loop.vectorize.width", hint.width);
      if (hint.no_unroll) ops.push_back(llvm::MDNode::get(C_, {llvm::MDString::get(C_, "llvm.loop.unroll.disable")}));
      if (hint.sequential) {
        llvm::Metadata* kv[] = {llvm::MDString::get(C_, "llvm.loop.vectorize.enable"),
                                llvm::ConstantAsMetadata::get(B_.getFalse())};
        ops.push_back(llvm::MDNode::get(C_, kv));
      }
      if (hint.predicate) {
        llvm::Metadata* kv[] = {llvm::MDString::get(C_, "llvm.loop.vectorize.predicate.enable"),
                                llvm::ConstantAsMetadata::get(B_.getTrue())};
        ops.push_back(llvm::MDNode::get(C_, kv));
      }
      llvm::MDNode* md = llvm::MDNode::getDistinct(C_, ops);
      md->replaceOperandWith(0, md);
      latch->setMetadata(llvm::LLVMContext::MD_loop, md);
    }
    B_.SetInsertPoint(exit);
  }

  // Nested loops over extents, binding var(i) to each induction variable; the hint applies to
  // the innermost loop. at_level(i), where given, runs inside the first i loops, before the
  // next one opens (at_level(extents.size()) just before body).
  void nest(const std::vector<Expr>& extents, std::string (*var)(size_t), size_t i, const std::function<void()>& body,
            LoopHint hint = {}, const std::function<void(size_t)>& at_level = nullptr) {
    if (at_level) at_level(i);
    if (i == extents.size()) return body();
    loop(
        c64(0), expr(extents[i]),
        [&](llvm::Value* iv) {
          syms_[var(i)] = iv;
          nest(extents, var, i + 1, body, hint, at_level);
        },
        i + 1 == extents.size() ? hint : LoopHint{});
  }

  // A stage's loop nest with each body instruction emitted at its level (stage_levels), the
  // innermost ones before `inner`.
  void stage_nest(const ir::KStage& st, const std::function<void()>& inner, LoopHint hint) {
    const std::vector<size_t> levels = stage_levels(st);
    nest(
        st.extents, ir::stage_var, 0, inner, hint, [&](size_t level) {
          for (size_t j = 0; j < st.body.size(); ++j)
            if (levels[j] == level) emit_inst(st.body[j]);
        });
  }
  std::vector<size_t> stage_levels(const ir::KStage& st) const;

  llvm::Value* expr(const Expr& e);
  void emit_inst(const ir::KInst& in);
  void emit_stage(const ir::KStage& st);
  void emit_partial_sum(const ir::KStage& st);
  void emit_grid(size_t d);
  void emit_tiled(llvm::Value* lo, llvm::Value* hi);
  // The address of element `index` of argument `arg`; where the index uses a checked position
  // whose check failed (in_bounds_), the scratch cell instead, since a bound of 0 leaves no
  // position of the argument to read or write.
  llvm::Value* element_ptr(int arg, const Expr& index) {
    llvm::Value* p = B_.CreateGEP(storage_type(C_, k_.args[arg].dtype), ptrs_[arg], expr(index));
    if (in_bounds_.empty()) return p;
    std::vector<std::string> syms;
    index.collect_symbols(syms);
    llvm::Value* ok = nullptr;
    for (const std::string& s : syms)
      if (const std::optional<int> id = ir::value_symbol_id(s))
        if (auto it = in_bounds_.find(*id); it != in_bounds_.end()) ok = ok ? B_.CreateAnd(ok, it->second) : it->second;
    return ok ? B_.CreateSelect(ok, p, scratch_) : p;
  }

  llvm::LLVMContext& C_;
  llvm::Module& M_;
  llvm::IRBuilder<> B_;
  int64_t loops_made_ = 0;  // loops emitted so far (loop() tells outer loops by it)
  ScalarEmitter E_;
  const ir::Kernel& k_;
  llvm::Function* F_ = nullptr;
  std::vector<llvm::Value*> ptrs_;
  llvm::Value* begin_ = nullptr;
  llvm::Value* end_ = nullptr;
  std::map<std::string, llvm::Value*> syms_;
  std::map<int, llvm::Value*> vals_;
  std::map<int, llvm::AllocaInst*> carries_;  // KOp::Carry: the slot of each carried value
  std::map<int, ScalarType> dts_;
  // Check sites: their flags and value ranges, and the fault record.
  struct Site {
    int number = 0;  // 1 + position in check_sites
    llvm::AllocaInst* failed = nullptr;
    llvm::AllocaInst* lo = nullptr;  // InBounds: least and greatest value seen
    llvm::AllocaInst* hi = nullptr;
  };
  std::map<const ir::KInst*, Site> sites_;
  llvm::Value* fault_ = nullptr;
  // InBounds checks whose bound may be 0: each one's "holds" flag in the body being emitted, and
  // a 16-byte cell (zeroed at entry; a failed store may leave a value there that a failed load
  // reads, which the fault then discards) that the accesses at their positions use where it
  // does not hold.
  std::map<int, llvm::Value*> in_bounds_;
  llvm::AllocaInst* scratch_ = nullptr;
  void open_sites();
  void report_faults();
  llvm::Value* emit_check(const ir::KInst& in);
};

llvm::Value* KernelGen::expr(const Expr& e) {
  const std::vector<Expr>& ops = e.is_const() || e.is_symbol() ? std::vector<Expr>{} : e.operands();
  auto both = [&](auto f) { return f(expr(ops[0]), expr(ops[1])); };
  switch (e.kind()) {
    case ExprKind::Const: return c64(e.as_const());
    case ExprKind::Symbol: {
      auto it = syms_.find(e.symbol_name());
      if (it != syms_.end()) return it->second;
      if (const std::optional<int> id = ir::value_symbol_id(e.symbol_name()); id && vals_.count(*id)) {
        llvm::Value* v = vals_.at(*id);  // a position read from data (ir::value_expr)
        return v->getType() == i64() ? v : B_.CreateSExt(v, i64());
      }
      internal_fail("kernel {}: symbol {} has no value", k_.name, e.symbol_name());
    }
    case ExprKind::Add: {
      llvm::Value* v = expr(ops[0]);
      for (size_t i = 1; i < ops.size(); ++i) v = B_.CreateAdd(v, expr(ops[i]));
      return v;
    }
    case ExprKind::Mul: {
      llvm::Value* v = expr(ops[0]);
      for (size_t i = 1; i < ops.size(); ++i) v = B_.CreateMul(v, expr(ops[i]));
      return v;
    }
    case ExprKind::FloorDiv:
      return both([&](llvm::Value* a, llvm::Value* b) {
        llvm::Value* q = B_.CreateSDiv(a, b);
        llvm::Value* r = B_.CreateSRem(a, b);
        llvm::Value* adjust = B_.CreateAnd(B_.CreateICmpNE(r, c64(0)),
                                           B_.CreateICmpNE(B_.CreateICmpSLT(r, c64(0)), B_.CreateICmpSLT(b, c64(0))));
        return B_.CreateSelect(adjust, B_.CreateSub(q, c64(1)), q);
      });
    case ExprKind::Mod:
      return both([&](llvm::Value* a, llvm::Value* b) {
        llvm::Value* r = B_.CreateSRem(a, b);
        llvm::Value* adjust = B_.CreateAnd(B_.CreateICmpNE(r, c64(0)),
                                           B_.CreateICmpNE(B_.CreateICmpSLT(r, c64(0)), B_.CreateICmpSLT(b, c64(0))));
        return B_.CreateSelect(adjust, B_.CreateAdd(r, b), r);
      });
    case ExprKind::Min:
      return both([&](llvm::Value* a, llvm::Value* b) { return B_.CreateSelect(B_.CreateICmpSLT(a, b), a, b); });
    case ExprKind::Max:
      return both([&](llvm::Value* a, llvm::Value* b) { return B_.CreateSelect(B_.CreateICmpSGT(a, b), a, b); });
    case ExprKind::Eq:
      return both([&](llvm::Value* a, llvm::Value* b) { return B_.CreateZExt(B_.CreateICmpEQ(a, b), i64()); });
    case ExprKind::Ne:
      return both([&](llvm::Value* a, llvm::Value* b) { return B_.CreateZExt(B_.CreateICmpNE(a, b), i64()); });
    case ExprKind::Lt:
      return both([&](llvm::Value* a, llvm::Value* b) { return B_.CreateZExt(B_.CreateICmpSLT(a, b), i64()); });
    case ExprKind::Le:
      return both([&](llvm::Value* a, llvm::Value* b) { return B_.CreateZExt(B_.CreateICmpSLE(a, b), i64()); });
  }
  internal_fail("kernel codegen: unhandled expression kind");
}

void KernelGen::emit_inst(const ir::KInst& in) {
  switch (in.kind) {
    case ir::KOp::Load: {
      llvm::Value* p = element_ptr(in.arg, in.index);
      llvm::Value* v = B_.CreateLoad(storage_type(C_, in.dtype), p);
      vals_[in.id] = from_storage(E_, in.dtype, v);
      break;
    }
    case ir::KOp::Store: {
      const int src = in.operands.at(0);
      llvm::Value* v = to_storage(E_, k_.args[in.arg].dtype, vals_.at(src));
      B_.CreateStore(v, element_ptr(in.arg, in.index));
      return;
    }
    case ir::KOp::Const: vals_[in.id] = emit_const(E_, in.dtype, in.value); break;
    case ir::KOp::Index: {
      llvm::Value* v = expr(in.index);
      if (in.dtype == ScalarType::Bool)
        v = B_.CreateICmpNE(v, c64(0));
      else if (in.dtype != ScalarType::Int64)
        v = from_index(E_, in.dtype, v);
      vals_[in.id] = v;
      break;
    }
    case ir::KOp::Compute: {
      std::vector<ScalarType> in_dts;
      std::vector<llvm::Value*> ops;
      for (int o : in.operands) {
        in_dts.push_back(dts_.at(o));
        ops.push_back(vals_.at(o));
      }
      vals_[in.id] = emit_compute(E_, in, in_dts, ops);
      break;
    }
    case ir::KOp::Check: vals_[in.id] = emit_check(in); break;
    case ir::KOp::Carry: vals_[in.id] = B_.CreateLoad(compute_type(C_, in.dtype), carries_.at(in.id)); break;
    case ir::KOp::Update: B_.CreateStore(vals_.at(in.operands.at(1)), carries_.at(in.operands.at(0))); return;
    case ir::KOp::Random:
      vals_[in.id] = emit_random(E_, in, vals_.at(in.operands.at(0)), vals_.at(in.operands.at(1)), vals_.at(in.operands.at(2)));
      break;
  }
  dts_[in.id] = in.dtype;
}

// One alloca per site and flag, set up in the entry block.
void KernelGen::open_sites() {
  int number = 0;
  for (const ir::KInst* c : ir::check_sites(k_)) {
    Site s;
    s.number = ++number;
    s.failed = entry_alloca(B_.getInt1Ty());
    B_.CreateStore(B_.getFalse(), s.failed);
    if (c->check == ir::CheckKind::InBounds) {
      s.lo = entry_alloca(i64());
      s.hi = entry_alloca(i64());
      B_.CreateStore(c64(INT64_MAX), s.lo);
      B_.CreateStore(c64(INT64_MIN), s.hi);
      const std::optional<int64_t> bound = c->index.maybe_const();
      if (!scratch_ && !(bound && *bound >= 1)) {
        llvm::Type* cell = llvm::ArrayType::get(i64(), 2);
        scratch_ = entry_alloca(cell);
        scratch_->setAlignment(llvm::Align(16));
        B_.CreateStore(llvm::Constant::getNullValue(cell), scratch_);
      }
    }
    sites_.emplace(c, s);
  }
}

// x where the check holds; else a safe value, and the site's flag (and range) remember it.
llvm::Value* KernelGen::emit_check(const ir::KInst& in) {
  const Site& s = sites_.at(&in);
  llvm::Value* x = vals_.at(in.operands.at(0));
  llvm::Value* ok = nullptr;
  llvm::Value* safe = nullptr;
  if (in.check == ir::CheckKind::NonZero) {
    ok = B_.CreateICmpNE(x, llvm::Constant::getNullValue(x->getType()));
    safe = llvm::ConstantInt::get(x->getType(), 1);
  } else {
    llvm::Value* wide = x->getType() == i64() ? x : B_.CreateSExt(x, i64());
    ok = B_.CreateAnd(B_.CreateICmpSGE(wide, c64(0)), B_.CreateICmpSLT(wide, expr(in.index)));
    safe = llvm::Constant::getNullValue(x->getType());
    if (const std::optional<int64_t> bound = in.index.maybe_const(); !(bound && *bound >= 1)) in_bounds_[in.id] = ok;
    B_.CreateStore(B_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, B_.CreateLoad(i64(), s.lo), wide), s.lo);
    B_.CreateStore(B_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, B_.CreateLoad(i64(), s.hi), wide), s.hi);
  }
  B_.CreateStore(B_.CreateOr(B_.CreateLoad(B_.getInt1Ty(), s.failed), B_.CreateNot(ok)), s.failed);
  return B_.CreateSelect(ok, x, safe);
}

// At the body's exit: the first site that failed claims the record (site 0 -> its number),
// then writes the value and the bound.
void KernelGen::report_faults() {
  for (const ir::KInst* c : ir::check_sites(k_)) {
    const Site& s = sites_.at(c);
    llvm::BasicBlock* claim = llvm::BasicBlock::Create(C_, "fault", F_);
    llvm::BasicBlock* next = llvm::BasicBlock::Create(C_, "fault.next", F_);
    B_.CreateCondBr(B_.CreateLoad(B_.getInt1Ty(), s.failed), claim, next);
    B_.SetInsertPoint(claim);
    llvm::Value* value = c64(0);
    llvm::Value* bound = c64(0);
    if (c->check == ir::CheckKind::InBounds) {
      llvm::Value* lo = B_.CreateLoad(i64(), s.lo);
      value = B_.CreateSelect(B_.CreateICmpSLT(lo, c64(0)), lo, B_.CreateLoad(i64(), s.hi));
      bound = expr(c->index);
    }
    llvm::Value* won = B_.CreateExtractValue(
        B_.CreateAtomicCmpXchg(fault_, c64(0), c64(s.number), llvm::MaybeAlign(8), llvm::AtomicOrdering::Monotonic,
                               llvm::AtomicOrdering::Monotonic),
        1);
    llvm::BasicBlock* write = llvm::BasicBlock::Create(C_, "fault.write", F_);
    B_.CreateCondBr(won, write, next);
    B_.SetInsertPoint(write);
    B_.CreateStore(value, B_.CreateConstGEP1_64(i64(), fault_, 1));
    B_.CreateStore(bound, B_.CreateConstGEP1_64(i64(), fault_, 2));
    B_.CreateBr(next);
    B_.SetInsertPoint(next);
  }
}

// The loop level at which each of a stage's body instructions is emitted: inside as many of
// the stage's loops as its value depends on (through the loop variables in its index or
// bound, the positions read from data it uses, and its operands), so that what one iteration
// of an outer loop computes is not redone by every iteration of the inner ones (a scatter's
// id and its bounds check once per row, not once per column: the column loop then vectorizes
// without a min/max reduction of an invariant value). Only across loops of constant extent
// >= 1, so a hoisted instruction runs exactly when, and as, its first iteration would have.
// Stores, carries and updates stay innermost, as do loads of buffers the kernel writes.
std::vector<size_t> KernelGen::stage_levels(const ir::KStage& st) const {
  const size_t n = st.extents.size();
  size_t floor = n;
  while (floor > 0 && st.extents[floor - 1].is_const() && st.extents[floor - 1].as_const() >= 1) --floor;
  std::map<int, size_t> level_of;  // value id -> level; ids from earlier stages are absent (0)
  auto expr_level = [&](const Expr& e) {
    size_t l = 0;
    std::vector<std::string> names;
    e.collect_symbols(names);
    for (const std::string& name : names) {
      for (size_t i = 0; i < n; ++i)
        if (name == ir::stage_var(i)) l = std::max(l, i + 1);
      if (const std::optional<int> id = ir::value_symbol_id(name))
        if (auto it = level_of.find(*id); it != level_of.end()) l = std::max(l, it->second);
    }
    return l;
  };
  std::vector<size_t> levels;
  for (const ir::KInst& in : st.body) {
    size_t l = expr_level(in.index);
    for (int o : in.operands)
      if (auto it = level_of.find(o); it != level_of.end()) l = std::max(l, it->second);
    const bool pinned = in.kind == ir::KOp::Store || in.kind == ir::KOp::Carry || in.kind == ir::KOp::Update ||
                        (in.kind == ir::KOp::Load && k_.args[in.arg].output);
    l = pinned ? n : std::max(l, floor);
    levels.push_back(l);
    if (in.id >= 0) level_of[in.id] = l;
  }
  return levels;
}

void KernelGen::emit_stage(const ir::KStage& st) {
  if (st.kind == ir::StageKind::Loop) {
    // Carried values live in a slot each (promoted to registers by mem2reg), set to their first
    // value before the stage's loops.
    for (const ir::KInst& in : st.body)
      if (in.kind == ir::KOp::Carry) {
        carries_[in.id] = entry_alloca(compute_type(C_, in.dtype));
        B_.CreateStore(emit_const(E_, in.dtype, in.value), carries_[in.id]);
      }
    stage_nest(st, [] {}, hint_for(st));
    return;
  }
  if (st.sum_exp >= 0)  // passes/online_softmax.cpp runs for GPUs only
    internal_fail("cpu: kernel {}: reduce %{} folds sum_exp %{}, a GPU schedule the cpu backend does not lower", k_.name,
                  st.result, st.sum_exp);
  if (st.vectorize.partials > 0) return emit_partial_sum(st);
  const bool arg = st.reduce_op == ir::ReductionOp::argmax || st.reduce_op == ir::ReductionOp::argmin;
  llvm::Type* ty = compute_type(C_, st.acc_dtype);
  llvm::AllocaInst* acc = entry_alloca(ty);
  llvm::AllocaInst* best = arg ? entry_alloca(i64()) : nullptr;
  llvm::AllocaInst* first = arg ? entry_alloca(llvm::Type::getInt1Ty(C_)) : nullptr;
  if (arg) {
    B_.CreateStore(llvm::Constant::getNullValue(ty), acc);
    B_.CreateStore(c64(0), best);
    B_.CreateStore(B_.getTrue(), first);
  } else {
    B_.CreateStore(reduce_identity(E_, st.reduce_op, st.acc_dtype), acc);
  }
  const bool minmax = st.reduce_op == ir::ReductionOp::amax || st.reduce_op == ir::ReductionOp::amin;
  // A float max/min folds with maxnum/minnum (one vmaxps) under nnan/nsz, which lets the
  // vectorizer reduce it, and keeps a separate "saw a NaN" flag (one compare, one or) that
  // gives NaN at the end: the result is PyTorch's (NaN propagates). llvm.maximum instead took
  // six dependent instructions per vector. Under nnan a NaN input makes the folded value
  // poison, but then the flag selects the NaN and that value is never used. A max of +0 and -0
  // may give either zero (as PyTorch's vectorized kernels do).
  const bool float_minmax = minmax && is_floating_point(st.acc_dtype);
  llvm::AllocaInst* saw_nan = float_minmax ? entry_alloca(B_.getInt1Ty()) : nullptr;
  if (saw_nan) B_.CreateStore(B_.getFalse(), saw_nan);
  const LoopHint hint = hint_for(st);
  stage_nest(
      st,
      [&] {
        llvm::Value* x = vals_.at(st.yield);
        llvm::Value* a = B_.CreateLoad(ty, acc);
        if (float_minmax) {
          llvm::Value* m = B_.CreateBinaryIntrinsic(
              st.reduce_op == ir::ReductionOp::amax ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum, a, x);
          if (auto* call = llvm::dyn_cast<llvm::Instruction>(m)) {
            llvm::FastMathFlags f;
            f.setNoNaNs();
            f.setNoSignedZeros();
            call->setFastMathFlags(f);
          }
          B_.CreateStore(m, acc);
          B_.CreateStore(B_.CreateOr(B_.CreateLoad(B_.getInt1Ty(), saw_nan), B_.CreateFCmpUNO(x, x)), saw_nan);
          return;
        }
        if (!arg) {
          if (x->getType() != ty) x = B_.CreateFPExt(x, ty);  // a float sum/prod's narrower values
          B_.CreateStore(reduce_combine(E_, st.reduce_op, st.acc_dtype, a, x), acc);
          return;
        }
        // Flat position of this iteration in the stage's loop nest.
        Expr pos = 0;
        for (size_t i = 0; i < st.extents.size(); ++i) pos = pos * st.extents[i] + ir::stage_expr(i);
        llvm::Value* take =
            B_.CreateOr(B_.CreateLoad(B_.getInt1Ty(), first), emit_argcmp(E_, st.reduce_op, st.acc_dtype, a, x));
        B_.CreateStore(B_.CreateSelect(take, x, a), acc);
        B_.CreateStore(B_.CreateSelect(take, expr(pos), B_.CreateLoad(i64(), best)), best);
        B_.CreateStore(B_.getFalse(), first);
      },
      hint);
  llvm::Value* result = arg ? static_cast<llvm::Value*>(B_.CreateLoad(i64(), best)) : B_.CreateLoad(ty, acc);
  if (saw_nan)
    result = B_.CreateSelect(B_.CreateLoad(B_.getInt1Ty(), saw_nan), llvm::ConstantFP::getNaN(ty), result);
  vals_[st.result] = result;
  dts_[st.result] = arg ? ScalarType::Int64 : st.acc_dtype;
}

// A float sum in the fixed layout of ir::KVectorize::partials. The nest's outer loops run as
// usual; the innermost runs in blocks of P x kPartialRows values, position t of a block adding
// into partial t mod P: whole chunks of P (a loop over the chunk's P positions, which the
// vectorizer widens to whatever the host's registers hold, into a chunk buffer added to the P
// partials lane by lane), then one masked chunk. The partials are widened to the accumulator's
// dtype and combine pairwise (p[l] + p[l + P/2], then halves); the block's total adds into the
// accumulator. None of these additions is `reassoc`: every one has fixed operands, so the
// result does not depend on the vector width.
void KernelGen::emit_partial_sum(const ir::KStage& st) {
  const int64_t P = st.vectorize.partials;
  const int64_t block = P * ir::kPartialRows;
  // The yielded value's dtype: an instruction of the body, or a value from before the stage.
  const ir::KInst* yielded = ir::body_inst(st, st.yield);
  const ScalarType yield_dt = yielded ? yielded->dtype : dts_.at(st.yield);
  llvm::Type* ty = compute_type(C_, st.acc_dtype);
  llvm::Type* pt = compute_type(C_, yield_dt);
  if (!pt->isFloatingPointTy() || pt->getPrimitiveSizeInBits() > ty->getPrimitiveSizeInBits())
    internal_fail("codegen_cpu: partials of dtype {} for a {} sum", dtype_name(yield_dt), dtype_name(st.acc_dtype));
  llvm::AllocaInst* acc = entry_alloca(ty);
  llvm::Type* vt = llvm::FixedVectorType::get(pt, static_cast<unsigned>(P));
  llvm::AllocaInst* part = entry_alloca(vt);
  B_.CreateStore(reduce_identity(E_, ir::ReductionOp::sum, st.acc_dtype), acc);
  // The partials are one vector value, only ever loaded and stored whole, which SROA keeps in
  // registers; a chunk's values go to `chunk` (a vectorized store loop) and add to it at once.
  llvm::AllocaInst* chunk = entry_alloca(vt);
  const std::vector<Expr> outer(st.extents.begin(), st.extents.end() - 1);
  const std::string inner = ir::stage_var(st.extents.size() - 1);
  nest(outer, ir::stage_var, 0, [&] {
    llvm::Value* n = expr(st.extents.back());
    llvm::Value* blocks = B_.CreateSDiv(B_.CreateAdd(n, c64(block - 1)), c64(block));
    loop(c64(0), blocks, [&](llvm::Value* b) {
      llvm::Value* base = B_.CreateMul(b, c64(block));
      llvm::Value* count = B_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, B_.CreateSub(n, base), c64(block));
      B_.CreateStore(llvm::Constant::getNullValue(vt), part);
      // The value at position t of the block into lane l of the chunk.
      auto value = [&](llvm::Value* t, llvm::Value* l) {
        syms_[inner] = B_.CreateAdd(base, t);
        for (const ir::KInst& in : st.body) emit_inst(in);
        B_.CreateStore(vals_.at(st.yield), B_.CreateGEP(pt, chunk, l));
      };
      auto add_chunk = [&] { B_.CreateStore(B_.CreateFAdd(B_.CreateLoad(vt, part), B_.CreateLoad(vt, chunk)), part); };
      llvm::Value* chunks = B_.CreateSDiv(count, c64(P));
      loop(c64(0), chunks, [&](llvm::Value* j) {
        llvm::Value* at = B_.CreateMul(j, c64(P));
        loop(c64(0), c64(P), [&](llvm::Value* l) { value(B_.CreateAdd(at, l), l); }, LoopHint{.no_unroll = true});
        add_chunk();
      });
      // The last, partial chunk: lanes past its end add zeros (exact).
      llvm::Value* done = B_.CreateMul(chunks, c64(P));
      B_.CreateStore(llvm::Constant::getNullValue(vt), chunk);
      loop(done, count, [&](llvm::Value* t) { value(t, B_.CreateSub(t, done)); }, LoopHint{.no_unroll = true, .predicate = true});
      add_chunk();
      // Widened, then pairwise, as one vector of the P partials halved: lanes [0, w) plus lanes
      // [w, 2w). (A row of at most P values is then summed in f64 alone.)
      llvm::Value* v = B_.CreateLoad(vt, part);
      if (pt != ty) v = B_.CreateFPExt(v, llvm::FixedVectorType::get(ty, static_cast<unsigned>(P)));
      for (int64_t w = P / 2; w >= 1; w /= 2) {
        llvm::SmallVector<int, 64> lo, hi;
        for (int64_t l = 0; l < w; ++l) {
          lo.push_back(static_cast<int>(l));
          hi.push_back(static_cast<int>(l + w));
        }
        v = B_.CreateFAdd(B_.CreateShuffleVector(v, lo), B_.CreateShuffleVector(v, hi));
      }
      llvm::Value* total = B_.CreateExtractElement(v, uint64_t{0});
      B_.CreateStore(B_.CreateFAdd(B_.CreateLoad(ty, acc), total), acc);
    });
  });
  vals_[st.result] = B_.CreateLoad(ty, acc);
  dts_[st.result] = st.acc_dtype;
}

// The outer-reduction schedule over [lo, hi) of the last grid dim, in tiles.
void KernelGen::emit_tiled(llvm::Value* lo, llvm::Value* hi) {
  const int64_t T = k_.schedule.outer_reduction_tile;
  const ir::KStage& red = k_.stages[0];
  const ir::KStage& fin = k_.stages[1];
  const std::string last = ir::grid_var(k_.grid.size() - 1);
  llvm::Type* ty = compute_type(C_, red.acc_dtype);
  llvm::AllocaInst* acc = entry_alloca(ty, c64(T));
  // for t in [lo, hi) step T
  llvm::Value* ntiles = B_.CreateSDiv(B_.CreateAdd(B_.CreateSub(hi, lo), c64(T - 1)), c64(T));
  loop(c64(0), ntiles, [&](llvm::Value* tile) {
    llvm::Value* t0 = B_.CreateAdd(lo, B_.CreateMul(tile, c64(T)));
    llvm::Value* rem = B_.CreateSub(hi, t0);
    llvm::Value* n = B_.CreateSelect(B_.CreateICmpSLT(rem, c64(T)), rem, c64(T));
    loop(c64(0), n, [&](llvm::Value* j) {
      B_.CreateStore(reduce_identity(E_, red.reduce_op, red.acc_dtype), B_.CreateGEP(ty, acc, j));
    });
    // The innermost reduction extent (the rows) runs the schedule's tile_rows rows per pass over
    // the tile, their values combined pairwise first; then the remaining rows one at a time.
    const std::vector<Expr> outer(red.extents.begin(), red.extents.end() - 1);
    const std::string row = ir::stage_var(red.extents.size() - 1);
    // A float sum whose yield is narrower than its accumulator (f32 values into f64) combines
    // a group's values in their own dtype, pairwise and without `reassoc`, and widens the
    // group's total once (in accumulate); a product's values widen first.
    const bool narrow_groups = red.reduce_op == ir::ReductionOp::sum;
    auto combine = [&](llvm::Value* a, llvm::Value* x) {
      return a->getType() != ty ? B_.CreateFAdd(a, x) : reduce_combine(E_, red.reduce_op, red.acc_dtype, a, x);
    };
    // The yield of the body at column j of the tile and row r.
    auto value_at = [&](llvm::Value* j, llvm::Value* r) {
      syms_[row] = r;
      syms_[last] = B_.CreateAdd(t0, j);
      for (const ir::KInst& in : red.body) emit_inst(in);
      llvm::Value* x = vals_.at(red.yield);
      return x->getType() != ty && !narrow_groups ? B_.CreateFPExt(x, ty) : x;
    };
    auto accumulate = [&](llvm::Value* j, llvm::Value* x) {
      if (x->getType() != ty) x = B_.CreateFPExt(x, ty);
      llvm::Value* slot = B_.CreateGEP(ty, acc, j);
      B_.CreateStore(combine(B_.CreateLoad(ty, slot), x), slot);
    };
    nest(outer, ir::stage_var, 0, [&] {
      llvm::Value* rows = expr(red.extents.back());
      const int64_t group = std::max<int64_t>(k_.schedule.tile_rows, 1);
      llvm::Value* grouped = group > 1 ? B_.CreateAnd(rows, c64(-group)) : c64(0);  // tile_rows: a power of two
      if (group > 1) loop(c64(0), B_.CreateUDiv(grouped, c64(group)), [&](llvm::Value* g) {
        llvm::Value* r0 = B_.CreateMul(g, c64(group));
        loop(c64(0), n, [&](llvm::Value* j) {
          std::vector<llvm::Value*> v;
          for (int64_t u = 0; u < group; ++u) v.push_back(value_at(j, B_.CreateAdd(r0, c64(u))));
          for (size_t w = 1; w < v.size(); w *= 2)  // pairwise: ((v0 v1) (v2 v3)) ...
            for (size_t u = 0; u + w < v.size(); u += 2 * w) v[u] = combine(v[u], v[u + w]);
          accumulate(j, v[0]);
        });
      });
      loop(grouped, rows, [&](llvm::Value* r) { loop(c64(0), n, [&](llvm::Value* j) { accumulate(j, value_at(j, r)); }); });
    });
    loop(c64(0), n, [&](llvm::Value* j) {
      syms_[last] = B_.CreateAdd(t0, j);
      vals_[red.result] = B_.CreateLoad(ty, B_.CreateGEP(ty, acc, j));
      dts_[red.result] = red.acc_dtype;
      for (const ir::KInst& in : fin.body) emit_inst(in);
    });
  });
}

void KernelGen::emit_grid(size_t d) {
  const size_t n = k_.grid.size();
  const bool tiled = k_.schedule.outer_reduction_tile > 0;
  if (n == 0) {
    for (const ir::KStage& st : k_.stages) emit_stage(st);
    return;
  }
  llvm::Value* lo = d == 0 ? begin_ : c64(0);
  llvm::Value* hi = d == 0 ? end_ : expr(k_.grid[d]);
  if (tiled && d == n - 1) return emit_tiled(lo, hi);
  loop(lo, hi, [&](llvm::Value* iv) {
    syms_[ir::grid_var(d)] = iv;
    if (d + 1 < n) return emit_grid(d + 1);
    for (const ir::KStage& st : k_.stages) emit_stage(st);
  });
}

llvm::Function* KernelGen::build(const std::string& symbol) {
  llvm::Type* ptr = llvm::PointerType::get(C_, 0);
  const bool checked = ir::has_checks(k_);
  // The body, with one noalias pointer per buffer (and the fault record's after them).
  std::vector<llvm::Type*> body_params(k_.args.size() + (checked ? 1 : 0), ptr);
  body_params.insert(body_params.end(), {ptr, i64(), i64()});
  F_ = llvm::Function::Create(llvm::FunctionType::get(B_.getVoidTy(), body_params, false),
                              llvm::Function::InternalLinkage, symbol + ".body", M_);
  F_->addFnAttr(llvm::Attribute::AlwaysInline);
  F_->addFnAttr(llvm::Attribute::NoUnwind);
  set_vector_width(F_, k_);
  for (size_t i = 0; i < k_.args.size(); ++i) {
    F_->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
    F_->addParamAttr(static_cast<unsigned>(i),
                     llvm::Attribute::getWithAlignment(C_, llvm::Align(element_size(k_.args[i].dtype))));
    ptrs_.push_back(F_->getArg(static_cast<unsigned>(i)));
  }
  const unsigned n_ptrs = static_cast<unsigned>(k_.args.size() + (checked ? 1 : 0));
  if (checked) fault_ = F_->getArg(static_cast<unsigned>(k_.args.size()));
  llvm::Value* params = F_->getArg(n_ptrs);
  begin_ = F_->getArg(n_ptrs + 1);
  end_ = F_->getArg(n_ptrs + 2);
  B_.SetInsertPoint(llvm::BasicBlock::Create(C_, "entry", F_));
  for (size_t i = 0; i < k_.params.size(); ++i)
    syms_[k_.params[i]] = B_.CreateLoad(i64(), B_.CreateConstGEP1_64(i64(), params, i), k_.params[i]);
  open_sites();
  emit_grid(0);
  report_faults();
  B_.CreateRetVoid();
  llvm::Function* body = F_;

  // The entry point with the KernelFn signature.
  llvm::Function* f = llvm::Function::Create(llvm::FunctionType::get(B_.getVoidTy(), {ptr, ptr, i64(), i64()}, false),
                                             llvm::Function::ExternalLinkage, symbol, M_);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  set_vector_width(f, k_);
  B_.SetInsertPoint(llvm::BasicBlock::Create(C_, "entry", f));
  std::vector<llvm::Value*> call_args;
  for (size_t i = 0; i < n_ptrs; ++i)
    call_args.push_back(B_.CreateLoad(ptr, B_.CreateConstGEP1_64(ptr, f->getArg(0), i)));
  call_args.insert(call_args.end(), {f->getArg(1), f->getArg(2), f->getArg(3)});
  B_.CreateCall(body, call_args);
  B_.CreateRetVoid();
  return f;
}

// LLVM prints a context's diagnostics (warnings such as "loop not vectorized: the optimizer was
// unable to perform the requested transformation", errors, and remarks that -pass-remarks
// options turned on) to stderr unless the context has a handler: ours hands each one to
// `sink` (when set) and prints nothing. Remarks nobody asked for are not even formatted.
void route_diagnostics(llvm::LLVMContext& ctx, const std::function<void(std::string_view)>* sink) {
  ctx.setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo* di, void* arg) {
        const auto* out = static_cast<const std::function<void(std::string_view)>*>(arg);
        if (!out || !*out) return;
        std::string text;
        llvm::raw_string_ostream os(text);
        llvm::DiagnosticPrinterRawOStream printer(os);
        di->print(printer);
        (*out)(fmt::format("llvm {}: {}", llvm::LLVMContext::getDiagnosticMessagePrefix(di->getSeverity()), os.str()));
      },
      const_cast<std::function<void(std::string_view)>*>(sink), /*RespectFilters=*/true);
}

std::unique_ptr<llvm::Module> new_module(llvm::LLVMContext& ctx, const std::string& name) {
  auto m = std::make_unique<llvm::Module>(name, ctx);
  m->setDataLayout(Jit::instance().data_layout());
  m->setTargetTriple(Jit::instance().target_triple());
  return m;
}

}  // namespace

// libkiln_llvm's ModuleCompiler (codegen_cpu/module_compiler.h).
class LlvmModuleCompiler final : public ModuleCompiler {
 public:
  CompiledModule compile(const std::vector<const ir::Kernel*>& kernels, const std::vector<std::string>& names,
                         bool want_ir, bool want_asm, const std::function<void(std::string_view)>* diagnostics,
                         const CpuLevel& level) const override {
    CompiledModule out;
    Jit& jit = Jit::instance();
    const auto t_build = std::chrono::steady_clock::now();
    auto ctx = std::make_unique<llvm::LLVMContext>();
    route_diagnostics(*ctx, diagnostics);
    auto m = new_module(*ctx, "kiln_module");
    for (size_t i = 0; i < kernels.size(); ++i) KernelGen(*m, *kernels[i], level.vector_bits).build(names.at(i));
    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyModule(*m, &os)) internal_fail("generated LLVM IR does not verify: {}", os.str());
    out.build_ms = ms_since(t_build);
    JitArtifacts arts;
    JitTimings tim;
    jit.optimize(*m, want_ir, &arts, &tim, level.llvm_cpu);
    out.optimize_ms = tim.optimize_ms;
    const auto t_emit = std::chrono::steady_clock::now();
    out.object = jit.emit_object(*m, want_asm, &arts, level.llvm_cpu);
    out.emit_ms = ms_since(t_emit);
    out.llvm_ir = std::move(arts.llvm_ir);
    out.assembly = std::move(arts.assembly);
    return out;
  }

  std::string kernel_llvm_ir(const ir::Kernel& k) const override {
    llvm::LLVMContext ctx;
    route_diagnostics(ctx, nullptr);
    auto m = new_module(ctx, k.name);
    KernelGen(*m, k, native_cpu_level().vector_bits).build(k.name);
    std::string s;
    llvm::raw_string_ostream os(s);
    m->print(os, nullptr);
    return os.str();
  }
};

}  // namespace kiln::cpu

const kiln::cpu::ModuleCompiler* kiln_llvm_module_compiler() {
  static const kiln::cpu::LlvmModuleCompiler compiler;
  return &compiler;
}
