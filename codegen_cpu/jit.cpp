// kiln/codegen_cpu/jit.cpp — the process-wide ORC LLJIT session: optimize, link, look up.
//
// One LLJIT for the process, created on first use from JITTargetMachineBuilder::detectHost()
// (host CPU name and features, CodeGenOptLevel::Aggressive). glibc's libmvec.so.1 and libm
// are searched by the main JITDylib, so the vector math variants named by llvm_math.cpp
// resolve. add_module verifies the module, runs the new-pass-manager O3 pipeline with
// LoopInterleaving off (TOOLCHAIN.md: 16–30% faster on streaming loops) and loop/SLP
// vectorization on, optionally prints the optimized IR and the assembly (from a clone, since
// code generation rewrites IR), then adds the module to the main JITDylib and looks the
// requested names up (which compiles it). Optimization uses a per-call TargetMachine and the
// caller's own LLVMContext, so several threads optimize at once; adding and looking up go
// through ORC under one mutex (LLJIT's default compiler shares a TargetMachine).
#include "codegen_cpu/jit.h"

#include "base/error.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <chrono>
#include <mutex>

namespace kiln::cpu {

namespace {

std::string to_string(llvm::Error err) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << err;
  return s;
}

template <typename T> T unwrap(llvm::Expected<T> v, std::string_view what) {
  if (!v) internal_fail("jit: {}: {}", what, to_string(v.takeError()));
  return std::move(*v);
}

void check(llvm::Error err, std::string_view what) {
  if (err) internal_fail("jit: {}: {}", what, to_string(std::move(err)));
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

struct Jit::Impl {
  std::mutex mu;          // jtmb
  std::mutex codegen_mu;  // addIRModule + lookup
  std::optional<llvm::orc::JITTargetMachineBuilder> jtmb;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::string layout, triple;

  std::unique_ptr<llvm::TargetMachine> make_tm() {
    std::lock_guard<std::mutex> lock(mu);
    return unwrap(jtmb->createTargetMachine(), "creating the target machine");
  }
};

Jit::Jit() : impl_(std::make_unique<Impl>()) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::InitializeNativeTargetAsmParser();
  llvm::orc::JITTargetMachineBuilder jtmb = unwrap(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  impl_->jtmb = jtmb;
  std::unique_ptr<llvm::TargetMachine> tm = unwrap(jtmb.createTargetMachine(), "creating the target machine");
  impl_->layout = tm->createDataLayout().getStringRepresentation();
  impl_->triple = tm->getTargetTriple().str();
  impl_->jit = unwrap(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create(), "creating the LLJIT");
  const char prefix = impl_->jit->getDataLayout().getGlobalPrefix();
  llvm::orc::JITDylib& main = impl_->jit->getMainJITDylib();
  for (const char* lib : {"libmvec.so.1", "libm.so.6"}) {
    auto gen = llvm::orc::DynamicLibrarySearchGenerator::Load(lib, prefix);
    if (!gen) internal_fail("jit: loading {}: {}", lib, to_string(gen.takeError()));
    main.addGenerator(std::move(*gen));
  }
}

Jit::~Jit() = default;

Jit& Jit::instance() {
  static Jit jit;
  return jit;
}

const std::string& Jit::data_layout() const { return impl_->layout; }
const std::string& Jit::target_triple() const { return impl_->triple; }

std::vector<void*> Jit::add_module(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> ctx,
                                   const std::vector<std::string>& names, bool want_ir, bool want_asm,
                                   JitArtifacts* artifacts, JitTimings* timings) {
  KILN_INTERNAL_ASSERT(m != nullptr && ctx != nullptr);
  KILN_INTERNAL_ASSERT(&m->getContext() == ctx.get());
  if (m->getDataLayout().isDefault()) m->setDataLayout(impl_->layout);
  if (m->getTargetTriple().empty()) m->setTargetTriple(impl_->triple);
  {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    if (llvm::verifyModule(*m, &os)) internal_fail("jit: module {} does not verify: {}", m->getModuleIdentifier(), os.str());
  }

  // ---- optimize (per-call target machine; the module's own context) ----
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<llvm::TargetMachine> tm = impl_->make_tm();
  {
    llvm::PipelineTuningOptions pto;
    pto.LoopInterleaving = false;
    pto.LoopVectorization = true;
    pto.SLPVectorization = true;
    pto.LoopUnrolling = true;
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm.get(), pto);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(*m, mam);
  }
  if (timings) timings->optimize_ms = ms_since(t0);
  if (artifacts && want_ir) {
    artifacts->llvm_ir.clear();
    llvm::raw_string_ostream os(artifacts->llvm_ir);
    m->print(os, nullptr);
  }

  auto t1 = std::chrono::steady_clock::now();
  if (artifacts && want_asm) {  // codegen rewrites IR (CodeGenPrepare): print from a clone
    std::unique_ptr<llvm::Module> clone = llvm::CloneModule(*m);
    llvm::SmallString<0> buf;
    llvm::raw_svector_ostream os(buf);
    llvm::legacy::PassManager pm;
    if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
      internal_fail("jit: the target cannot emit assembly");
    pm.run(*clone);
    artifacts->assembly = std::string(buf.str());
  }

  // ---- link and look up (ORC compiles on lookup) ----
  // LLJIT's default compiler shares one TargetMachine, which is not thread safe: code
  // generation is serialized (concurrent lookups corrupted objects in test_cpu_jit).
  std::lock_guard<std::mutex> lock(impl_->codegen_mu);
  llvm::orc::LLJIT& jit = *impl_->jit;
  check(jit.addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx))), "adding the module");
  std::vector<void*> out;
  out.reserve(names.size());
  for (const std::string& name : names) {
    llvm::orc::ExecutorAddr addr = unwrap(jit.lookup(name), "looking up " + name);
    out.push_back(addr.toPtr<void*>());
  }
  if (timings) timings->codegen_ms = ms_since(t1);
  return out;
}

}  // namespace kiln::cpu
