// kiln/runtime/eager/eager.cpp — the eager kernel cache and the choice between kernel and interpreter.
#include "runtime/eager/eager.h"
#include "runtime/wiring.h"
#include "runtime/cache_bound.h"
#include "runtime/eager/eager_key.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "frontend/dispatch.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_view.h"
#include "ir/shape_env.h"
#include "ir/shape_fns.h"
#include "runtime/backend.h"
#include "runtime/pipeline.h"
#include "runtime/interpreter/interp_kernels.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/program.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <atomic>
#include <memory>
#include <optional>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace kiln::rt {

namespace {

// nullptr exe: this key runs on the interpreter (its shape function could not be
// specialized symbolically).
struct Entry : UsedFlag {
  std::unique_ptr<Executable> exe;
};

// At most kMaxEagerKernels entries (runtime/cache_bound.h): keys carry attributes (dims,
// dtypes), so a long run can meet new ones for a long time.
constexpr size_t kMaxEagerKernels = 4096;
std::atomic<size_t> g_capacity{kMaxEagerKernels};
DeviceEager g_device_eager = nullptr;  // the cuda home's (runtime/cuda/cuda_eager.cpp)
DeviceFill g_device_fill = nullptr;    // the same home's memset

struct Cache {
  std::shared_mutex mu;
  std::unordered_map<EagerKey, std::shared_ptr<const Entry>, EagerKeyHash> map;
  std::vector<EagerKey> order;  // keys by insertion, for eviction
  std::atomic<int64_t> built{0}, compiled_calls{0}, interpreted_calls{0}, evicted{0};
};
Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: kernels may run during static destruction
  return *c;
}

bool runs_compiled(ir::OpKind op, const std::vector<Tensor>& inputs) {
  const ir::OpInfo& info = ir::op_info(op);
  switch (info.family) {
    case ir::OpFamily::Unary:
    case ir::OpFamily::Ternary:
    case ir::OpFamily::Cast:
    case ir::OpFamily::Reduction: break;
    case ir::OpFamily::Binary: break;  // integer division checks its divisor in the kernel
    case ir::OpFamily::Scan: break;    // a Scan group's kernel, on both devices
    case ir::OpFamily::Index: break;   // gather, index_select, the scatters: duck-sized (size_classes)
    case ir::OpFamily::Matmul: {       // products a Matmul kernel computes (the backends' choice:
                                       // integers; floats go to BLAS or cuBLASLt)
      const ScalarType dt = inputs.empty() ? ScalarType::Float : inputs[0].dtype();
      if (!is_integral(dt, /*include_bool=*/false)) return false;
      break;
    }
    case ir::OpFamily::Shape:          // constant_pad; cat on cuda (the cpu's library copies slices)
      if (op == ir::OpKind::cat && !(inputs.empty() ? false : inputs[0].is_cuda())) return false;
      break;
    case ir::OpFamily::View:
    case ir::OpFamily::Factory:
    case ir::OpFamily::Random:
    case ir::OpFamily::Conv:
    case ir::OpFamily::Sort:
    KILN_CASE_COMPOSITE_FAMILIES:
    case ir::OpFamily::Custom: return false;
  }
  if (inputs.empty() || !keyable(inputs)) return false;
  const size_t rank = inputs[0].impl()->sizes().size();
  const Device device = inputs[0].impl()->device();
  const bool duck = duck_sized(op);  // inputs of different shapes
  if (duck) {  // size_classes numbers at most kMaxClassDims dims
    size_t dims = 0;
    for (const Tensor& t : inputs) dims += t.impl()->sizes().size();
    if (info.level != ir::OpLevel::Prim || dims > kMaxClassDims) return false;
  }
  for (const Tensor& t : inputs)
    if (t.device() != device || (!duck && t.impl()->sizes().size() != rank)) return false;
  return rank < 64;
}

