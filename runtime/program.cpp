// kiln/runtime/program.cpp — executes an ExecPlan step by step.
#include "runtime/program.h"
#include "runtime/scratch.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_random.h"
#include "ir/kernel_abi.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <optional>

namespace kiln::rt {

namespace {

using ir::BufferRole;
using ir::StepKind;

Tensor tensor_on(const Storage& s, ScalarType dt, IntArrayRef sizes) {
  return Tensor(make_intrusive<TensorImpl>(s, dt, sizes));
}

// A plan's sizes come from its inputs' (and for a parsed graph, from its text): the byte count
// is checked, so a huge size is an error and never a wrapped-around small buffer.
Tensor fresh(ScalarType dt, IntArrayRef sizes, Device device = Device()) {
  return tensor_on(make_intrusive<StorageImpl>(checked_nbytes("run", sizes, dt), device), dt, sizes);
}

// Work (element iterations) per grid-0 point: later grid dims times the stages' loop nests,
// with stage extents that depend on the grid point taken at point 0.
ir::Expr work_per_row(const ir::Kernel& k) {
  std::map<std::string, ir::Expr> at0;
  for (size_t d = 0; d < k.grid.size(); ++d) at0[ir::grid_var(d)] = ir::Expr(0);
  ir::Expr work = 1;
  for (size_t d = 1; d < k.grid.size(); ++d) work = work * k.grid[d];
  ir::Expr stages = 0;
  for (const ir::KStage& st : k.stages) {
    ir::Expr w = 1;
    for (const ir::Expr& e : st.extents) w = w * e.substitute(at0);
    stages = stages + w;
  }
  return work * stages;
}

int64_t grain_for(int64_t work) { return std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, work)); }

}  // namespace

Program::Program(ir::ExecPlan plan, std::vector<ir::KernelFn> kernel_fns, std::vector<ParamSource> params,
                 std::vector<ExternKernelFn> step_fns)
    : plan_(std::move(plan)),
      kernel_fns_(std::move(kernel_fns)),
      param_sources_(std::move(params)),
      step_fns_(std::move(step_fns)) {
  init();
}

Program::Program(ir::ExecPlan plan, Device device, std::shared_ptr<const KernelLauncher> launcher,
                 std::vector<ParamSource> params, std::vector<ExternKernelFn> step_fns)
    : plan_(std::move(plan)),
      device_(device),
      launcher_(std::move(launcher)),
      param_sources_(std::move(params)),
      step_fns_(std::move(step_fns)) {
  if (!launcher_) internal_fail("Program on {}: no kernel launcher", device_.str());
  init();
}

