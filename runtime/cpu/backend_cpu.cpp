// kiln/runtime/cpu/backend_cpu.cpp — the "cpu" backend: fused kernels through LLVM, run by a Program.
//
// level Prim. lower(): fusion groups (passes/fuse.h), kernel building into an ExecPlan
// (passes/lower.h), then memory planning. compile(): the plan's kernels in one LLVM module
// (codegen_cpu), its object code from this process, the persistent compile cache
// (runtime/cache/compile_cache.h) or LLVM, in that order; the
// parameters bound to their typed sources, extern steps bound to their functions (a
// registered lowering, a custom op's eager implementation, or kiln's library kernels:
// runtime/cpu/extern_kernels.h), all in an rt::Program.
#include "base/error.h"
#include "base/host_cpu.h"
#include "codegen_cpu/kernel_codegen.h"
#include "passes/lower.h"
#include "passes/lower_index.h"
#include "passes/matmul_epilogues.h"
#include "passes/row_domain.h"
#include "runtime/backend.h"
#include "runtime/cache/compile_cache.h"
#include "runtime/config.h"
#include "runtime/cpu/extern_kernels.h"
#include "runtime/cpu/parallel_gemm.h"
#include "runtime/pipeline.h"
#include "runtime/extend.h"
#include "runtime/log.h"
#include "runtime/program.h"
#include "runtime/thread_pool.h"

#include <fmt/format.h>

#include <unistd.h>

namespace kiln::rt {

namespace {

// The host's L1 data cache (32 KiB where the C library cannot say).
int64_t host_l1d_bytes() {
  static const int64_t bytes = [] {
    const long v = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    return v >= 4096 ? static_cast<int64_t>(v) : int64_t{32} << 10;
  }();
  return bytes;
}

const std::string kCpu = "cpu";

// Owns its kernels' linked code: when the last executable running a module is destroyed (a
// compiled function dropped, an entry or eager kernel evicted), the code is unmapped.
class CpuExecutable final : public Executable {
 public:
  CpuExecutable(std::unique_ptr<Program> p, std::shared_ptr<const cpu::LinkedCode> code)
      : code_(std::move(code)), program_(std::move(p)) {}
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const override { return program_->run(inputs); }
  int64_t kernels() const override { return static_cast<int64_t>(program_->num_kernels()); }

 private:
  std::shared_ptr<const cpu::LinkedCode> code_;  // declared first: outlives the program
  std::unique_ptr<Program> program_;
};

// The most inputs of a cat that the cpu backend copies with generated kernels.
constexpr size_t kMaxConcatKernelInputs = 256;

// The library a floating product runs on (runtime/cpu/parallel_gemm.h gemm_library): chosen by
// its dtype and, when its sizes are known, by its size; "gemm by shape" when they are symbolic
// (gemm() makes the same choice at run time).
std::string product_library(const ir::Node& n) {
  const ScalarType dt = n.output()->type().dtype;
  const size_t first = n.op() == ir::OpKind::addmm_activation ? 1 : 0;  // after the bias
  const auto& a = n.input(first)->type().sizes;
  const auto& b = n.input(first + 1)->type().sizes;
  if (dt == ScalarType::Double || a.size() < 2 || b.size() < 2) return gemm_library(dt, INT64_MAX, 1, 1);
  const std::optional<int64_t> m = a[a.size() - 2].maybe_const(), k = a.back().maybe_const(), cols = b.back().maybe_const();
  if (!m || !k || !cols) return "gemm by shape";
  return gemm_library(dt, *m, *cols, *k);
}

class CpuBackend final : public Backend {
 public:
  const std::string& name() const override { return kCpu; }
  ir::OpLevel level() const override { return ir::OpLevel::Prim; }
  // A user's lowering, or a Core op kiln runs whole as a library call (trait Extern).
  bool lowers(const ir::Node& n) const override {
    const Lowering* l = find_lowering(kCpu, n.op());
    if (l && l->call) return true;
    return n.info().level != ir::OpLevel::Prim && n.info().has(ir::traits::Extern) && builtin_extern(n.op());
  }
  bool runs_extern_lowerings() const override { return true; }

