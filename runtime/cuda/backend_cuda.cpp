// kiln/runtime/cuda/backend_cuda.cpp — the "cuda" backend: the cpu backend's fused kernels printed as CUDA C, NVRTC to cubin, launched by a Program.
//
// level Prim. lower(): the same passes as the cpu backend (fusion groups, kernel building,
// memory planning), so both backends run the same ir::Kernels. compile(): the plan's kernels
// printed by codegen_cuda as one module, its cubin for the device's architecture taken from
// this process, the persistent compile cache or NVRTC (one run, optimized on every core),
// loaded once per device (modules are cached by key and device), all in a device rt::Program
// whose launcher follows
// each kernel's launch schedule (passes/schedule_launch.cpp, run in lower() with the device's
// multiprocessor count). mm and bmm in f32, f16 and
// bf16 run through cuBLASLt (exact f32 unless KILN_ALLOW_TF32), and so does a product with its
// bias and activation (passes/matmul_epilogues.h, folded before fusion); floating convolutions
// run on cuDNN (cuda_conv.h), argsort on kiln's sort kernels (cuda_sort.h), f16 and bf16 attention
// on kiln's fused kernel (cuda_attention.h, the op kept whole); every other extern or
// fallback step is staged through the host with the cpu backend's library kernel. A kernel
// with checks gets the device's fault record, raised at the next synchronization
// (runtime/cuda/cuda_faults.h). An exported cuda program's kernels load through the same
// launcher (cuda_package.h).
#include "base/error.h"
#include "base/tensor_impl.h"
#include "base/sha256.h"
#include "codegen_cuda/cuda_attention_source.h"
#include "codegen_cuda/cuda_emitter.h"
#include "codegen_cuda/driver.h"
#include "codegen_cuda/nvrtc.h"
#include "passes/lower.h"
#include "passes/lower_index.h"
#include "passes/matmul_epilogues.h"
#include "passes/online_softmax.h"
#include "passes/row_domain.h"
#include "passes/split_reductions.h"
#include "runtime/backend.h"
#include "runtime/cache/compile_cache.h"
#include "runtime/config.h"
#include "runtime/cuda/capture_pool.h"
#include "runtime/cuda/cubin_key.h"
#include "runtime/cuda/cuda_attention.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_package.h"
#include "runtime/cuda/cuda_faults.h"
#include "runtime/cuda/cuda_graphs.h"
#include "runtime/cuda/cuda_conv.h"
#include "runtime/cuda/cuda_matmul.h"
#include "runtime/cuda/cuda_modules.h"
#include "runtime/cuda/cuda_sort.h"
#include "runtime/interpreter/interpreter.h"
#include "frontend/decompositions.h"
#include "frontend/ops_factory.h"
#include "frontend/tensor_options.h"
#include "runtime/pipeline.h"
#include "runtime/extend.h"
#include "runtime/log.h"
#include "runtime/program.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <tuple>

namespace kiln::rt {

namespace {

const std::string kCuda = "cuda";

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// ---- launching ---------------------------------------------------------------------------------------

struct LaunchInfo {
  cuda::FunctionHandle fn = nullptr;
  // A kernel with checks: the id it reports faults under (runtime/cuda/cuda_faults.h), else 0.
  int64_t fault_id = 0;
  bool rng = false;    // it draws random numbers: it takes the kiln_rng argument (cuda_emitter.h)
  ir::KLaunch launch;  // the kernel's launch schedule (passes/schedule_launch.cpp)
  // A BlockPerPoint kernel with symbolic work: that work, over the plan's parameters.
  ir::FastExpr work_expr;
  // The number of grid points (the product of the grid extents), the kernel's `grid0`.
  ir::FastExpr points_expr;
  bool static_points = true;
  int64_t points = 1;
};

class CudaLauncher final : public KernelLauncher {
 public:
  CudaLauncher(int device, std::vector<LaunchInfo> kernels) : device_(device), kernels_(std::move(kernels)) {
    sms_ = cuda::multiprocessor_count(device);
  }

