// kiln/runtime/program.h — runs an ExecPlan: buffers, kernel launches, extern and fallback calls.
//
// A Program is what a compiled function keeps per cache entry and runs on every hit. It
// holds the plan, the native function of each kernel step and, for static plans, every
// size precomputed, so a call is: allocate the outputs and memory slots (from the caching
// allocator), then for each step fill an argument array and launch — grid dim 0 split across
// the thread pool — or call the BLAS library, or the interpreter for fallback prims.
// A Program of a device backend (cuda) allocates its buffers on that device and launches its
// kernels through the backend's KernelLauncher. A user's lowering or a custom op receives the
// device tensors; a kiln library or fallback step the launcher does not run itself is staged
// through the host (inputs copied to the cpu, the cpu's library kernel or the interpreter run
// there, results copied back), so every plan runs, and the steps that do so are counted
// (staged_steps()). An output the plan computes in an input's memory (passes/donate.h) is
// returned as that input tensor itself.
#pragma once

#include "frontend/tensor.h"
#include "ir/exec_plan.h"
#include "ir/kernel_abi.h"
#include "ir/expr_eval.h"
#include "runtime/extend.h"

#include <memory>
#include <vector>

namespace kiln::rt {

// Where a plan parameter's value comes from: input `input`'s size or stride at `dim`, or
// (random != None) the call's random draws (ir::kRandomSeedParam, ir::kRandomBaseParam).
struct ParamSource {
  int input = 0;
  int dim = 0;
  bool stride = false;
  enum class Random : uint8_t { None, Seed, Base } random = Random::None;
};

// The draws of the next Program::run on this thread that has random draws: at `seed` and
// offsets base, base + 1, ... instead of the ones it would reserve from the default generator
// (ir/exec_plan.h). An eager random prim run as a kernel passes the (seed, offset) its
// frontend op took, from whatever generator it was given.
class RandomDrawScope {
 public:
  RandomDrawScope(int64_t seed, int64_t base);
  ~RandomDrawScope();
  RandomDrawScope(const RandomDrawScope&) = delete;
  RandomDrawScope& operator=(const RandomDrawScope&) = delete;
};

// How a device backend runs a Program's steps (runtime/cuda/backend_cuda.cpp).
class KernelLauncher {
 public:
  virtual ~KernelLauncher() = default;
  // Launches kernel `index` (kernel steps counted in step order) asynchronously: `args` are
  // the buffers' device pointers in the kernel's argument order, `params` its parameters,
  // `outer_extent` the extent of its grid dim 0 (1 for an empty grid; never 0).
  virtual void launch(size_t index, void* const* args, const int64_t* params, size_t num_params,
                      int64_t outer_extent) const = 0;
};

class Program {
 public:
  // kernel_fns: the compiled function of each Kernel step, in step order.
  // step_fns: per step, the function an Extern or Fallback step calls on the Program's device
  // (a library kernel, a registered lowering, a custom op; empty entries for kernel steps; an
  // empty vector when there are none). A host Program runs a step without one on the
  // reference interpreter.
  Program(ir::ExecPlan plan, std::vector<ir::KernelFn> kernel_fns, std::vector<ParamSource> params = {},
          std::vector<ExternKernelFn> step_fns = {});
  // A Program of device `device` whose kernels `launcher` runs; every Extern or Fallback step
  // has a function in step_fns (the backend's, which may stage it through the host).
  Program(ir::ExecPlan plan, Device device, std::shared_ptr<const KernelLauncher> launcher,
          std::vector<ParamSource> params = {}, std::vector<ExternKernelFn> step_fns = {});

  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;

  const ir::ExecPlan& plan() const { return plan_; }
  size_t num_kernels() const { return num_kernels_; }
  Device device() const { return device_; }
  const KernelLauncher* launcher() const { return launcher_.get(); }  // null for a host Program

 private:
  void init();
  // run's steps (runtime/program.cpp): the call's sizes, each buffer on first use, a kernel
  // step, a library or interpreter step and the attributes it is called with.
  struct Call;
  void size_buffers(Call& c) const;
  const Tensor& buffer(Call& c, int b) const;
  const Tensor& plain_buffer(Call& c, int b) const;
  void run_kernel(Call& c, size_t si) const;
  void run_call(Call& c, size_t si) const;
  ir::AttrList call_attrs(const Call& c, size_t si) const;
  void mark_shared_storages(Call& c) const;
  struct StepInfo {
    ir::KernelFn fn = nullptr;
    size_t kernel_index = 0;  // kernel steps: the position among them
    bool checked = false;     // the kernel has Check instructions: it takes a fault record
    int64_t grid0 = 1;   // static extent of grid dim 0
    int64_t grain = 1;   // grid-0 points per chunk that keep a chunk worth a thread
    // Symbolic plans: the same, evaluated per call, and the kernel's parameters as indices
    // into the plan's parameter values.
    ir::FastExpr grid0_expr, work_expr;
    std::vector<int> param_index;
    // Extern/fallback steps: symbolic attributes (a random op's size), evaluated per call.
    struct SymAttr {
      size_t attr = 0;  // index in the step's AttrList
      int element = -1; // -1: an Expr attribute; else the element of an Expr-list attribute
      ir::FastExpr value;
    };
    std::vector<SymAttr> sym_attrs;
  };
  ir::ExecPlan plan_;
  std::vector<ir::KernelFn> kernel_fns_;
  Device device_;
  std::shared_ptr<const KernelLauncher> launcher_;  // device Programs
  size_t num_kernels_ = 0;
  std::vector<ParamSource> param_sources_;
  std::vector<ExternKernelFn> step_fns_;
  std::vector<StepInfo> steps_;
  bool static_ = true;
  bool donors_ = false;  // an output takes an input's memory (passes/donate.h)
  std::vector<std::vector<int64_t>> buffer_sizes_;  // static plans: sizes of every buffer
  std::vector<int64_t> slot_bytes_;
  std::vector<std::vector<ir::FastExpr>> buffer_size_exprs_;  // symbolic plans
  // Per buffer: the strides of a View, or of a Temp stored in another order than row-major (a
  // channels-last activation, passes/channels_last.cpp); else empty.
  std::vector<std::vector<ir::FastExpr>> stride_exprs_;
  std::vector<ir::FastExpr> slot_byte_exprs_;
};

// How many Fallback steps (a prim on the reference interpreter) Programs have run in this
// process. The cpu backend plans none: the op database asserts it stays 0 in compiled runs.
int64_t interpreted_steps();
// How many extern or fallback steps device Programs have run through the host; device
// backends count each with count_staged_step().
int64_t staged_steps();
void count_staged_step();

}  // namespace kiln::rt
