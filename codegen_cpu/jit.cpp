// kiln/codegen_cpu/jit.cpp — the process-wide JIT: optimize, emit, link.
//
// The host is detected once with JITTargetMachineBuilder::detectHost() (CPU name and
// features, CodeGenOptLevel::Aggressive), with the relocation model and code model pinned on
// the builder (PIC, small: the object code is the same bytes whatever process emits it).
// optimize runs the new-pass-manager O3 pipeline with LoopInterleaving off (TOOLCHAIN.md:
// 16–30% faster on streaming loops) and loop/SLP vectorization on; emit_object runs code
// generation. Each holds a target machine from a pool for the call (several threads compile
// at once; a machine is reused, not rebuilt). Assembly is printed from a clone when asked
// (code generation rewrites IR). Linking is kiln's own object loader
// (codegen_cpu/object_loader.h), which needs no LLVM: each module's objects map into a region
// of their own. The compiler is set up on first use (Jit::Impl), so that a process whose
// kernels all come from the compile cache never starts it.
#include "codegen_cpu/jit.h"


#include "base/error.h"
#include "base/timing.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/SubtargetFeature.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
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


}  // namespace

// Two parts, each set up on first use: the host (CPU name and features, for cache keys:
// 0.2 ms) and the compiler (LLVM's target registered, the data layout: what optimize and
// emit_object need, 0.5 ms). A process whose kernels all come from the cache never sets up
// the compiler.
struct Jit::Impl {
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple()};
  std::string triple;

  std::once_flag compiler_once;
  std::atomic<bool> compiler_started{false};
  std::mutex tm_mu;  // jtmb.createTargetMachine
  std::string layout;


  // Target machines are reused: a new one costs 2–3 ms of a small kernel's compile (its
  // subtarget and lowering tables are built on first use). One compilation holds one at a
  // time, so several threads compile at once with a machine each.
  // Pooled by CPU name ("" is the host).
  std::mutex pool_mu;
  std::map<std::string, std::vector<std::unique_ptr<llvm::TargetMachine>>> pool;

  class HeldTM {
   public:
    HeldTM(Impl* impl, std::string cpu, std::unique_ptr<llvm::TargetMachine> tm)
        : impl_(impl), cpu_(std::move(cpu)), tm_(std::move(tm)) {}
    HeldTM(HeldTM&&) = default;
    HeldTM& operator=(HeldTM&&) = delete;
    ~HeldTM() {
      if (!tm_) return;
      std::lock_guard<std::mutex> lock(impl_->pool_mu);
      impl_->pool[cpu_].push_back(std::move(tm_));
    }
    llvm::TargetMachine* operator->() const { return tm_.get(); }
    llvm::TargetMachine* get() const { return tm_.get(); }

   private:
    Impl* impl_;
    std::string cpu_;
    std::unique_ptr<llvm::TargetMachine> tm_;
  };

  HeldTM hold_tm(const std::string& cpu) {
    start_compiler();
    std::unique_ptr<llvm::TargetMachine> tm;
    {
      std::lock_guard<std::mutex> lock(pool_mu);
      if (auto it = pool.find(cpu); it != pool.end() && !it->second.empty()) {
        tm = std::move(it->second.back());
        it->second.pop_back();
      }
    }
    return HeldTM(this, cpu, tm ? std::move(tm) : create_tm(cpu));
  }

  // The host's machine, or one for the named CPU with that CPU's features only.
  std::unique_ptr<llvm::TargetMachine> create_tm(const std::string& cpu = {}) {
    std::lock_guard<std::mutex> lock(tm_mu);
    if (cpu.empty()) return unwrap(jtmb.createTargetMachine(), "creating the target machine");
    llvm::orc::JITTargetMachineBuilder b = jtmb;
    b.setCPU(cpu);
    b.getFeatures() = llvm::SubtargetFeatures();
    return unwrap(b.createTargetMachine(), "creating the target machine for " + cpu);
  }

  void start_compiler() {
    std::call_once(compiler_once, [&] {
      llvm::InitializeNativeTarget();
      llvm::InitializeNativeTargetAsmPrinter();
      llvm::InitializeNativeTargetAsmParser();
      layout = create_tm()->createDataLayout().getStringRepresentation();
      compiler_started = true;
    });
  }

};

Jit::Jit() : impl_(std::make_unique<Impl>()) {
  llvm::orc::JITTargetMachineBuilder jtmb = unwrap(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
  if (!jtmb.getTargetTriple().isOSBinFormatELF())
    internal_fail("jit: kiln's CPU backend links ELF objects; this host's triple is {}", jtmb.getTargetTriple().str());
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  // PIC, small code model (kCodegenSettings): the object code is the same bytes whatever
  // process emits it, and kiln's loader links it anywhere in the address space.
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  jtmb.setCodeModel(llvm::CodeModel::Small);
  impl_->jtmb = jtmb;
  impl_->triple = jtmb.getTargetTriple().str();
}

Jit::~Jit() = default;

Jit& Jit::instance() {
  static Jit* const jit = new Jit();  // never destroyed: LinkedCode owned by statics releases late
  return *jit;
}



const std::string& Jit::data_layout() const {
  impl_->start_compiler();
  return impl_->layout;
}
bool Jit::compiler_started() const { return impl_->compiler_started; }

const std::string& Jit::target_triple() const { return impl_->triple; }

void Jit::optimize(llvm::Module& m, bool want_ir, JitArtifacts* artifacts, JitTimings* timings, const std::string& llvm_cpu) {
  if (m.getDataLayout().isDefault()) m.setDataLayout(data_layout());
  if (m.getTargetTriple().empty()) m.setTargetTriple(impl_->triple);
  {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    if (llvm::verifyModule(m, &os)) internal_fail("jit: module {} does not verify: {}", m.getModuleIdentifier(), os.str());
  }
  // A pooled target machine and the module's own context: several threads optimize at once.
  const auto t0 = std::chrono::steady_clock::now();
  Impl::HeldTM tm = impl_->hold_tm(llvm_cpu);
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

std::string Jit::emit_object(llvm::Module& m, bool want_asm, JitArtifacts* artifacts, const std::string& llvm_cpu) {
  Impl::HeldTM tm = impl_->hold_tm(llvm_cpu);
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

std::shared_ptr<const LinkedCode> Jit::add_module(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> ctx,
                                                  const std::vector<std::string>& names, bool want_ir, bool want_asm,
                                                  JitArtifacts* artifacts, JitTimings* timings) {
  KILN_INTERNAL_ASSERT(m != nullptr && ctx != nullptr);
  KILN_INTERNAL_ASSERT(&m->getContext() == ctx.get());
  optimize(*m, want_ir, artifacts, timings);
  const auto t1 = std::chrono::steady_clock::now();
  const std::string object = emit_object(*m, want_asm, artifacts);
  std::string error;
  std::shared_ptr<const LinkedCode> out = link_objects({object}, names, &error);
  if (!out) internal_fail("jit: linking module {}: {}", m->getModuleIdentifier(), error);
  if (timings) timings->codegen_ms = ms_since(t1);
  return out;
}

}  // namespace kiln::cpu
