// kiln/codegen_cpu/jit.cpp — the process-wide JIT: optimize, emit, link.
//
// The host is detected once with JITTargetMachineBuilder::detectHost() (CPU name and
// features, CodeGenOptLevel::Aggressive), with the relocation model and code model LLJIT
// would use for JITLink (PIC, small) pinned on the builder. Linking is ORC's
// ObjectLinkingLayer on an in-process ExecutionSession (LLJIT without its IR layers, which
// kiln does not use). glibc's libm and libmvec.so.1 are searched by a "kiln_libraries"
// JITDylib, which every module's own JITDylib links against, so the vector math variants
// named by llvm_math.cpp resolve; libmvec is opened on the first symbol that needs it.
// optimize runs the new-pass-manager O3 pipeline with LoopInterleaving off (TOOLCHAIN.md:
// 16–30% faster on streaming loops) and loop/SLP vectorization on; emit_object runs code
// generation. Each holds a target machine from a pool for the call (several threads compile
// at once; a machine is reused, not rebuilt). Assembly is printed from a clone when asked
// (code generation rewrites IR); link_object adds the object to a fresh JITDylib and looks the
// names up under one mutex. Parts are set up on first use (Jit::Impl), so that a process
// whose kernels all come from the compile cache starts in a fraction of a millisecond.
#include "codegen_cpu/jit.h"

#include "codegen_cpu/perf_map.h"

#include "base/error.h"
#include "base/timing.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/EPCEHFrameRegistrar.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutorProcessControl.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
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


// Generates definitions from a shared library, opened on the first lookup that reaches it:
// libmvec is opened only by a process whose kernels call vector math.
class LazyLibrarySearch : public llvm::orc::DefinitionGenerator {
 public:
  explicit LazyLibrarySearch(const char* library) : library_(library) {}

  llvm::Error tryToGenerate(llvm::orc::LookupState& ls, llvm::orc::LookupKind kind, llvm::orc::JITDylib& jd,
                            llvm::orc::JITDylibLookupFlags flags, const llvm::orc::SymbolLookupSet& symbols) override {
    std::call_once(once_, [&] {
      // ELF hosts only (checked when the host is detected): symbols have no global prefix.
      auto gen = llvm::orc::DynamicLibrarySearchGenerator::Load(library_, '\0');
      if (gen)
        generator_ = std::move(*gen);
      else
        error_ = fmt::format("loading {}: {}", library_, to_string(gen.takeError()));
    });
    if (!generator_) return llvm::make_error<llvm::StringError>(error_, llvm::inconvertibleErrorCode());
    return generator_->tryToGenerate(ls, kind, jd, flags, symbols);
  }

 private:
  const char* library_;
  std::once_flag once_;
  std::unique_ptr<llvm::orc::DefinitionGenerator> generator_;
  std::string error_;
};

}  // namespace