void Program::init() {
  if (!step_fns_.empty() && step_fns_.size() != plan_.steps.size())
    internal_fail("Program: {} step functions for {} steps", step_fns_.size(), plan_.steps.size());
  for (size_t si = 0; si < plan_.steps.size() && launcher_; ++si)
    if (plan_.steps[si].kind != StepKind::Kernel && (step_fns_.empty() || !step_fns_[si]))
      internal_fail("Program on {}: step {} ({}) has no function", device_.str(), si, plan_.steps[si].describe());
  // Static: no size, grid or attribute depends on the inputs. A plan's random-draw parameters
  // (ir/exec_plan.h) are read per call but size nothing.
  static_ = std::all_of(param_sources_.begin(), param_sources_.end(),
                        [](const ParamSource& p) { return p.random != ParamSource::Random::None; });
  if (param_sources_.size() != plan_.params.size())
    internal_fail("Program: {} parameter sources for {} plan parameters", param_sources_.size(), plan_.params.size());
  size_t kernel_index = 0;
  for (const ir::PlanStep& st : plan_.steps) {
    StepInfo info;
    if (st.kind == StepKind::Kernel) {
      info.kernel_index = kernel_index++;
      info.checked = ir::has_checks(st.kernel);
      if (!launcher_) info.fn = kernel_fns_.at(info.kernel_index);
      const ir::Expr grid0 = st.kernel.grid.empty() ? ir::Expr(1) : st.kernel.grid[0];
      if (static_) {
        info.grid0 = grid0.as_const();
        info.grain = grain_for(work_per_row(st.kernel).as_const());
      } else {
        info.grid0_expr = ir::FastExpr(grid0, plan_.params);
        info.work_expr = ir::FastExpr(work_per_row(st.kernel), plan_.params);
      }
      for (const std::string& p : st.kernel.params)
        info.param_index.push_back(
            static_cast<int>(std::find(plan_.params.begin(), plan_.params.end(), p) - plan_.params.begin()));
    } else if (!static_) {
      const std::vector<ir::AttrValue>& av = st.attrs.values();
      for (size_t a = 0; a < av.size(); ++a) {
        if (const auto* e = std::get_if<ir::Expr>(&av[a]); e && !e->is_const())
          info.sym_attrs.push_back({a, -1, ir::FastExpr(*e, plan_.params)});
        if (const auto* list = std::get_if<std::vector<ir::Expr>>(&av[a]))
          for (size_t i = 0; i < list->size(); ++i)
            if (!(*list)[i].is_const())
              info.sym_attrs.push_back({a, static_cast<int>(i), ir::FastExpr((*list)[i], plan_.params)});
      }
    }
    steps_.push_back(std::move(info));
  }
  if (!launcher_ && kernel_index != kernel_fns_.size())
    internal_fail("Program: {} kernel functions for {} kernel steps", kernel_fns_.size(), kernel_index);
  num_kernels_ = kernel_index;
  for (const ir::PlanBuffer& b : plan_.buffers)
    if (b.donor_input >= 0) donors_ = true;
  for (const ir::PlanBuffer& b : plan_.buffers) {
    std::vector<ir::FastExpr> vs;
    if (b.role == BufferRole::View ||
        ((b.role == BufferRole::Temp || b.role == BufferRole::Output) && b.strides != ir::contiguous_strides(b.type.sizes)))
      for (const ir::Expr& e : b.strides) vs.emplace_back(e, plan_.params);
    stride_exprs_.push_back(std::move(vs));
    if (static_) {
      buffer_sizes_.push_back(b.type.static_sizes());
      continue;
    }
    std::vector<ir::FastExpr> sz;
    for (const ir::Expr& e : b.type.sizes) sz.emplace_back(e, plan_.params);
    buffer_size_exprs_.push_back(std::move(sz));
  }
  for (const ir::MemorySlot& s : plan_.slots) {
    if (static_)
      slot_bytes_.push_back(s.bytes.as_const());
    else
      slot_byte_exprs_.emplace_back(s.bytes, plan_.params);
  }
}

namespace {
std::atomic<int64_t> g_interpreted_steps{0};
std::atomic<int64_t> g_staged_steps{0};
}  // namespace

int64_t interpreted_steps() { return g_interpreted_steps.load(std::memory_order_relaxed); }
int64_t staged_steps() { return g_staged_steps.load(std::memory_order_relaxed); }
void count_staged_step() { g_staged_steps.fetch_add(1, std::memory_order_relaxed); }

namespace {

// The working vectors of one Program::run, leased per thread and nesting depth
// (runtime/scratch.h) so that a warm call does not allocate them again.
struct RunScratch {
  std::vector<int64_t> pv;
  std::vector<std::vector<int64_t>> dyn_sizes;
  std::vector<int64_t> dyn_slots;
  std::vector<Tensor> bufs;
  std::vector<Storage> slots;
  std::vector<void*> args;
  std::vector<int64_t> kparams;
  std::vector<std::pair<const void*, size_t>> storages;  // donation: inputs by storage
  std::vector<char> shared;                              // donation: input shares its storage
  void drop_references() {
    bufs.clear();
    slots.clear();
  }
};

}  // namespace

// One call of a Program: its inputs, parameter values, buffer sizes and buffers (the vectors
// are a leased RunScratch's).
struct Program::Call {
  const std::vector<Tensor>& inputs;
  RunScratch& scratch;
  // The default generator's seed and the first of the plan's random_draws offsets this call
  // reserved (ir/exec_plan.h).
  int64_t rng_seed = 0, rng_base = 0;
  const std::vector<std::vector<int64_t>>* sizes = nullptr;  // per buffer
  const std::vector<int64_t>* slot_bytes = nullptr;          // per memory slot
  const std::vector<int64_t>& pv() const { return scratch.pv; }
};

