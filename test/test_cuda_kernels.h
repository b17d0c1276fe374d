// kiln/test/test_cuda_kernels.h — builders for hand-written ir::Kernels and the NVRTC check of the CUDA tests.
//
// The CUDA tests build kernels instruction by instruction (ld, st, cst, idx, op, loop, reduce),
// verify them with ir::verify_kernel, render them with cuda::emit_cuda and compile the source
// to PTX (compile_ptx) or to cubins (compile_cubin) with NVRTC. Both report the NVRTC log and the source on failure; tests call
// KILN_SKIP_WITHOUT_NVRTC() before it so that a machine without NVRTC skips with the reason.
#pragma once

#include "codegen_cuda/cuda_emitter.h"
#include "codegen_cuda/nvrtc.h"
#include "ir/kernel.h"
#include "passes/schedule.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#define KILN_SKIP_WITHOUT_NVRTC()                                    \
  do {                                                               \
    std::string kiln_why_;                                           \
    if (!::kiln::cuda::nvrtc_available(&kiln_why_)) GTEST_SKIP() << kiln_why_; \
  } while (0)

namespace kiln::test::cudak {

using ir::Expr;
using ir::KInst;
using ir::KOp;
using ir::KStage;

inline Expr P(size_t i) { return ir::grid_expr(i); }
inline Expr R(size_t i) { return ir::stage_expr(i); }
inline Expr S(const char* name) { return Expr::symbol(name); }

inline KInst ld(int id, int arg, Expr index, ScalarType t) {
  KInst in;
  in.kind = KOp::Load;
  in.id = id;
  in.arg = arg;
  in.index = index;
  in.dtype = t;
  return in;
}

inline KInst st(int arg, Expr index, int value, ScalarType t) {
  KInst in;
  in.kind = KOp::Store;
  in.arg = arg;
  in.index = index;
  in.operands = {value};
  in.dtype = t;
  return in;
}

inline KInst cst(int id, Scalar v, ScalarType t) {
  KInst in;
  in.kind = KOp::Const;
  in.id = id;
  in.value = v;
  in.dtype = t;
  return in;
}

inline KInst idx(int id, Expr e, ScalarType t = kLong) {
  KInst in;
  in.kind = KOp::Index;
  in.id = id;
  in.index = e;
  in.dtype = t;
  return in;
}

inline KInst op(int id, ir::OpKind kind, std::vector<int> operands, ScalarType t, ir::AttrList attrs = {}) {
  KInst in;
  in.kind = KOp::Compute;
  in.id = id;
  in.op = kind;
  in.operands = std::move(operands);
  in.dtype = t;
  in.attrs = std::move(attrs);
  return in;
}

inline ir::AttrList div_mode(const char* mode) {
  if (!mode) return ir::AttrList({ir::AttrValue(std::monostate{})});
  return ir::AttrList({ir::AttrValue(std::string(mode))});
}
inline ir::AttrList to_dtype(ScalarType t) { return ir::AttrList({ir::AttrValue(t)}); }

inline KStage loop(std::vector<Expr> extents, std::vector<KInst> body) {
  KStage s;
  s.kind = ir::StageKind::Loop;
  s.extents = std::move(extents);
  s.body = std::move(body);
  return s;
}

inline KStage reduce(ir::ReductionOp rop, std::vector<Expr> extents, std::vector<KInst> body, int yield, int result,
                     ScalarType acc) {
  KStage s;
  s.kind = ir::StageKind::Reduce;
  s.reduce_op = rop;
  s.extents = std::move(extents);
  s.body = std::move(body);
  s.yield = yield;
  s.result = result;
  s.acc_dtype = acc;
  return s;
}

inline ir::KernelArg in_arg(const char* name, ScalarType t) { return ir::KernelArg{name, t, false}; }
inline ir::KernelArg out_arg(const char* name, ScalarType t) { return ir::KernelArg{name, t, true}; }

// Compiles the emitted source to PTX for compute_90 and checks that NVRTC did not warn and that
// the kernel's entry is there.
inline ::testing::AssertionResult compile_ptx(const ir::Kernel& k, const std::string& source) {
  const cuda::NvrtcResult r = cuda::compile_to_ptx(source, "compute_90");
  if (!r.ok)
    return ::testing::AssertionFailure() << "NVRTC failed for " << k.name << ":\n" << r.log << "\n---- source ----\n"
                                         << r.source;
  if (r.log.find("warning") != std::string::npos)
    return ::testing::AssertionFailure() << "NVRTC warns for " << k.name << ":\n" << r.log;
  if (r.ptx.find(".entry " + k.name) == std::string::npos)
    return ::testing::AssertionFailure() << "PTX has no .entry " << k.name << ":\n" << r.ptx;
  return ::testing::AssertionSuccess();
}

// The cubin of `source` for compute capability `sm`: an ELF image naming the kernel.
inline ::testing::AssertionResult compile_cubin(const ir::Kernel& k, const std::string& source, int sm) {
  const cuda::NvrtcResult r = cuda::compile_for_device(source, sm);
  if (!r.ok)
    return ::testing::AssertionFailure() << "NVRTC failed for " << k.name << " on sm_" << sm << ":\n" << r.log
                                         << "\n---- source ----\n" << r.source;
  if (r.arch != "sm_" + std::to_string(sm))
    return ::testing::AssertionFailure() << k.name << ": compiled for " << r.arch << ", not sm_" << sm << ":\n" << r.log;
  if (r.log.find("warning") != std::string::npos)
    return ::testing::AssertionFailure() << "NVRTC warns for " << k.name << " on sm_" << sm << ":\n" << r.log;
  if (r.cubin.rfind("\x7f" "ELF", 0) != 0) return ::testing::AssertionFailure() << k.name << ": the cubin is not an ELF image";
  if (r.cubin.find(k.name) == std::string::npos)
    return ::testing::AssertionFailure() << k.name << ": the cubin does not name the kernel";
  return ::testing::AssertionSuccess();
}

// The cubin of a module of `kernels` (cuda::emit_program_module, as the cuda backend compiles
// a plan) for compute capability `sm`: an ELF image defining k0, k1, ...
inline ::testing::AssertionResult compile_module_cubin(size_t kernels, const std::string& source, int sm) {
  const cuda::NvrtcResult r = cuda::compile_for_device(source, sm, {"--split-compile=0"});
  if (!r.ok)
    return ::testing::AssertionFailure() << "NVRTC failed for the module on sm_" << sm << ":\n" << r.log
                                         << "\n---- source ----\n" << r.source;
  if (r.arch != "sm_" + std::to_string(sm))
    return ::testing::AssertionFailure() << "compiled for " << r.arch << ", not sm_" << sm << ":\n" << r.log;
  if (r.log.find("warning") != std::string::npos)
    return ::testing::AssertionFailure() << "NVRTC warns on sm_" << sm << ":\n" << r.log;
  if (r.cubin.rfind("\x7f" "ELF", 0) != 0) return ::testing::AssertionFailure() << "the cubin is not an ELF image";
  for (size_t i = 0; i < kernels; ++i)
    if (r.cubin.find(std::string(1, '\0') + cuda::module_entry(i) + std::string(1, '\0')) == std::string::npos)
      return ::testing::AssertionFailure() << "the cubin does not define " << cuda::module_entry(i);
  return ::testing::AssertionSuccess();
}

// The architectures kiln's CI compiles every kernel for: A100 and H100.
inline constexpr int kCubinArchs[] = {80, 90};

// The CUDA source of k after its launch schedule (passes/schedule_launch.cpp, as the cuda
// backend runs it before emitting), and that schedule's launch kind.
inline std::string emit_scheduled(ir::Kernel k) {
  passes::schedule_launch(k, passes::ScheduleTarget{});
  return cuda::emit_cuda(k);
}
inline ir::LaunchKind launch_kind_of(ir::Kernel k) {
  passes::schedule_launch(k, passes::ScheduleTarget{});
  return k.schedule.launch.kind;
}

}  // namespace kiln::test::cudak