// The one-node graph of an eager key compiled for its device.
std::unique_ptr<Executable> compile_entry(const EagerKey& key, std::shared_ptr<ir::Graph> g, DriverOptions opts) {
  const ir::ShapeEnvScope no_trace(nullptr);  // the key's symbols are not a trace's (build)
  opts.name = fmt::format("eager_{}", ir::op_name(key.op));
  opts.use_lowerings = false;  // a user's extern call may run this very op eagerly
  opts.device = key.device >= 0 ? Device(kCUDA, key.device) : Device();
  Compilation c = compile_graph(std::move(g), *find_backend(key.device >= 0 ? "cuda" : "cpu"), std::move(opts));
  if (!c.status.ok()) {
    // The cuda backend fails for reasons of the machine (no NVRTC, a compiler error with its
    // log); the cpu backend compiles every prim it accepts, so there it is a bug.
    if (key.device >= 0)
      fail(ir::op_name(key.op), "cannot run on cuda:{}: {}{}", key.device, c.status.error,
           c.status.log.empty() ? "" : "\n" + c.status.log);
    internal_fail("eager {}: {}", ir::op_name(key.op), c.status.error);
  }
  return std::move(c.status.exe);
}

// The graph inputs of an eager key: input i's sizes are s0.. of input 0 for every input (all
// inputs have the same rank and, for these ops, broadcast-free equal sizes; 1 where the key's
// unit_dims say), or, for duck_sized prims, the symbol of each dim's size class (s<class>, read
// off the first dim of that class); strides t<i>_<d> of inputs that are not contiguous. Each
// symbol's source is recorded in `opts` as it is made.
std::vector<ir::Value*> symbolic_inputs(const EagerKey& key, const std::vector<Tensor>& inputs, ir::Graph& g,
                                        DriverOptions& opts) {
  const size_t rank = key.rank(0);
  const bool duck = duck_sized(key.op);
  std::vector<std::vector<ir::Expr>> sizes(inputs.size());
  size_t j = 0;
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t d = 0; d < (duck ? key.rank(i) : rank); ++d, ++j) {
      if (!duck && d < 32 && (key.unit_dims >> d & 1)) {
        sizes[i].emplace_back(1);
        continue;
      }
      const std::string name = fmt::format("s{}", duck ? size_class(key.size_classes, j) : d);
      sizes[i].push_back(ir::Expr::symbol(name));
      // The first call's sizes guide performance choices only (whether a full reduction is
      // split across the device), as a compiled function's trace-time sizes do.
      if (opts.params.emplace(name, ParamSource{duck ? static_cast<int>(i) : 0, static_cast<int>(d), false}).second)
        opts.hints.emplace(name, inputs[duck ? i : 0].impl()->sizes()[d]);
    }
  std::vector<ir::Value*> ins;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ins.push_back(g.add_input(ir::TensorType(inputs[i].dtype(), sizes[i]), fmt::format("in{}", i)));
    const EagerLayout l = key.layout(i);
    const size_t r = key.rank(i);
    std::vector<ir::Expr> st;
    if (l == Contiguous) {
      st = ir::contiguous_strides(sizes[i]);
    } else {
      for (size_t d = 0; d < r; ++d) {
        if (l == InnerUnit && d + 1 == r) {
          st.emplace_back(1);
          continue;
        }
        st.push_back(ir::Expr::symbol(fmt::format("t{}_{}", i, d)));
        opts.params.emplace(st.back().symbol_name(), ParamSource{static_cast<int>(i), static_cast<int>(d), true});
      }
    }
    opts.input_strides.push_back(std::move(st));
  }
  return ins;
}

std::unique_ptr<Entry> build(const EagerKey& key, const std::vector<Tensor>& inputs) {
  auto e = std::make_unique<Entry>();
  // The key's symbols are its own, not those of a trace this op may run inside: its shape
  // function decides nothing about them through the trace's ShapeEnv (and records no guard),
  // and the passes learn no facts from it (compile_entry does the same for the other builds).
  const ir::ShapeEnvScope no_trace(nullptr);
  DriverOptions opts;
  auto g = std::make_shared<ir::Graph>();
  const std::vector<ir::Value*> ins = symbolic_inputs(key, inputs, *g, opts);
  try {
    ir::Node* n = g->create(key.op, ins, key.attrs);
    for (ir::Value* o : n->outputs()) g->add_output(o);
  } catch (const Error&) {
    return e;  // the shape function needs concrete sizes: interpret
  }
  e->exe = compile_entry(key, std::move(g), std::move(opts));
  return e;
}

