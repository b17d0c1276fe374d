// kiln/frontend/dispatch.cpp — records a node when an input is traced, else runs eagerly.
//
// Eagerly, a prim runs on the executor the runtime installs (runtime/eager/eager.cpp), and so does a
// Core op with the Extern trait (its library kernel); any other composite or core op runs as
// one compiled program where the runtime can (runtime/eager/eager_composite.cpp), else its
// decomposition (run_composite_eager), whose ops dispatch one by one; a custom op runs its
// eager implementation. An elementwise op's output takes its inputs' layout, as PyTorch's
// TensorIterator gives it (frontend/elementwise_layout.h): the op runs on its inputs viewed in
// that dim order.
#include "frontend/dispatch.h"

#include "base/error.h"
#include "frontend/autograd_record.h"
#include "frontend/grad_mode.h"
#include "frontend/ops_view.h"
#include "frontend/tracer.h"
#include "ir/shape_fns.h"
#include "frontend/custom_op.h"
#include "frontend/decompositions.h"
#include "frontend/elementwise_layout.h"

#include <algorithm>
#include <optional>

namespace kiln {

namespace {

EagerExecutor g_eager_executor = nullptr;
EagerFastPath g_eager_fast_path = nullptr;
EagerComposite g_eager_composite = nullptr;
CopyKernel g_copy_kernel = nullptr;

ir::TensorType type_of(const Tensor& t) {
  return ir::TensorType(t.dtype(), ir::to_exprs(t.impl()->sizes()), t.device());
}

std::vector<Tensor> run_eager(OpCall& call);  // below: the op on its inputs, no trace and no history
std::vector<Tensor> run_eager_as_is(OpCall& call);  // the same, its outputs row-major

}  // namespace

void distinct_from_inputs(const OpCall& call, std::vector<Tensor>& out) {
  for (Tensor& o : out)
    for (const Tensor& in : call.inputs)
      if (o.defined() && o.is_same(in)) {  // rare: the op's table is read only then
        o = ir::op_info(call.op).has(ir::traits::View) ? alias(in) : in.clone();
        break;
      }
}

std::vector<Tensor> dispatch(OpCall call) {
  const std::string_view name = ir::op_name(call.op);
  // The innermost active trace records the op; values of enclosing traces are lifted into it
  // (Tracer::lift). Without an active trace, inputs must come from one trace.
  Tracer* const current = Tracer::current();
  Tracer* tracer = nullptr;
  for (const Tensor& t : call.inputs) {
    if (!t.defined()) fail(name, "received an undefined tensor");
    if (t.is_traced()) {
      Tracer* own = t.impl()->tracer();
      const bool nested = current && (own == current || current->encloses(own));
      if (!nested && tracer && tracer != own)
        fail(name, "inputs come from two different traces; a tensor traced in one function cannot be used in another");
      if (!nested) tracer = own;
    }
  }
  // While a function is traced, every op records: factories become constants of the graph, and
  // ops on captured eager tensors (weights, running statistics) read them by reference on every
  // run instead of being folded into a value computed once at trace time.
  if (!tracer) tracer = Tracer::current();
  if (tracer) return tracer->record(call);
  // An input that requires grad, under grad mode: the op runs and records its history.
  if (GradMode::is_enabled() && autograd::any_requires_grad(call.inputs)) return autograd::record(call);
  std::vector<Tensor> out = run_eager(call);
  distinct_from_inputs(call, out);
  return out;
}

namespace {

// The shape the inputs broadcast to (ops_view.h's broadcast_shapes); nullopt when they do not:
// the op's shape function then names the mismatch.
std::optional<std::vector<int64_t>> broadcast_sizes(const OpCall& call) {
  std::vector<int64_t> shape;
  try {
    for (const Tensor& t : call.inputs) shape = broadcast_shapes(ir::op_name(call.op), shape, t.impl()->sizes());
  } catch (const Error&) {
    return std::nullopt;
  }
  return shape;
}

// An elementwise op whose output is not row-major by TensorIterator's rule runs on its inputs
// viewed in the output's dim order, outermost first, and its outputs are viewed back with the
// rule's strides (frontend/elementwise_layout.h). nullopt where the output is row-major: the
// op runs as it is. clone stays row-major: Tensor::contiguous() is a clone.
std::optional<std::vector<Tensor>> run_in_input_layout(const OpCall& call) {
  if (call.op == ir::OpKind::clone || !ir::op_info(call.op).has(ir::traits::Elementwise)) return std::nullopt;
  std::vector<const TensorImpl*> impls;
  bool row_major = true;
  for (const Tensor& t : call.inputs) {
    const TensorImpl* ti = t.impl();
    if (!ti || !ti->storage()) return std::nullopt;
    // An operand broadcast along every dim (a wrapped scalar: `x * 2`) decides nothing.
    const bool broadcast = std::all_of(ti->strides().begin(), ti->strides().end(), [](int64_t st) { return st == 0; });
    row_major = row_major && (ti->is_contiguous() || broadcast);
    impls.push_back(ti);
  }
  if (row_major) return std::nullopt;
  const std::optional<std::vector<int64_t>> shape = broadcast_sizes(call);
  if (!shape) return std::nullopt;
  const std::vector<int64_t> strides = elementwise_output_strides(*shape, impls);
  if (strides.empty()) return std::nullopt;
  const std::vector<int64_t> order = outer_to_inner(*shape, strides);
  const size_t n = shape->size();
  OpCall permuted{call.op, {}, call.attrs};
  for (const Tensor& t : call.inputs) {
    const TensorImpl* ti = t.impl();
    const size_t r = ti->sizes().size();
    if (r == 0) {  // a 0-dim operand broadcasts whatever the order (and may be a cpu scalar)
      permuted.inputs.push_back(t);
      continue;
    }
    std::vector<int64_t> sizes(n), st(n);
    for (size_t i = 0; i < n; ++i) {
      const size_t d = static_cast<size_t>(order[i]);
      const bool present = d >= n - r;
      sizes[i] = present ? ti->sizes()[d - (n - r)] : 1;
      st[i] = present ? ti->strides()[d - (n - r)] : 0;
    }
    permuted.inputs.emplace_back(make_intrusive<TensorImpl>(ti->storage(), ti->dtype(), sizes, st, ti->storage_offset()));
  }
  std::vector<Tensor> out = run_eager_as_is(permuted);
  for (Tensor& o : out) {
    // A composite run op by op (its decomposition) has the layout its last op gave it: make it
    // row-major in the order, which the rule's strides then describe.
    if (o.defined() && !o.is_contiguous()) o = o.contiguous();
    const TensorImpl* oi = o.impl();
    bool expected = oi && oi->sizes().size() == n;
    for (size_t i = 0; expected && i < n; ++i) expected = oi->sizes()[i] == (*shape)[static_cast<size_t>(order[i])];
    if (!expected) internal_fail("{}: an elementwise op's output is not of its inputs' broadcast shape", ir::op_name(call.op));
    o = Tensor(make_intrusive<TensorImpl>(oi->storage(), oi->dtype(), *shape, strides, oi->storage_offset()));
  }
  return out;
}

std::vector<Tensor> run_eager(OpCall& call) {
  if (std::optional<std::vector<Tensor>> out = run_in_input_layout(call)) return std::move(*out);
  return run_eager_as_is(call);
}

std::vector<Tensor> run_eager_as_is(OpCall& call) {
  const std::string_view name = ir::op_name(call.op);
  if (g_eager_fast_path) {
    std::vector<Tensor> out;
    if (g_eager_fast_path(call.op, call.inputs, call.attrs, out)) return out;
  }

  // Every tensor input lives on one device; a 0-dim cpu tensor joins a cuda op as a scalar
  // (as in PyTorch), copied to the device.
  Device device;
  for (const Tensor& t : call.inputs)
    if (t.device().is_cuda()) {
      device = t.device();
      break;
    }
  std::vector<ir::TensorType> in_types;
  in_types.reserve(call.inputs.size());
  for (Tensor& t : call.inputs) {
    if (t.device() != device) {
      if (!(t.device().is_cpu() && t.impl()->sizes().empty()))
        fail(name, "Expected all tensors to be on the same device, but found at least two devices, {} and {}!",
             device.str(), t.device().str());
      t = t.to(device);
    }
    in_types.push_back(type_of(t));
  }
  ir::check_attrs(call.op, call.attrs);
  const ir::OpInfo& info = ir::op_info(call.op);
  // Validates shapes and dtypes, naming the op. (An op shaped by its decomposition is checked
  // by running that decomposition, just below.)
  if (!info.has(ir::traits::ShapeByDecomposition)) (void)ir::infer_types(call.op, in_types, call.attrs);
  if (info.family == ir::OpFamily::Custom) return run_custom_op(call.op, call.inputs, call.attrs);
  // A Core op with the Extern trait has a library kernel of its own (the eager executor's).
  if (info.level != ir::OpLevel::Prim && !info.has(ir::traits::Extern)) {
    std::vector<Tensor> out;
    if (g_eager_composite && g_eager_composite(call, out)) return out;
    return run_composite_eager(call);
  }
  if (!g_eager_executor) internal_fail("{}: no eager executor is installed (the runtime installs it at load)", name);
  return g_eager_executor(call.op, call.inputs, call.attrs);
}

}  // namespace

std::vector<Tensor> run_composite_eager(const OpCall& call) {
  return run_decomposition(call.op, call.inputs, call.attrs);
}

void install_eager_executor(EagerExecutor fn) { g_eager_executor = fn; }
void install_eager_fast_path(EagerFastPath fn) { g_eager_fast_path = fn; }
void install_eager_composite(EagerComposite fn) { g_eager_composite = fn; }

void install_copy_kernel(CopyKernel fn) { g_copy_kernel = fn; }

namespace {
DeviceMover g_device_mover = nullptr;
}  // namespace

void install_device_mover(DeviceMover fn) { g_device_mover = fn; }
DeviceMover installed_device_mover() { return g_device_mover; }

void run_copy_kernel(const Tensor& dst, const Tensor& src) {
  if (!g_copy_kernel) internal_fail("copy_: no copy kernel is installed (the runtime installs it at load)");
  g_copy_kernel(dst, src);
}

Tensor dispatch1(ir::OpKind op, std::vector<Tensor> inputs, std::vector<ir::AttrValue> attrs) {
  std::vector<Tensor> out = dispatch(OpCall{op, std::move(inputs), ir::AttrList(std::move(attrs))});
  if (out.size() != 1) internal_fail("{} returned {} outputs where one was expected", ir::op_name(op), out.size());
  return std::move(out[0]);
}

}  // namespace kiln