  void launch(size_t index, void* const* args, const int64_t* params, size_t num_params,
              int64_t /*outer_extent*/) const override {
    const LaunchInfo& k = kernels_.at(index);
    // Symbolic extents are written over the kernel's own parameters, which `params` holds in order.
    int64_t grid0 = k.static_points ? k.points : k.points_expr.eval(params);
    if (grid0 <= 0) return;
    // The schedule's threads, or its rule over the work evaluated now; blocks by its rule.
    const ir::KLaunch& l = k.launch;
    const int64_t threads = l.threads > 0 ? l.threads : ir::threads_for_work(k.work_expr.eval(params));
    const int64_t blocks = ir::blocks_for(l, grid0, threads, l.sms > 0 ? l.sms : sms_);
    // Argument values: the buffer pointers, the parameter array (by value), grid0.
    thread_local std::vector<void*> values;
    values.clear();
    const size_t n_args = num_args_.at(index);
    for (size_t i = 0; i < n_args; ++i) values.push_back(const_cast<void**>(args + i));
    void* record = nullptr;
    int64_t fault_id = k.fault_id;
    if (fault_id != 0) {  // a checked kernel: the device's fault record and the kernel's id
      record = device_fault_record(device_);
      values.push_back(&record);
      values.push_back(&fault_id);
    }
    // Null, or the (seed, base) a CUDA graph being recorded moves on each replay (cuda_graphs.h).
    void* rng = k.rng ? graph_rng_slot(this) : nullptr;
    if (k.rng && !rng && CapturePool::capturing())  // recorded with its draws frozen: the capture fails and runs without a graph
      fail("cuda graphs", "a kernel that draws random numbers was launched by another program inside a CUDA graph capture; "
                          "its draws would repeat on every replay");
    if (k.rng) values.push_back(&rng);
    int64_t none = 0;
    values.push_back(num_params ? const_cast<int64_t*>(params) : &none);
    values.push_back(&grid0);
    cuda::launch_kernel(device_, k.fn, static_cast<unsigned>(blocks), static_cast<unsigned>(threads), 0,
                        cuda::current_stream(device_).handle(), values.data());
    if (fault_id != 0) note_checked_launch(device_);
  }

  std::vector<size_t> num_args_;  // per kernel: its buffer arguments