// copy_ into a strided view (eager_copy_into): inputs [dst, src] of dst's sizes, the output
// src's values in dst's dtype (a clone, or a convert_element_type: key.op), computed in dst's
// memory with its strides (donated by input 0: passes/donate.h).
std::unique_ptr<Entry> build_copy_into(const EagerKey& key, const std::vector<Tensor>& inputs) {
  auto e = std::make_unique<Entry>();
  DriverOptions opts;
  auto g = std::make_shared<ir::Graph>();
  const std::vector<ir::Value*> ins = symbolic_inputs(key, inputs, *g, opts);
  g->add_output(g->create(key.op, {ins.at(1)}, key.attrs)->output());
  opts.donations.push_back({0, 0, /*checked_at_run_time=*/true});  // eager_copy_into checks dst
  e->exe = compile_entry(key, std::move(g), std::move(opts));
  return e;
}

// A prim without tensor inputs (a random draw, a factory) as a kernel whose sizes are symbols
// s0.. read off input 0, a stride-0 carrier of the call's sizes that the kernel never reads
// (iota's length is s0), so one kernel serves every shape of a key.
std::unique_ptr<Entry> build_sized(const EagerKey& key, const Tensor& carrier) {
  auto e = std::make_unique<Entry>();
  DriverOptions opts;
  std::vector<ir::Expr> sizes;
  for (size_t d = 0; d < key.rank(0); ++d) {
    sizes.push_back(ir::Expr::symbol(fmt::format("s{}", d)));
    opts.params.emplace(sizes.back().symbol_name(), ParamSource{0, static_cast<int>(d), false});
    opts.hints.emplace(sizes.back().symbol_name(), carrier.impl()->sizes()[d]);
  }
  auto g = std::make_shared<ir::Graph>();
  g->add_input(ir::TensorType(carrier.dtype(), sizes), "sizes");
  opts.input_strides.push_back(std::vector<ir::Expr>(sizes.size(), ir::Expr(0)));
  ir::AttrList attrs = key.attrs;
  const ir::OpSchema& schema = ir::op_info(key.op).schema;
  if (key.op == ir::OpKind::iota)
    attrs.values()[static_cast<size_t>(schema.attr_index("length"))] = sizes.at(0);
  else
    attrs.values()[static_cast<size_t>(schema.attr_index("size"))] = sizes;
  ir::Node* n = g->create(key.op, {}, attrs);
  g->add_output(n->output());
  e->exe = compile_entry(key, std::move(g), std::move(opts));
  return e;
}

std::shared_ptr<const Entry> lookup(Cache& c, const EagerKey& key) {
  std::shared_lock lock(c.mu);
  auto it = c.map.find(key);
  if (it == c.map.end()) return nullptr;
  it->second->touch();
  return it->second;
}

std::shared_ptr<const Entry> insert(Cache& c, const EagerKey& key, std::shared_ptr<const Entry> fresh) {
  std::unique_lock lock(c.mu);
  if (auto it = c.map.find(key); it != c.map.end()) return it->second;
  c.evicted.fetch_add(static_cast<int64_t>(make_room(c.map, c.order, g_capacity.load())));
  if (fresh->exe) c.built.fetch_add(1);
  c.order.push_back(key);
  return c.map.emplace(key, std::move(fresh)).first->second;
}

// A thread's recent lookups, direct-mapped by the key's hash, so that a warm eager op finds its
// kernel without taking the cache's lock or a reference count. Each slot owns its entry, so an
// entry evicted from the cache lives on while a thread's slot holds it. Only an op at nesting
// depth 0 writes a slot: an op that runs eager ops inside (a library kernel, a user's
// lowering) must not free the entry it is running.
struct RecentLookup {
  size_t hash = 0;
  std::shared_ptr<const Entry> entry;
  EagerKey key;
};
thread_local std::array<RecentLookup, 32> t_recent;
thread_local int t_depth = 0;

struct Nested {
  Nested() { ++t_depth; }
  ~Nested() { --t_depth; }
  Nested(const Nested&) = delete;
  Nested& operator=(const Nested&) = delete;
};

// The entry for `key`: owned by this thread's slot, or by `hold` when the slot may not change.
const Entry* lookup_recent(Cache& c, const EagerKey& key, std::shared_ptr<const Entry>& hold) {
  const size_t h = EagerKeyHash()(key);
  RecentLookup& r = t_recent[h % t_recent.size()];
  if (r.entry && r.hash == h && r.key == key) {
    r.entry->touch();
    return r.entry.get();
  }
  std::shared_ptr<const Entry> e = lookup(c, key);
  if (!e) return nullptr;
  if (t_depth > 0) {
    hold = std::move(e);
    return hold.get();
  }
  r = RecentLookup{h, std::move(e), key};
  return r.entry.get();
}