// Three parts, each set up on first use: the host (CPU name and features, for cache keys:
// 0.2 ms), the compiler (LLVM's target registered, the data layout: what optimize and
// emit_object need, 0.5 ms) and the linker (an ORC session and JITLink object layer, what
// linking cached object code needs: 0.1 ms). A process whose kernels all come from the
// cache never sets up the compiler.
struct Jit::Impl {
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple()};
  std::string triple, target_key;

  std::once_flag compiler_once;
  std::atomic<bool> compiler_started{false};
  std::mutex tm_mu;  // jtmb.createTargetMachine
  std::string layout;

  std::once_flag linker_once;
  std::mutex link_mu;  // JITDylib creation, addObjectFile + lookup
  std::unique_ptr<llvm::orc::ExecutionSession> es;
  std::unique_ptr<llvm::orc::ObjectLinkingLayer> objects;
  llvm::orc::JITDylib* libraries = nullptr;  // libm, then libmvec: every module links against it
  PerfMapRecorder* perf_map = nullptr;        // owned by `objects`
  std::atomic<uint64_t> dylibs{0};
  std::atomic<int64_t> live{0};  // linked modules not released yet

  // Target machines are reused: a new one costs 2–3 ms of a small kernel's compile (its
  // subtarget and lowering tables are built on first use). One compilation holds one at a
  // time, so several threads compile at once with a machine each.
  std::mutex pool_mu;
  std::vector<std::unique_ptr<llvm::TargetMachine>> pool;

  class HeldTM {
   public:
    HeldTM(Impl* impl, std::unique_ptr<llvm::TargetMachine> tm) : impl_(impl), tm_(std::move(tm)) {}
    HeldTM(HeldTM&&) = default;
    HeldTM& operator=(HeldTM&&) = delete;
    ~HeldTM() {
      if (!tm_) return;
      std::lock_guard<std::mutex> lock(impl_->pool_mu);
      impl_->pool.push_back(std::move(tm_));
    }
    llvm::TargetMachine* operator->() const { return tm_.get(); }
    llvm::TargetMachine* get() const { return tm_.get(); }

   private:
    Impl* impl_;
    std::unique_ptr<llvm::TargetMachine> tm_;
  };

  HeldTM hold_tm() {
    start_compiler();
    std::unique_ptr<llvm::TargetMachine> tm;
    {
      std::lock_guard<std::mutex> lock(pool_mu);
      if (!pool.empty()) {
        tm = std::move(pool.back());
        pool.pop_back();
      }
    }
    return HeldTM(this, tm ? std::move(tm) : create_tm());
  }

  std::unique_ptr<llvm::TargetMachine> create_tm() {
    std::lock_guard<std::mutex> lock(tm_mu);
    return unwrap(jtmb.createTargetMachine(), "creating the target machine");
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

  // What LLJIT builds for x86-64 ELF, less the IR layers kiln does not use: an execution
  // session in this process, a JITLink object layer with eh-frame registration.
  void start_linker() {
    std::call_once(linker_once, [&] {
      auto epc = unwrap(llvm::orc::SelfExecutorProcessControl::Create(), "creating the executor");
      es = std::make_unique<llvm::orc::ExecutionSession>(std::move(epc));
      objects = std::make_unique<llvm::orc::ObjectLinkingLayer>(*es);
      objects->addPlugin(std::make_unique<llvm::orc::EHFrameRegistrationPlugin>(
          *es, unwrap(llvm::orc::EPCEHFrameRegistrar::Create(*es), "creating the eh-frame registrar")));
      auto recorder = std::make_unique<PerfMapRecorder>();
      perf_map = recorder.get();
      objects->addPlugin(std::move(recorder));
      libraries = &es->createBareJITDylib("kiln_libraries");
      for (const char* lib : {"libm.so.6", "libmvec.so.1"}) libraries->addGenerator(std::make_unique<LazyLibrarySearch>(lib));
    });
  }

  ~Impl() {
    if (es)
      if (llvm::Error err = es->endSession()) llvm::consumeError(std::move(err));
  }
};