// Sizes: precomputed when static, else evaluated from the parameters read off the inputs.
void Program::size_buffers(Call& c) const {
  std::vector<int64_t>& pv = c.scratch.pv;
  pv.clear();
  c.sizes = &buffer_sizes_;
  c.slot_bytes = &slot_bytes_;
  for (const ParamSource& src : param_sources_) {
    if (src.random != ParamSource::Random::None) {
      pv.push_back(src.random == ParamSource::Random::Seed ? c.rng_seed : c.rng_base);
      continue;
    }
    const TensorImpl& t = *c.inputs.at(static_cast<size_t>(src.input)).impl();
    pv.push_back(src.stride ? t.strides()[static_cast<size_t>(src.dim)] : t.sizes()[static_cast<size_t>(src.dim)]);
  }
  if (static_) return;
  std::vector<std::vector<int64_t>>& dyn_sizes = c.scratch.dyn_sizes;
  if (dyn_sizes.size() < buffer_size_exprs_.size()) dyn_sizes.resize(buffer_size_exprs_.size());
  for (size_t b = 0; b < buffer_size_exprs_.size(); ++b) {
    dyn_sizes[b].clear();
    for (const ir::FastExpr& e : buffer_size_exprs_[b]) dyn_sizes[b].push_back(e.eval(pv.data()));
  }
  c.scratch.dyn_slots.clear();
  for (const ir::FastExpr& e : slot_byte_exprs_) c.scratch.dyn_slots.push_back(e.eval(pv.data()));
  c.sizes = &dyn_sizes;
  c.slot_bytes = &c.scratch.dyn_slots;
}

// A buffer that is not a view, made on first use: an input, a fresh output, or a temporary in
// its memory slot.
const Tensor& Program::plain_buffer(Call& c, int b) const {
  Tensor& t = c.scratch.bufs[static_cast<size_t>(b)];
  if (t.defined()) return t;
  const ir::PlanBuffer& pb = plan_.buffers[static_cast<size_t>(b)];
  const std::vector<int64_t>& sz = (*c.sizes)[static_cast<size_t>(b)];
  switch (pb.role) {
    case BufferRole::Input: t = c.inputs.at(static_cast<size_t>(pb.input_index)); break;
    case BufferRole::View: break;  // buffer() (a view's base is never a view)
    case BufferRole::Output: {
      // An output laid out as the strided input it replaces (passes/lower.h, LowerOptions::
      // donations) is allocated with those strides when it is not computed in that input.
      const std::vector<ir::FastExpr>& se = stride_exprs_[static_cast<size_t>(b)];
      const auto make = [&] {
        if (se.empty()) return fresh(pb.type.dtype, sz, device_);
        std::vector<int64_t> strides;
        for (const ir::FastExpr& e : se) strides.push_back(e.eval(c.pv().data()));
        return empty_strided(sz, strides, TensorOptions(pb.type.dtype).device(device_));
      };
      if (pb.donor_input < 0) {
        t = make();
        break;
      }
      // Computed in the input's memory (passes/donate.h), unless another input shares that
      // memory: then in a copy of the input (the kernel reads the input through this buffer).
      const Tensor& in = c.inputs.at(static_cast<size_t>(pb.donor_input));
      if (!c.scratch.shared[static_cast<size_t>(pb.donor_input)]) {
        t = in;
      } else {
        t = make();
        t.copy_(in);
      }
      break;
    }
    case BufferRole::Temp: {
      if (pb.slot < 0) {
        t = fresh(pb.type.dtype, sz, device_);
        break;
      }
      Storage& s = c.scratch.slots[static_cast<size_t>(pb.slot)];
      const size_t need = checked_nbytes("run", sz, pb.type.dtype);
      if (!s) s = make_intrusive<StorageImpl>(std::max(need, static_cast<size_t>((*c.slot_bytes)[static_cast<size_t>(pb.slot)])), device_);
      if (s->nbytes() < need)  // the slot's byte count wrapped around: it is sized by the plan's Exprs
        internal_fail("run: slot {} holds {} bytes, buffer {} needs {}", pb.slot, s->nbytes(), b, need);
      t = tensor_on(s, pb.type.dtype, sz);
      break;
    }
  }
  if (pb.role == BufferRole::Temp && !stride_exprs_[static_cast<size_t>(b)].empty()) {  // stored in another order
    std::vector<int64_t> strides;
    for (const ir::FastExpr& e : stride_exprs_[static_cast<size_t>(b)]) strides.push_back(e.eval(c.pv().data()));
    t = Tensor(make_intrusive<TensorImpl>(t.impl()->storage(), pb.type.dtype, sz, std::move(strides), t.impl()->storage_offset()));
  }
  return t;
}