bool is_pointwise(ir::OpFamily f) {
  return f == ir::OpFamily::Unary || f == ir::OpFamily::Binary || f == ir::OpFamily::Ternary || f == ir::OpFamily::Cast;
}

// A pointwise prim on contiguous tensors of one shape computes the same elements in the same
// memory order on their 1-D views: it runs on those (one kernel per op and dtypes, not per rank,
// its one grid dim shared by the threads even when the leading dims are 1, its inner loop the
// whole tensor; a [1, 64, 56, 56] add 69 -> 18 us on 2 threads), and its outputs are viewed
// back in the inputs' shape. Empty when the inputs do not qualify.
std::vector<Tensor> flat_views(ir::OpKind op, const std::vector<Tensor>& inputs) {
  if (!is_pointwise(ir::op_info(op).family) || inputs.empty()) return {};
  const TensorImpl* first = inputs[0].impl();
  if (!first || first->sizes().size() < 2) return {};
  std::vector<Tensor> flat;
  for (const Tensor& t : inputs) {
    const TensorImpl* ti = t.impl();
    if (!ti || ti->is_traced() || !ti->storage() || ti->device() != first->device() || ti->sizes() != first->sizes() ||
        layout_of(*ti) != EagerLayout::Contiguous)
      return {};
    flat.emplace_back(make_intrusive<TensorImpl>(ti->storage(), ti->dtype(), IntArrayRef{ti->numel()}, IntArrayRef{1},
                                                 ti->storage_offset()));
  }
  return flat;
}

// The outputs of a flat_views call in the shape of `like`.
std::vector<Tensor> unflatten(std::vector<Tensor> outs, const TensorImpl& like) {
  const std::vector<int64_t> strides = contiguous_strides(like.sizes());
  for (Tensor& t : outs) {
    const TensorImpl* ti = t.impl();
    t = Tensor(make_intrusive<TensorImpl>(ti->storage(), ti->dtype(), like.sizes(), strides, ti->storage_offset()));
  }
  return outs;
}

// frontend/dispatch.h's EagerFastPath: a pointwise prim on tensors of one shape and device whose
// kernel is cached (its build ran the shape function on these dtypes and attributes).
bool eager_fast_path(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs,
                     std::vector<Tensor>& out) {
  if (!is_pointwise(ir::op_info(op).family) || inputs.empty() || !keyable(inputs)) return false;
  if (const std::vector<Tensor> flat = flat_views(op, inputs); !flat.empty()) {
    if (!eager_fast_path(op, flat, attrs, out)) return false;
    out = unflatten(std::move(out), *inputs[0].impl());
    return true;
  }
  const TensorImpl* first = inputs[0].impl();
  for (const Tensor& t : inputs) {
    const TensorImpl* ti = t.impl();
    if (!ti || ti->is_traced() || ti->device() != first->device() || ti->sizes() != first->sizes()) return false;
  }
  Cache& c = cache();
  std::shared_ptr<const Entry> hold;
  const Entry* e = lookup_recent(c, make_eager_key(op, inputs, attrs), hold);
  if (!e || !e->exe) return false;
  c.compiled_calls.fetch_add(1, std::memory_order_relaxed);
  const Nested nested;
  out = e->exe->run(inputs);
  return true;
}

// The kernel of build_sized for `op` with `attrs` on the carrier's device, run: its key holds
// the attributes but the sizes and those named in `per_call` (which the call supplies: a draw's
// seed and offset).
Tensor run_sized(Cache& c, ir::OpKind op, const ir::AttrList& attrs, const Tensor& carrier,
                 std::initializer_list<const char*> per_call) {
  const ir::OpSchema& schema = ir::op_info(op).schema;
  ir::AttrList key_attrs = attrs;
  if (op == ir::OpKind::iota)
    key_attrs.values()[static_cast<size_t>(schema.attr_index("length"))] = ir::Expr(0);
  else
    key_attrs.values()[static_cast<size_t>(schema.attr_index("size"))] = std::vector<ir::Expr>{};
  for (const char* name : per_call) key_attrs.values()[static_cast<size_t>(schema.attr_index(name))] = int64_t{0};
  const EagerKey key = make_eager_key(op, {carrier}, key_attrs);
  std::shared_ptr<const Entry> e = lookup(c, key);
  if (!e) e = insert(c, key, build_sized(key, carrier));
  c.compiled_calls.fetch_add(1, std::memory_order_relaxed);
  const Nested nested;
  return e->exe->run({carrier}).at(0);
}

