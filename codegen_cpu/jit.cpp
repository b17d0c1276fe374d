// kiln/codegen_cpu/jit.cpp — the process-wide ORC LLJIT session: optimize, emit, link.
//
// One LLJIT for the process, created on first use from JITTargetMachineBuilder::detectHost()
// (host CPU name and features, CodeGenOptLevel::Aggressive), with the relocation model and
// code model the LLJIT itself uses (PIC, small) pinned on the builder, so that objects we
// emit are the ones ORC would have made. glibc's libmvec.so.1 and libm are searched by the
// main JITDylib, which every module's own JITDylib links against, so the vector math
// variants named by llvm_math.cpp resolve. optimize runs the new-pass-manager O3 pipeline
// with LoopInterleaving off (TOOLCHAIN.md: 16–30% faster on streaming loops) and loop/SLP
// vectorization on; emit_object runs code generation with a per-call TargetMachine (several
// threads generate code at once) and prints assembly from a clone when asked (code
// generation rewrites IR); link_object adds the object to a fresh JITDylib and looks the
// names up under one mutex.
#include "codegen_cpu/jit.h"

#include "base/error.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
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


double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

struct Jit::Impl {
  std::mutex mu;       // jtmb
  std::mutex link_mu;  // JITDylib creation, addObjectFile + lookup
  std::optional<llvm::orc::JITTargetMachineBuilder> jtmb;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::string layout, triple, target_key;
  std::atomic<uint64_t> dylibs{0};

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
  // What LLJIT sets on its own copy for JITLink on x86-64 (PIC, small code model), pinned
  // here so that emit_object produces the code the JIT links.
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  jtmb.setCodeModel(llvm::CodeModel::Small);
  impl_->jtmb = jtmb;
  std::vector<std::string> features = jtmb.getFeatures().getFeatures();
  std::sort(features.begin(), features.end());
  impl_->target_key = "llvm " LLVM_VERSION_STRING "; triple " + jtmb.getTargetTriple().str() + "; cpu " + jtmb.getCPU() +
                      "; O3 no-interleave pic small; features";
  for (const std::string& f : features) impl_->target_key += " " + f;
  // No platform: kernels have no static initializers, and without one a JITDylib per module
  // costs microseconds (and starting the JIT 0.1 ms less).
  impl_->jit = unwrap(llvm::orc::LLJITBuilder()
                          .setJITTargetMachineBuilder(jtmb)
                          .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
                          .create(),
                      "creating the LLJIT");
  impl_->layout = impl_->jit->getDataLayout().getStringRepresentation();
  impl_->triple = impl_->jit->getTargetTriple().str();
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
const std::string& Jit::target_key() const { return impl_->target_key; }

void Jit::optimize(llvm::Module& m, bool want_ir, JitArtifacts* artifacts, JitTimings* timings) {
  if (m.getDataLayout().isDefault()) m.setDataLayout(impl_->layout);
  if (m.getTargetTriple().empty()) m.setTargetTriple(impl_->triple);
  {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    if (llvm::verifyModule(m, &os)) internal_fail("jit: module {} does not verify: {}", m.getModuleIdentifier(), os.str());
  }
  // A per-call target machine and the module's own context: several threads optimize at once.
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<llvm::TargetMachine> tm = impl_->make_tm();
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
  mpm.run(m, mam);
  if (timings) timings->optimize_ms = ms_since(t0);
  if (artifacts && want_ir) {
    artifacts->llvm_ir.clear();
    llvm::raw_string_ostream os(artifacts->llvm_ir);
    m.print(os, nullptr);
  }
}

std::string Jit::emit_object(llvm::Module& m, bool want_asm, JitArtifacts* artifacts) {
  std::unique_ptr<llvm::TargetMachine> tm = impl_->make_tm();
  if (artifacts && want_asm) {  // code generation rewrites IR (CodeGenPrepare): print from a clone
    std::unique_ptr<llvm::Module> clone = llvm::CloneModule(m);
    llvm::SmallString<0> buf;
    llvm::raw_svector_ostream os(buf);
    llvm::legacy::PassManager pm;
    if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
      internal_fail("jit: the target cannot emit assembly");
    pm.run(*clone);
    artifacts->assembly = std::string(buf.str());
  }
  llvm::SmallString<0> obj;
  {
    llvm::raw_svector_ostream os(obj);
    llvm::legacy::PassManager pm;
    if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
      internal_fail("jit: the target cannot emit object code");
    pm.run(m);
  }
  return std::string(obj.str());
}

std::vector<void*> Jit::link_object(std::string_view object, const std::vector<std::string>& names, std::string* error) {
  std::lock_guard<std::mutex> lock(impl_->link_mu);
  llvm::orc::LLJIT& jit = *impl_->jit;
  auto fail_with = [&](llvm::orc::JITDylib& jd, llvm::Error err) {
    if (error) *error = to_string(std::move(err));
    if (llvm::Error e = jit.getExecutionSession().removeJITDylib(jd)) llvm::consumeError(std::move(e));
    return std::vector<void*>{};
  };
  llvm::Expected<llvm::orc::JITDylib&> made = jit.createJITDylib(fmt::format("kiln_module_{}", impl_->dylibs.fetch_add(1)));
  if (!made) internal_fail("jit: creating a JITDylib: {}", to_string(made.takeError()));
  llvm::orc::JITDylib& jd = *made;
  jd.addToLinkOrder(jit.getMainJITDylib());  // libmvec and libm
  // A copy: the JIT keeps its own aligned buffer (the ELF reader rejects misaligned ones).
  std::unique_ptr<llvm::MemoryBuffer> buf =
      llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()), "kiln_object");
  if (llvm::Error err = jit.addObjectFile(jd, std::move(buf))) return fail_with(jd, std::move(err));
  std::vector<void*> out;
  out.reserve(names.size());
  for (const std::string& name : names) {
    llvm::Expected<llvm::orc::ExecutorAddr> addr = jit.lookup(jd, name);  // links the object
    if (!addr) return fail_with(jd, addr.takeError());
    out.push_back(addr->toPtr<void*>());
  }
  return out;
}

std::vector<void*> Jit::add_module(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> ctx,
                                   const std::vector<std::string>& names, bool want_ir, bool want_asm,
                                   JitArtifacts* artifacts, JitTimings* timings) {
  KILN_INTERNAL_ASSERT(m != nullptr && ctx != nullptr);
  KILN_INTERNAL_ASSERT(&m->getContext() == ctx.get());
  optimize(*m, want_ir, artifacts, timings);
  const auto t1 = std::chrono::steady_clock::now();
  const std::string object = emit_object(*m, want_asm, artifacts);
  std::string error;
  std::vector<void*> out = link_object(object, names, &error);
  if (out.empty() && !names.empty()) internal_fail("jit: linking module {}: {}", m->getModuleIdentifier(), error);
  if (timings) timings->codegen_ms = ms_since(t1);
  return out;
}

}  // namespace kiln::cpu