// Any buffer, made on first use; a view shares its base's storage with the plan's strides.
const Tensor& Program::buffer(Call& c, int b) const {
  const ir::PlanBuffer& pb = plan_.buffers[static_cast<size_t>(b)];
  Tensor& t = c.scratch.bufs[static_cast<size_t>(b)];
  if (pb.role != BufferRole::View || t.defined()) return plain_buffer(c, b);
  const Tensor& base = plain_buffer(c, pb.base);
  std::vector<int64_t> strides;
  for (const ir::FastExpr& e : stride_exprs_[static_cast<size_t>(b)]) strides.push_back(e.eval(c.pv().data()));
  t = Tensor(make_intrusive<TensorImpl>(base.impl()->storage(), pb.type.dtype, (*c.sizes)[static_cast<size_t>(b)],
                                        std::move(strides), base.impl()->storage_offset()));
  return t;
}

// A generated kernel: on the device's launcher, or on the host over chunks of grid dim 0 in
// parallel; a checked kernel's first fault is raised here (ir/kernel_abi.h).
void Program::run_kernel(Call& c, size_t si) const {
  const ir::PlanStep& st = plan_.steps[si];
  const StepInfo& info = steps_[si];
  std::vector<void*>& args = c.scratch.args;
  std::vector<int64_t>& kparams = c.scratch.kparams;
  args.clear();
  for (int b : st.buffers) args.push_back(buffer(c, b).data_ptr());
  kparams.clear();
  for (int i : info.param_index) kparams.push_back(c.pv()[static_cast<size_t>(i)]);
  int64_t grid0 = info.grid0, grain = info.grain;
  if (!static_) {
    grid0 = info.grid0_expr.eval(c.pv().data());
    grain = grain_for(info.work_expr.eval(c.pv().data()));
  }
  const int64_t* p = kparams.data();
  if (launcher_) {  // the launcher adds the device's fault record to a checked kernel
    if (grid0 > 0) launcher_->launch(info.kernel_index, args.data(), p, kparams.size(), grid0);
    return;
  }
  ir::KernelFault fault;
  if (info.checked) args.push_back(&fault);
  void* const* a = args.data();
  ir::KernelFn fn = info.fn;
  if (st.kernel.grid.empty() || grid0 <= grain) {
    if (grid0 > 0) fn(a, p, 0, grid0);
  } else {
    parallel_for(grid0, grain, [&](int64_t b, int64_t e) { fn(a, p, b, e); });
  }
  if (fault.site != 0) ir::raise_kernel_fault(st.kernel, fault);
}

// The attributes an extern or fallback step is called with: symbolic ones take this call's
// values, and a random op draws fresh values on every call, at the offset this call reserved
// for it (a traced (seed, offset) would replay the trace's draw forever).
ir::AttrList Program::call_attrs(const Call& c, size_t si) const {
  const ir::PlanStep& st = plan_.steps[si];
  ir::AttrList attrs = st.attrs;
  for (const StepInfo::SymAttr& sa : steps_[si].sym_attrs) {
    ir::AttrValue& v = attrs.values()[sa.attr];
    const ir::Expr val(sa.value.eval(c.pv().data()));
    if (sa.element < 0)
      v = val;
    else
      std::get<std::vector<ir::Expr>>(v)[static_cast<size_t>(sa.element)] = val;
  }
  if (ir::op_info(st.op).family == ir::OpFamily::Random) {  // draw k of the plan: its offset attribute is k
    const ir::OpSchema& schema = ir::op_info(st.op).schema;
    ir::AttrValue& offset = attrs.values()[static_cast<size_t>(schema.attr_index("offset"))];
    attrs.values()[static_cast<size_t>(schema.attr_index("seed"))] = c.rng_seed;
    offset = c.rng_base + std::get<int64_t>(offset);
  }
  return attrs;
}