Jit::Jit() : impl_(std::make_unique<Impl>()) {
  llvm::orc::JITTargetMachineBuilder jtmb = unwrap(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
  if (!jtmb.getTargetTriple().isOSBinFormatELF())
    internal_fail("jit: kiln's CPU backend links ELF objects; this host's triple is {}", jtmb.getTargetTriple().str());
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  // What LLJIT sets for JITLink on x86-64 (PIC, small code model): the object code is the
  // same bytes whatever process emits it.
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  jtmb.setCodeModel(llvm::CodeModel::Small);
  impl_->jtmb = jtmb;
  impl_->triple = jtmb.getTargetTriple().str();
  std::vector<std::string> features = jtmb.getFeatures().getFeatures();
  std::sort(features.begin(), features.end());
  impl_->target_key = "llvm " LLVM_VERSION_STRING "; triple " + impl_->triple + "; cpu " + jtmb.getCPU() +
                      "; O3 no-interleave pic small; features";
  for (const std::string& f : features) impl_->target_key += " " + f;
}

Jit::~Jit() = default;

Jit& Jit::instance() {
  static Jit* const jit = new Jit();  // never destroyed: LinkedCode owned by statics releases late
  return *jit;
}

LinkedCode::~LinkedCode() { Jit::instance().release(dylib_); }

void Jit::release(void* dylib) {
  std::lock_guard<std::mutex> lock(impl_->link_mu);
  if (llvm::Error e = impl_->es->removeJITDylib(*static_cast<llvm::orc::JITDylib*>(dylib)))
    llvm::consumeError(std::move(e));
  impl_->live.fetch_sub(1);
}

int64_t Jit::live_modules() const { return impl_->live.load(); }

const std::string& Jit::data_layout() const {
  impl_->start_compiler();
  return impl_->layout;
}
bool Jit::compiler_started() const { return impl_->compiler_started; }

const std::string& Jit::target_triple() const { return impl_->triple; }
const std::string& Jit::target_key() const { return impl_->target_key; }

void Jit::optimize(llvm::Module& m, bool want_ir, JitArtifacts* artifacts, JitTimings* timings) {
  if (m.getDataLayout().isDefault()) m.setDataLayout(data_layout());
  if (m.getTargetTriple().empty()) m.setTargetTriple(impl_->triple);
  {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    if (llvm::verifyModule(m, &os)) internal_fail("jit: module {} does not verify: {}", m.getModuleIdentifier(), os.str());
  }
  // A pooled target machine and the module's own context: several threads optimize at once.
  const auto t0 = std::chrono::steady_clock::now();
  Impl::HeldTM tm = impl_->hold_tm();
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
  Impl::HeldTM tm = impl_->hold_tm();
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

std::shared_ptr<const LinkedCode> Jit::link_object(std::string_view object, const std::vector<std::string>& names,
                                                   std::string* error, const std::vector<std::string>* perf_labels) {
  return link_objects({object}, names, error, perf_labels);
}

std::shared_ptr<const LinkedCode> Jit::link_objects(const std::vector<std::string_view>& objects,
                                                    const std::vector<std::string>& names, std::string* error,
                                                    const std::vector<std::string>* perf_labels) {
  impl_->start_linker();
  std::lock_guard<std::mutex> lock(impl_->link_mu);
  llvm::orc::ExecutionSession& es = *impl_->es;
  llvm::orc::JITDylib& jd = es.createBareJITDylib(fmt::format("kiln_module_{}", impl_->dylibs.fetch_add(1)));
  auto fail_with = [&](llvm::Error err) {
    if (error) *error = to_string(std::move(err));
    if (llvm::Error e = es.removeJITDylib(jd)) llvm::consumeError(std::move(e));
    return std::shared_ptr<const LinkedCode>();
  };
  jd.addToLinkOrder(*impl_->libraries);  // libm, libmvec
  for (std::string_view object : objects) {
    // A copy: the JIT keeps its own aligned buffer (the ELF reader rejects misaligned ones).
    std::unique_ptr<llvm::MemoryBuffer> buf =
        llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()), "kiln_object");
    if (llvm::Error err = impl_->objects->add(jd, std::move(buf))) return fail_with(std::move(err));
  }
  llvm::orc::SymbolLookupSet wanted;
  for (const std::string& name : names) wanted.add(es.intern(name));  // ELF: names are not mangled
  impl_->perf_map->set_recording(perf_labels != nullptr);  // links run here, under link_mu
  llvm::Expected<llvm::orc::SymbolMap> found = es.lookup(llvm::orc::makeJITDylibSearchOrder(&jd), std::move(wanted));
  std::vector<LinkedFunction> linked = impl_->perf_map->take();  // the functions of these objects
  if (!found) return fail_with(found.takeError());  // the lookup links the object
  if (perf_labels) append_perf_map(linked, names, *perf_labels);
  std::vector<void*> out;
  out.reserve(names.size());
  for (const std::string& name : names) out.push_back(found->at(es.intern(name)).getAddress().toPtr<void*>());
  impl_->live.fetch_add(1);
  return std::shared_ptr<const LinkedCode>(new LinkedCode(&jd, std::move(out)));
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
  std::shared_ptr<const LinkedCode> out = link_object(object, names, &error);
  if (!out) internal_fail("jit: linking module {}: {}", m->getModuleIdentifier(), error);
  if (timings) timings->codegen_ms = ms_since(t1);
  return out;
}

}  // namespace kiln::cpu