 private:
  int device_;
  int sms_ = 1;
  std::vector<LaunchInfo> kernels_;
};

// Attention, or its backward, that the fused kernels compute (cuda_attention.h): f16 or bf16,
// head dims known and at most kMaxAttentionHeadDim. The backward is also kept with symbolic head
// dims (an eager backward runs as a shape-generic program, runtime/eager/eager_composite.cpp):
// its step checks them at run time and runs the decomposition where the kernels do not fit.
bool fused_attention(const ir::Node& n) {
  const bool backward = n.op() == ir::OpKind::scaled_dot_product_attention_backward;
  if (n.op() != ir::OpKind::scaled_dot_product_attention && !backward) return false;
  const ir::TensorType &q = n.input(backward ? 1 : 0)->type(), &v = n.input(backward ? 3 : 2)->type();
  if (q.sizes.empty() || v.sizes.empty()) return false;
  const std::optional<int64_t> e = q.sizes.back().maybe_const(), ev = v.sizes.back().maybe_const();
  if (e && ev) return cuda::attention_kernel_fits(q.dtype, *e, *ev);
  return backward && cuda::attention_kernel_fits(q.dtype, e.value_or(1), ev.value_or(1));
}

// A step no device kernel computes, staged through the host: the inputs copied to the cpu,
// the cpu backend's library kernel (or the reference interpreter for a prim no library
// computes) run there on host outputs of the buffers' sizes, the results copied back. Correct
// and slow; counted (staged_steps()).
ExternKernelFn staged_step(const ir::PlanStep& st) {
  LibraryKernel host = find_backend("cpu")->library_kernel(st.op);
  return [op = st.op, host = std::move(host)](const std::vector<Tensor>& ins, const ir::AttrList& attrs,
                                              const std::vector<Tensor>& outs) {
    count_staged_step();
    const DefaultDeviceScope on_host{Device()};  // the host code makes host temporaries
    std::vector<Tensor> host_ins;
    for (const Tensor& t : ins) host_ins.push_back(t.to(Device()));
    std::vector<Tensor> host_outs;
    if (host) {
      for (const Tensor& o : outs) host_outs.push_back(empty(o.sizes().vec(), TensorOptions(o.dtype())));
      host.fn(host_ins, attrs, host_outs);
    } else {
      host_outs = interpret_op(op, host_ins, attrs);
    }
    for (size_t i = 0; i < outs.size(); ++i) Tensor(outs[i]).copy_(host_outs.at(i));
  };
}

// The function of every non-kernel step: a user's lowering or custom op (on the device),
// cuBLASLt for mm and bmm in f32/f16/bf16/f64, else the step staged through the host.
std::vector<ExternKernelFn> device_step_fns(const ir::ExecPlan& plan, std::vector<ExternKernelFn> fns) {
  fns.resize(plan.steps.size());
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const ir::PlanStep& st = plan.steps[i];
    if (st.kind == ir::StepKind::Kernel || fns[i]) continue;
    ExternKernelFn staged = staged_step(st);
    if (st.kind == ir::StepKind::Extern && (st.op == ir::OpKind::mm || st.op == ir::OpKind::bmm)) {
      fns[i] = [op = st.op, staged](const std::vector<Tensor>& ins, const ir::AttrList& attrs,
                                    const std::vector<Tensor>& outs) {
        if (!cuda_matmul(op, ins.at(0), ins.at(1), outs.at(0))) staged(ins, attrs, outs);  // integers a kernel does not compute
      };
    } else if (st.kind == ir::StepKind::Extern && st.op == ir::OpKind::convolution) {
      fns[i] = [staged](const std::vector<Tensor>& ins, const ir::AttrList& attrs, const std::vector<Tensor>& outs) {
        if (!cuda_convolution(ins, attrs, outs.at(0))) staged(ins, attrs, outs);  // integers, int32 overflow
      };
    } else if (st.kind == ir::StepKind::Extern && st.op == ir::OpKind::argsort) {
      fns[i] = [staged](const std::vector<Tensor>& ins, const ir::AttrList& attrs, const std::vector<Tensor>& outs) {
        const int64_t dim = attrs.get<int64_t>(ir::OpKind::argsort, "dim");
        if (!cuda_argsort(ins.at(0), dim, attrs.get<bool>(ir::OpKind::argsort, "descending"), outs.at(0)))
          staged(ins, attrs, outs);  // past the grid's size
      };
    } else if (st.kind == ir::StepKind::Extern && st.op == ir::OpKind::scaled_dot_product_attention) {
      // What the fused kernel cannot take (no kernel to be had) runs the decomposition on the device.
      fns[i] = [](const std::vector<Tensor>& ins, const ir::AttrList& attrs, const std::vector<Tensor>& outs) {
        constexpr ir::OpKind op = ir::OpKind::scaled_dot_product_attention;
        if (!cuda_attention(ins, attrs.get<bool>(op, "is_causal"), attrs.get<double>(op, "scale"), outs.at(0)))
          Tensor(outs.at(0)).copy_(run_decomposition(op, ins, attrs).at(0));
      };
    } else if (st.kind == ir::StepKind::Extern && st.op == ir::OpKind::scaled_dot_product_attention_backward) {
      fns[i] = [](const std::vector<Tensor>& ins, const ir::AttrList& attrs, const std::vector<Tensor>& outs) {
        constexpr ir::OpKind op = ir::OpKind::scaled_dot_product_attention_backward;
        if (cuda_attention_backward(ins, attrs.get<bool>(op, "is_causal"), attrs.get<double>(op, "scale"), outs)) return;
        const std::vector<Tensor> r = run_decomposition(op, ins, attrs);
        for (size_t k = 0; k < outs.size(); ++k) Tensor(outs[k]).copy_(r.at(k));
      };
    } else if (st.kind == ir::StepKind::Extern && st.op == ir::OpKind::addmm_activation) {
      // The activation is read once, here; what cuBLASLt cannot take runs the op's decomposition
      // op by op on the device.
      fns[i] = [act = st.attrs.get<std::string>(ir::OpKind::addmm_activation, "activation")](
                   const std::vector<Tensor>& ins, const ir::AttrList& attrs, const std::vector<Tensor>& outs) {
        if (!cuda_addmm_activation(ins.at(0), ins.at(1), ins.at(2), act, outs.at(0)))
          Tensor(outs.at(0)).copy_(run_decomposition(ir::OpKind::addmm_activation, ins, attrs).at(0));
      };
    } else {
      fns[i] = std::move(staged);
    }
  }
  return fns;
}

// The launcher of a plan's kernels on `device`: kernel i is function entries[i] of module
// *code[i].
std::shared_ptr<CudaLauncher> device_launcher(int device, const std::vector<const ir::Kernel*>& kernels,
                                              const std::vector<const ModuleCode*>& code,
                                              const std::vector<std::string>& entries) {
  std::vector<LaunchInfo> infos;
  std::vector<size_t> num_args;
  for (size_t i = 0; i < kernels.size(); ++i) {
    LaunchInfo li;
    li.fn = load_function(device, *code.at(i), entries.at(i));
    li.launch = kernels[i]->schedule.launch;
    if (ir::has_checks(*kernels[i])) li.fault_id = register_checked_kernel(*kernels[i]);
    li.rng = cuda::reads_rng_slot(*kernels[i]);
    if (li.launch.threads == 0) li.work_expr = ir::FastExpr(li.launch.work, kernels[i]->params);
    ir::Expr points = 1;
    for (const ir::Expr& e : kernels[i]->grid) points = points * e;
    li.static_points = points.is_const();
    if (li.static_points)
      li.points = points.as_const();
    else
      li.points_expr = ir::FastExpr(points, kernels[i]->params);
    infos.push_back(std::move(li));
    num_args.push_back(kernels[i]->args.size());
  }
  auto launcher = std::make_shared<CudaLauncher>(device, std::move(infos));
  launcher->num_args_ = std::move(num_args);
  return launcher;
}

class CudaExecutable final : public Executable {
 public:
  explicit CudaExecutable(std::unique_ptr<Program> p, bool graphs = false) : program_(std::move(p)) {
    if (graphs) graphed_ = std::make_unique<GraphedProgram>(*program_);
  }
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const override {
    const Device device = program_->device();
    for (const Tensor& t : inputs)
      if (t.device() != device && !(t.device().is_cpu() && t.impl()->sizes().empty()))
        fail("compile", "this function was compiled for {}, but an input is on {}", device.str(), t.device().str());
    for (const Tensor& t : inputs)
      if (t.device() != device) {  // a 0-dim cpu tensor joins as a scalar, as in eager ops
        std::vector<Tensor> moved = inputs;
        for (Tensor& m : moved)
          if (m.device() != device) m = m.to(device);
        return graphed_ ? graphed_->run(moved) : program_->run(moved);
      }
    return graphed_ ? graphed_->run(inputs) : program_->run(inputs);
  }
  int64_t kernels() const override { return static_cast<int64_t>(program_->num_kernels()); }