// An extern or fallback step: the backend's function (a library kernel, a lowering, a custom
// op) writes into the step's output buffers; without one (a host Program), the prim runs on the
// reference interpreter and its results are copied in.
void Program::run_call(Call& c, size_t si) const {
  const ir::PlanStep& st = plan_.steps[si];
  const size_t n_out = static_cast<size_t>(ir::op_info(st.op).schema.num_outputs);
  const size_t first_out = st.buffers.size() - n_out;
  std::vector<Tensor> ins;
  for (size_t i = 0; i < first_out; ++i) ins.push_back(buffer(c, st.buffers[i]));
  const bool plain = steps_[si].sym_attrs.empty() && ir::op_info(st.op).family != ir::OpFamily::Random;
  const ir::AttrList computed = plain ? ir::AttrList() : call_attrs(c, si);
  const ir::AttrList& attrs = plain ? st.attrs : computed;
  if (!step_fns_.empty() && step_fns_[si]) {
    std::vector<Tensor> outs;
    for (size_t i = first_out; i < st.buffers.size(); ++i) outs.push_back(buffer(c, st.buffers[i]));
    step_fns_[si](ins, attrs, outs);
    return;
  }
  g_interpreted_steps.fetch_add(1, std::memory_order_relaxed);
  const std::vector<Tensor> res = interpret_op(st.op, ins, attrs);
  for (size_t i = 0; i < n_out; ++i) {
    const int b = st.buffers[first_out + i];
    Tensor& out = c.scratch.bufs[static_cast<size_t>(b)];
    // A temporary lives in its memory slot: a later kernel may read it there, writing over it
    // (passes/plan.cpp).
    if (!out.defined() && plan_.buffers[static_cast<size_t>(b)].role == BufferRole::Temp &&
        plan_.buffers[static_cast<size_t>(b)].slot >= 0)
      (void)buffer(c, b);
    if (out.defined())
      out.copy_(res[i]);
    else
      out = res[i].contiguous();
  }
}

// Which inputs share their storage with another input (a donated output does not take such an
// input's memory: a write into it would be seen through the other).
void Program::mark_shared_storages(Call& c) const {
  auto& st = c.scratch.storages;
  st.clear();
  for (size_t i = 0; i < c.inputs.size(); ++i) st.emplace_back(c.inputs[i].impl()->storage().get(), i);
  std::sort(st.begin(), st.end());
  c.scratch.shared.assign(c.inputs.size(), 0);
  for (size_t i = 1; i < st.size(); ++i)
    if (st[i].first == st[i - 1].first) c.scratch.shared[st[i].second] = c.scratch.shared[st[i - 1].second] = 1;
}

namespace {
struct DrawOverride {
  bool set = false;
  int64_t seed = 0, base = 0;
};
thread_local DrawOverride t_draws;
}  // namespace

RandomDrawScope::RandomDrawScope(int64_t seed, int64_t base) { t_draws = {true, seed, base}; }
RandomDrawScope::~RandomDrawScope() { t_draws = {}; }

// One call: size the buffers, run every step in plan order, return the output buffers.
std::vector<Tensor> Program::run(const std::vector<Tensor>& inputs) const {
  const ScratchLease<RunScratch> lease;
  Call c{inputs, *lease};
  if (plan_.random_draws > 0 && t_draws.set) {  // the draw an eager random prim took
    c.rng_seed = t_draws.seed;
    c.rng_base = t_draws.base;
    t_draws = {};
  } else if (plan_.random_draws > 0) {  // this call's draws, in graph order, as the eager ops would take them
    Generator& g = default_generator();
    c.rng_seed = static_cast<int64_t>(g.seed());
    c.rng_base = static_cast<int64_t>(g.reserve_offsets(static_cast<uint64_t>(plan_.random_draws)));
  }
  size_buffers(c);
  c.scratch.bufs.resize(plan_.buffers.size());
  c.scratch.slots.resize(plan_.slots.size());
  if (donors_) mark_shared_storages(c);
  for (size_t si = 0; si < plan_.steps.size(); ++si) {
    switch (plan_.steps[si].kind) {
      case StepKind::Kernel: run_kernel(c, si); break;
      case StepKind::Extern:
      case StepKind::Fallback: run_call(c, si); break;
    }
  }
  std::vector<Tensor> outs;
  outs.reserve(plan_.outputs.size());
  for (const ir::PlanOutput& o : plan_.outputs) outs.push_back(buffer(c, o.buffer));
  return outs;
}

}  // namespace kiln::rt