// uniform / normal: the generated kernel of build_sized, drawing at the (seed, offset) the
// frontend op took. Its arguments are checked as the library kernel checks them.
Tensor eager_random(Cache& c, ir::OpKind op, const ir::AttrList& attrs, Device d) {
  const ir::OpSchema& schema = ir::op_info(op).schema;
  auto attr = [&](const char* name) -> const ir::AttrValue& { return attrs.values()[static_cast<size_t>(schema.attr_index(name))]; };
  const std::vector<int64_t> sizes = ir::to_ints(std::get<std::vector<ir::Expr>>(attr("size")));
  const ScalarType dtype = std::get<ScalarType>(attr("dtype"));
  const double a = std::get<double>(attr(op == ir::OpKind::uniform ? "low" : "mean"));
  const double b = std::get<double>(attr(op == ir::OpKind::uniform ? "high" : "std"));
  if (!is_floating_point(dtype)) fail(ir::op_name(op), "expected a floating point dtype, got {}", dtype_name(dtype));
  if (op == ir::OpKind::uniform && !(a <= b))
    fail("uniform", "expects to return a [from, to) range, but found from={} > to={}", a, b);
  if (op == ir::OpKind::normal && !(b >= 0.0)) fail("normal", "expects std >= 0.0, but found std {}", b);
  (void)checked_numel(ir::op_name(op), sizes);
  Tensor carrier;
  try {
    carrier = kiln::empty(std::vector<int64_t>(sizes.size(), 1), TensorOptions(dtype).device(d)).expand(sizes);
  } catch (const Error&) {
    // A device that is not there: the device's own eager path names the op and the reason.
    if (d.is_cuda() && g_device_eager) return g_device_eager(op, {}, attrs, d).at(0);
    throw;
  }
  const RandomDrawScope draws(std::get<int64_t>(attr("seed")), std::get<int64_t>(attr("offset")));
  return run_sized(c, op, attrs, carrier, {"seed", "offset"});  // the seed and offset are the call's
}

// full and iota as generated kernels, for a device whose runtime does not fill the memory
// itself (the cpu computes factories on the interpreter). full: one kernel per value and dtype.
// iota: iota(0, 1) in its dtype, else start + i * step from iota(0, 1) in int64 by eager ops
// (computed in int64, wrapping, for integer dtypes and in double for floating ones, as the
// interpreter computes it), so that aranges at moving starts share one kernel.
Tensor factory_kernel(Cache& c, ir::OpKind op, const ir::AttrList& attrs, Device d) {
  const ir::OpSchema& schema = ir::op_info(op).schema;
  auto attr = [&](const char* name) -> const ir::AttrValue& { return attrs.values()[static_cast<size_t>(schema.attr_index(name))]; };
  const ScalarType dtype = std::get<ScalarType>(attr("dtype"));
  (void)ir::infer_types(op, {}, attrs);  // the prim's own checks (iota refuses bool), whatever path runs it
  const auto make = [&](const std::vector<int64_t>& sizes, ScalarType t, const ir::AttrList& a) -> Tensor {
    (void)checked_numel(ir::op_name(op), sizes);
    const Tensor carrier = kiln::empty(std::vector<int64_t>(sizes.size(), 1), TensorOptions(t).device(d)).expand(sizes);
    return run_sized(c, op, a, carrier, {});
  };
  if (op == ir::OpKind::full) {
    const std::vector<int64_t> sizes = ir::to_ints(std::get<std::vector<ir::Expr>>(attr("size")));
    // The key compares values as numbers, so -0.0 would share 0.0's kernel: negate that one.
    const Scalar value = std::get<Scalar>(attr("value"));
    if (value.is_floating_point() && value.to_double() == 0.0 && std::signbit(value.to_double())) {
      ir::AttrList positive = attrs;
      positive.values()[static_cast<size_t>(schema.attr_index("value"))] = Scalar(0.0);
      return -make(sizes, dtype, positive);
    }
    return make(sizes, dtype, attrs);
  }
  const int64_t length = interp::sym_int(attr("length"));
  if (length < 0) fail("iota", "length must be non-negative, got {}", length);
  const Scalar start = std::get<Scalar>(attr("start")), step = std::get<Scalar>(attr("step"));
  const bool floating = is_floating_point(dtype);
  const bool unit = floating ? start.to_double() == 0.0 && step.to_double() == 1.0 : start.to_int() == 0 && step.to_int() == 1;
  ir::AttrList counts_attrs = attrs;
  counts_attrs.values()[static_cast<size_t>(schema.attr_index("start"))] = Scalar(int64_t{0});
  counts_attrs.values()[static_cast<size_t>(schema.attr_index("step"))] = Scalar(int64_t{1});
  if (unit) return make({length}, dtype, counts_attrs);
  counts_attrs.values()[static_cast<size_t>(schema.attr_index("dtype"))] = ScalarType::Int64;
  const Tensor counts = make({length}, ScalarType::Int64, counts_attrs);
  const Tensor v = floating ? counts.to(ScalarType::Double) * Scalar(step.to_double()) + Scalar(start.to_double())
                            : counts * Scalar(step.to_int()) + Scalar(start.to_int());
  return v.to(dtype);
}