 private:
  std::unique_ptr<Program> program_;
  std::unique_ptr<GraphedProgram> graphed_;  // CompileOptions::cuda_graphs, where the plan allows
};

class CudaBackend final : public Backend {
 public:
  const std::string& name() const override { return kCuda; }
  ir::OpLevel level() const override { return ir::OpLevel::Prim; }
  // A user's lowering, or attention the fused kernel computes (kept whole, not decomposed).
  bool lowers(const ir::Node& n) const override {
    const Lowering* l = find_lowering(kCuda, n.op());
    return (l && l->call) || fused_attention(n);
  }
  bool runs_extern_lowerings() const override { return true; }

  void lower(Compilation& c) const override {
    passes::LowerOptions lo;
    lo.extern_lowering = [use = c.opts.use_lowerings](const ir::Node& n) -> std::string {
      if (const Lowering* l = use ? find_lowering(kCuda, n.op()) : nullptr; l && l->call)
        return fmt::format("lowering {}", l->name);
      // cuBLASLt for f32, f16, bf16 and f64; a generated kernel (a Matmul group) for integers.
      if (n.op() == ir::OpKind::addmm_activation) return "cublaslt";  // folded f32, f16 and bf16 products
      if (n.op() == ir::OpKind::mm || n.op() == ir::OpKind::bmm) {
        const ScalarType dt = n.output()->type().dtype;
        const bool lt = dt == ScalarType::Float || dt == ScalarType::Half || dt == ScalarType::BFloat16 ||
                        dt == ScalarType::Double;
        return lt || !passes::matmul_kernelable(&n) ? "cublaslt" : "";
      }
      if (n.op() == ir::OpKind::convolution && cudnn_convolution_dtype(n.output()->type().dtype)) return "cudnn";
      if (n.op() == ir::OpKind::argsort) return "sort";  // kiln's sort kernels (cuda_sort.h)
      if (n.op() == ir::OpKind::scaled_dot_product_attention || n.op() == ir::OpKind::scaled_dot_product_attention_backward)
        return "fused attention";  // cuda_attention.h
      if (n.op() == ir::OpKind::cat) return "";  // inline, or a Concat group's copy kernels
      if (passes::indexed_read_inlinable(&n)) return "";  // gather, index_select: read inline
      if (passes::indexed_write_kernelable(&n)) return "";  // scatter, scatter_add, scatter_reduce: kernels
      if (n.info().family == ir::OpFamily::Random) return "";  // Philox draws computed inline (ir::KOp::Random)
      const LibraryKernel lib = find_backend("cpu")->library_kernel(n.op());
      return lib ? fmt::format("host {}", lib.name) : std::string();
    };
    // The grid is sized for the device's multiprocessors when a driver can say (else at launch).
    passes::ScheduleTarget target;
    const Device device = c.opts.device.is_cuda() ? c.opts.device : Device(kCUDA, 0);
    if (cuda::driver_available() && device.index < cuda::driver_device_count())
      target.sms = cuda::multiprocessor_count(device.index);
    target.row_threads = config().cuda_row_threads;
    target.row_cache = config().cuda_row_cache;
    // Few results with long rows: partials first, so that the grid fills the device.
    const passes::ScheduleTarget& t = c.opts.schedule_target ? *c.opts.schedule_target : target;
    // A product's bias and activation into cuBLASLt's epilogue (one call, no pointwise kernel).
    passes::MatmulEpilogues epilogues{.gelu_tanh = true, .low_precision_operands = true,
                                       .user_lowered = users_call_lowerings(c.opts.use_lowerings, kCuda)};
    c.stage("fold_matmul_epilogues", [&](ir::Graph& g) { return passes::fold_matmul_epilogues(g, epilogues); });
    c.stage("split_reductions", [&](ir::Graph& g) { return passes::split_reductions(g, t); });
    // A row's max and sum of exponentials in one pass (before the launch: it changes what a
    // row kernel keeps in registers).
    lower_to_kernels(c, std::move(lo), target,
                     {{"online_softmax", [](ir::ExecPlan& p, const passes::ScheduleTarget& t) {
                         return passes::online_softmax(p, t);
                       }},
                      {"schedule_launch", [](ir::ExecPlan& p, const passes::ScheduleTarget& t) {
                         return passes::schedule_launch(p, t);
                       }}});
  }