  void lower(Compilation& c) const override {
    passes::LowerOptions lo;
    lo.split_by_columns = true;
    // 64 elements (a few cache lines) of a scatter's or a scan's row per grid point
    // (bench/README.md: an embedding backward walked by columns read every row's line once per
    // element; a cumsum along dim 0 of [4096, 1024], 29 ms by columns).
    lo.line_tile = 64;
    // Activations between oneDNN convolutions stay NHWC, the layout its kernels read and write
    // (passes/channels_last.cpp).
    lo.channels_last = true;
    // A user's lowering first, then kiln's library kernels (runtime/cpu/extern_kernels.h): every
    // prim no generated kernel computes is a library call, so nothing runs on the interpreter.
    lo.extern_lowering = [use = c.opts.use_lowerings](const ir::Node& n) -> std::string {
      if (const Lowering* l = use ? find_lowering(kCpu, n.op()) : nullptr; l && l->call)
        return fmt::format("lowering {}", l->name);
      // A cat is computed in kernels (inline, or a Concat group's copy kernels) up to
      // kMaxConcatKernelInputs inputs; past that LLVM's time per input's copy loop (about a
      // millisecond) dominates, and the library copies it.
      if (n.op() == ir::OpKind::cat && n.inputs().size() <= kMaxConcatKernelInputs) return "";
      if (passes::indexed_read_inlinable(&n)) return "";  // gather, index_select: read inline
      if (passes::indexed_write_kernelable(&n)) return "";  // scatter, scatter_add, scatter_reduce: kernels
      if (n.info().family == ir::OpFamily::Random) return "";  // Philox draws computed inline (ir::KOp::Random)
      // Integer products, which BLAS has no type for: a generated kernel (a Matmul group).
      if (passes::matmul_kernelable(&n) && !is_floating_point(n.output()->type().dtype)) return "";
      // Floating products, and those folded with their bias and relu: the library gemm() runs
      // them on, by dtype (runtime/cpu/parallel_gemm.h).
      if (n.info().family == ir::OpFamily::Matmul || n.op() == ir::OpKind::addmm_activation) return product_library(n);
      return std::string(builtin_extern_name(n.op()));
    };
    // A product's bias and relu applied to each block of it as a thread finishes it (one library
    // call, no pointwise kernel after it; runtime/cpu/parallel_gemm.h GemmEpilogue).
    passes::MatmulEpilogues epilogues{.relu = true, .user_lowered = users_call_lowerings(c.opts.use_lowerings, kCpu)};
    c.stage("fold_matmul_epilogues", [&](ir::Graph& g) { return passes::fold_matmul_epilogues(g, epilogues); });
    passes::ScheduleTarget target;
    target.l1d_bytes = host_l1d_bytes();
    target.vector_bits = host_vector_bits();  // base/host_cpu.h: CPUID, no LLVM
    lower_to_kernels(c, std::move(lo), target,
                     {{"schedule_loops", [](ir::ExecPlan& p, const passes::ScheduleTarget& t) {
                         return passes::schedule_loops(p, t);
                       }}});
  }

  CompileStatus compile(Compilation& c) const override {
    cpu::CodegenOptions co;
    co.want_ir = co.want_asm = c.opts.want_code || !c.opts.dump_dir.empty();
    co.store = compile_cache();  // null under KILN_DISABLE_CACHE
    co.reuse_linked = !config().disable_cache;
    // LLVM's remarks and warnings never reach the user's terminal: KILN_LOG=kernels shows them.
    co.diagnostics = [](std::string_view msg) { KILN_LOG_IF(LogChannel::Kernels, "{}", msg); };
    if (config().perf_map) co.perf_label = fmt::format("kiln {}/", c.opts.name);
    // Several kernels compile as modules on the pool's threads at once.
    co.threads = static_cast<size_t>(num_threads());
    co.parallel = [](size_t n, const std::function<void(size_t)>& body) {
      parallel_for(static_cast<int64_t>(n), 1, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) body(static_cast<size_t>(i));
      });
    };
    cpu::CodegenResult code = cpu::compile_kernels(c.plan.kernels(), co);
    c.code_source = code.source;
    const bool compiled = code.source == CodeSource::Compiled;
    c.stages.push_back({"code_lookup", code.lookup_ms, true});
    c.stages.push_back({"llvm_build", code.build_ms, compiled});
    c.stages.push_back({"llvm_optimize", code.optimize_ms, compiled});
    c.stages.push_back({code.source == CodeSource::Compiled ? "machine_code" : "link_cached", code.codegen_ms, true});
    if (co.want_ir) {
      c.snapshot("llvm_ir", "ll", std::move(code.llvm_ir));
      c.snapshot("assembly", "s", std::move(code.assembly));
    }
    std::vector<cpu::KernelFn> fns;
    for (const cpu::CompiledKernel& k : code.kernels) fns.push_back(k.fn);
    std::vector<ParamSource> params = plan_param_sources(c, kCpu);
    std::vector<ExternKernelFn> externs = plan_step_fns(c, *this);
    KILN_LOG_IF(LogChannel::Kernels,
                "{}: {} kernels, code {} in {:.2f} ms (lookup {:.2f}, build {:.2f}, optimize {:.2f}, emit/link {:.2f})",
                c.opts.name, fns.size(), code_source_name(code.source),
                code.lookup_ms + code.build_ms + code.optimize_ms + code.codegen_ms, code.lookup_ms, code.build_ms,
                code.optimize_ms, code.codegen_ms);
    CompileStatus s;
    s.exe = std::make_unique<CpuExecutable>(
        std::make_unique<Program>(c.plan, std::move(fns), std::move(params), std::move(externs)), std::move(code.code));
    return s;
  }

  // kiln's library kernels (runtime/cpu/extern_kernels.h), on cpu tensors.
  LibraryKernel library_kernel(ir::OpKind op) const override {
    BuiltinExtern fn = builtin_extern(op);
    if (!fn) return {};
    return {builtin_extern_name(op),
            [fn, op](const std::vector<Tensor>& ins, const ir::AttrList& attrs, const std::vector<Tensor>& outs) {
              fn(op, ins, attrs, outs.back());
            }};
  }
};

}  // namespace

std::shared_ptr<const Backend> make_cpu_backend() { return std::make_shared<CpuBackend>(); }

}  // namespace kiln::rt