// A factory on a device: full as the device's fill (a memset of the value's bit pattern) where
// it has one, else a generated kernel (factory_kernel). When that fails (a device that is not
// there, no NVRTC), the device's own eager path runs it: it names the op and the reason, or
// makes the tensor on the host and copies it over.
Tensor device_factory(Cache& c, ir::OpKind op, const ir::AttrList& attrs, Device d) {
  try {
    (void)ir::infer_types(op, {}, attrs);  // the prim's own checks, before any memset
    if (op == ir::OpKind::full && g_device_fill) {
      const ir::OpSchema& schema = ir::op_info(op).schema;
      auto attr = [&](const char* name) -> const ir::AttrValue& { return attrs.values()[static_cast<size_t>(schema.attr_index(name))]; };
      const std::vector<int64_t> sizes = ir::to_ints(std::get<std::vector<ir::Expr>>(attr("size")));
      (void)checked_numel("full", sizes);
      Tensor out = kiln::empty(sizes, TensorOptions(std::get<ScalarType>(attr("dtype"))).device(d));
      if (g_device_fill(out, std::get<Scalar>(attr("value")))) return out;
    }
    return factory_kernel(c, op, attrs, d);
  } catch (const Error&) {
    if (g_device_eager) return g_device_eager(op, {}, attrs, d).at(0);
    throw;
  }
}

// Where an eager op runs: its inputs' device, or a factory's device attribute.
Device eager_device(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs) {
  if (!inputs.empty()) return inputs[0].impl()->device();
  for (const ir::AttrValue& v : attrs.values())
    if (const auto* d = std::get_if<Device>(&v)) return *d;
  (void)op;
  return Device();
}

}  // namespace

// The frontend reaches eager execution through these hooks (frontend/dispatch.h).
// (Tensor::copy_'s kernel is runtime/cuda/cuda_copy.cpp's, which handles every device.)
void wire_eager() {
  install_eager_executor(&eager_execute);
  install_eager_fast_path(&eager_fast_path);
}