  CompileStatus compile(Compilation& c) const override {
    const Device device = c.opts.device.is_cuda() ? c.opts.device : Device(kCUDA, 0);
    std::string why;
    if (!cuda::driver_available(&why))
      return CompileStatus::failure(fmt::format("backend 'cuda' cannot compile '{}': CUDA is not available: {}",
                                                c.opts.name, why));
    const int sm = cuda::compute_capability(device.index);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<const ir::Kernel*> kernels = c.plan.kernels();
    const std::string source = cuda::emit_program_module(kernels);
    c.stages.push_back({"cuda_emit", ms_since(t0), true});
    CompileCache* store = compile_cache();
    const auto t1 = std::chrono::steady_clock::now();
    // The cache first: a process whose module is there never loads NVRTC (cubin_key.h).
    ModuleCode code;
    if (!kernels.empty()) {
      code = cached_module(source, sm, store);
      if (code.image.empty()) {
        if (!cuda::nvrtc_available(&why))
          return CompileStatus::failure(fmt::format("backend 'cuda' cannot compile '{}': {}", c.opts.name, why));
        compile_module(code, source, kernels.size(), sm, store);
      }
      if (!code.error.empty())
        return CompileStatus::failure(fmt::format("backend 'cuda' cannot compile '{}': {}\n--- source ---\n{}",
                                                  c.opts.name, code.error, source),
                                      code.log);
    }
    c.stages.push_back({code.from == CodeSource::Compiled ? "nvrtc" : "cubin_lookup", ms_since(t1), true});
    c.code_source = kernels.empty() ? CodeSource::Memory : code.from;
    // The dump names each plan kernel's entry point above the module's source.
    std::string names;
    std::vector<std::string> entries;
    for (size_t i = 0; i < kernels.size(); ++i) {
      entries.push_back(cuda::module_entry(i));
      names += fmt::format("// plan kernel {} is {}\n", kernels[i]->name, entries.back());
    }
    c.snapshot("cuda_source", "cu", names + source);
    const auto t2 = std::chrono::steady_clock::now();
    std::shared_ptr<CudaLauncher> launcher =
        device_launcher(device.index, kernels, std::vector<const ModuleCode*>(kernels.size(), &code), entries);
    c.stages.push_back({"module_load", ms_since(t2), true});
    std::vector<ParamSource> params = plan_param_sources(c, kCuda);
    // A user's lowering or a custom op's eager implementation receives the device tensors.
    std::vector<ExternKernelFn> externs = device_step_fns(c.plan, plan_step_fns(c, *this));
    KILN_LOG_IF(LogChannel::Kernels, "{}: {} cuda kernels in one module for sm_{}, code {} in {:.2f} ms", c.opts.name,
                kernels.size(), sm, code_source_name(*c.code_source), ms_since(t0));
    // CUDA graphs where asked for, the plan allows and the driver has them (cuda_graphs.h).
    std::string no_graphs;
    const bool graphs = c.opts.cuda_graphs && plan_graphable(c.plan, &no_graphs) && cuda::graphs_available(&no_graphs);
    if (c.opts.cuda_graphs && !graphs)
      KILN_LOG_IF(LogChannel::Perf, "{}: cuda graphs are off for this program: {}", c.opts.name, no_graphs);
    CompileStatus s;
    s.log = code.log;
    s.exe = std::make_unique<CudaExecutable>(
        std::make_unique<Program>(c.plan, device, std::move(launcher), std::move(params), std::move(externs)), graphs);
    return s;
  }
};

}  // namespace