std::vector<Tensor> eager_execute(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs) {
  Cache& c = cache();
  const Device d = eager_device(op, inputs, attrs);
  // The op's implementation makes its temporaries where it runs, whatever default device a
  // decomposition around it set (frontend/tensor_options.h).
  std::optional<DefaultDeviceScope> scope;
  if (default_device() != d) scope.emplace(d);
  if (ir::op_info(op).family == ir::OpFamily::Random) return {eager_random(c, op, attrs, d)};
  if (d.is_cuda() && ir::op_info(op).family == ir::OpFamily::Factory) return {device_factory(c, op, attrs, d)};
  if (const std::vector<Tensor> flat = flat_views(op, inputs); !flat.empty())
    return unflatten(eager_execute(op, flat, attrs), *inputs[0].impl());
  const bool compiled = runs_compiled(op, inputs);
  // Where no compiled program runs the op: the device's own path (runtime/cuda/cuda_eager.cpp),
  // the cpu's library kernel (runtime/cpu/extern_kernels.h), or the interpreter.
  static const std::shared_ptr<const Backend> cpu = find_backend("cpu");
  auto uncompiled = [&]() -> std::vector<Tensor> {
    if (d.is_cuda()) {
      if (!g_device_eager) fail(ir::op_name(op), "cannot run on {}: kiln was built without its cuda runtime", d.str());
      c.compiled_calls.fetch_add(1, std::memory_order_relaxed);
      return g_device_eager(op, inputs, attrs, d);
    }
    if (LibraryKernel lib = cpu->library_kernel(op)) {
      std::vector<ir::TensorType> types;
      for (const Tensor& t : inputs) types.emplace_back(t.dtype(), ir::to_exprs(t.sizes().vec()), t.device());
      const ir::TensorType type = ir::infer_types(op, types, attrs).at(0);
      const std::vector<int64_t> out = ir::to_ints(type.sizes);
      (void)checked_numel(ir::op_name(op), out);  // an overflowing product names the op
      const Tensor r = empty(out, TensorOptions(type.dtype));
      lib.fn(inputs, attrs, {r});
      c.compiled_calls.fetch_add(1, std::memory_order_relaxed);
      return {r};
    }
    // A Core op that only a device runs whole (attention's backward): the cpu's compiled
    // program of it, as other composites run, or its decomposition.
    if (ir::op_info(op).level != ir::OpLevel::Prim) {
      const OpCall call{op, inputs, attrs};
      std::vector<Tensor> out;
      return run_eager_composite(call, out) ? out : run_composite_eager(call);
    }
    c.interpreted_calls.fetch_add(1, std::memory_order_relaxed);
    return interpret_op(op, inputs, attrs);
  };
  // A cpu prim with a library kernel calls it, except a duck-sized one (an index prim, an
  // integer product), which runs as its program: a kernel (an index prim with 0-dim operands,
  // which the frontend never records (frontend/ops_index_scatter.cpp): the same library inside
  // the program).
  const bool duck = compiled && duck_sized(op);
  if (!compiled || (!d.is_cuda() && !duck && cpu->library_kernel(op))) return uncompiled();
  const EagerKey key = make_eager_key(op, inputs, attrs);
  std::shared_ptr<const Entry> e = lookup(c, key);
  if (!e) e = insert(c, key, build(key, inputs));
  // No program: the shape function refused the key's symbolic sizes (it needs concrete ones).
  if (!e->exe) return uncompiled();
  c.compiled_calls.fetch_add(1, std::memory_order_relaxed);
  const Nested nested;
  return e->exe->run(inputs);
}

void install_device_eager(DeviceEager fn) { g_device_eager = fn; }

void install_device_fill(DeviceFill fn) { g_device_fill = fn; }

Tensor eager_copy_into(const Tensor& dst, const Tensor& src) {
  if (dst.sizes() != src.sizes() || dst.device() != src.device())
    internal_fail("eager_copy_into: dst {} on {} and src {} on {}", shape_str(dst.sizes()), dst.device().str(),
                  shape_str(src.sizes()), src.device().str());
  if (overlaps_itself(dst.sizes(), dst.strides())) internal_fail("eager_copy_into: dst {} with strides {} overlaps itself", shape_str(dst.sizes()), shape_str(dst.strides()));
  const ir::OpKind op = dst.dtype() == src.dtype() ? ir::OpKind::clone : ir::OpKind::convert_element_type;
  const ir::AttrList attrs = op == ir::OpKind::clone ? ir::AttrList() : ir::AttrList({ir::AttrValue(dst.dtype())});
  Cache& c = cache();
  const std::vector<Tensor> inputs{dst, src};
  // Two inputs: never the key of a clone or a cast of one tensor.
  const EagerKey key = make_eager_key(op, inputs, attrs);
  std::shared_ptr<const Entry> e = lookup(c, key);
  if (!e) e = insert(c, key, build_copy_into(key, inputs));
  c.compiled_calls.fetch_add(1, std::memory_order_relaxed);
  const Nested nested;
  return e->exe->run(inputs).at(0);
}

Tensor generated_factory(ir::OpKind op, const ir::AttrList& attrs, Device device) {
  return factory_kernel(cache(), op, attrs, device);
}

void set_eager_cache_capacity_for_testing(size_t kernels) { g_capacity = kernels ? kernels : kMaxEagerKernels; }

EagerStats eager_stats() {
  Cache& c = cache();
  const auto [programs, decomposed] = eager_composite_counts();
  return {c.built.load(), c.compiled_calls.load(), c.interpreted_calls.load(), programs, decomposed, c.evicted.load()};
}

}  // namespace kiln::rt