std::shared_ptr<const Backend> make_cuda_backend() { return std::make_shared<CudaBackend>(); }

std::unique_ptr<Program> cuda_package_program(ir::ExecPlan plan, Device device, const std::vector<std::string>& images,
                                              std::vector<ParamSource> params) {
  const std::vector<const ir::Kernel*> kernels = plan.kernels();
  if (images.size() != kernels.size())
    internal_fail("cuda_package_program: {} images for {} kernels", images.size(), kernels.size());
  // A package keeps one image per kernel (runtime/export/cuda_code.h), its entry kModuleEntry.
  std::vector<ModuleCode> code(kernels.size());
  std::vector<const ModuleCode*> of_kernel;
  for (size_t i = 0; i < kernels.size(); ++i) {
    code[i].key = "package " + sha256_hex(images[i]);  // the module table's key: equal images load once
    code[i].image = images[i];
    code[i].from = CodeSource::Disk;
    of_kernel.push_back(&code[i]);
  }
  std::shared_ptr<CudaLauncher> launcher =
      device_launcher(device.index, kernels, of_kernel, std::vector<std::string>(kernels.size(), cuda::kModuleEntry));
  std::vector<ExternKernelFn> externs =
      device_step_fns(plan, plan_step_fns(plan, *find_backend(kCuda), /*use_lowerings=*/true));
  return std::make_unique<Program>(std::move(plan), device, std::move(launcher), std::move(params), std::move(externs));
}

}  // namespace kiln::rt
