// kiln/runtime/eager_composite.cpp — an eager composite op (softmax, layer_norm, gelu, ...)
// as one compiled program instead of its decomposition op by op.
//
// Outside compile(), dispatch() offers every composite and core op that has no library kernel
// to run_eager_composite before running its decomposition. The op becomes a compiled function
// of its tensor inputs (Dynamic::True: shape-generic from the first compile, guards for the
// relations its shape function needs), cached per (op, attributes, dtype, rank and layout
// class of each input), so an eager softmax is one fused kernel, as under compile(). An op is
// left to its decomposition when:
//  - its first call's result aliases an input (a view-like op must keep returning views; the
//    first call runs the decomposition and looks);
//  - it draws random numbers, is a custom op or has no tensor input;
//  - its trace meets a data-dependent op or its compilation fails (the decomposition then
//    raises the user's error, or runs);
//  - it is called from a composite's own eager fallback (no recursion).
#include "runtime/eager.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "frontend/dispatch.h"
#include "runtime/compile.h"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace kiln::rt {

namespace {

std::atomic<int64_t> g_programs{0}, g_decomposed{0};

thread_local int t_in_fallback = 0;  // > 0 while this thread runs a composite's decomposition

struct InFallback {
  InFallback() { ++t_in_fallback; }
  ~InFallback() { --t_in_fallback; }
  InFallback(const InFallback&) = delete;
  InFallback& operator=(const InFallback&) = delete;
};

constexpr size_t kMaxInputs = 8;

struct Key {
  ir::OpKind op;
  uint8_t n_inputs;
  std::array<uint16_t, kMaxInputs> inputs;  // rank << 8 | dtype << 2 | layout
  ir::AttrList attrs;
  bool operator==(const Key& o) const {
    return op == o.op && n_inputs == o.n_inputs && inputs == o.inputs && attrs == o.attrs;
  }
};

// Attributes are compared, not hashed: keys that differ only in them share a bucket.
struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = std::hash<int>()(static_cast<int>(k.op));
    for (size_t i = 0; i < k.n_inputs; ++i) h = h * 1000003u ^ k.inputs[i];
    return h;
  }
};

uint16_t input_code(const TensorImpl& t) {
  const unsigned layout = t.is_contiguous() ? 0u : (!t.sizes().empty() && t.strides().back() == 1) ? 1u : 2u;
  return static_cast<uint16_t>(t.sizes().size() << 8 | static_cast<unsigned>(t.dtype()) << 2 | layout);
}

enum class Mode : uint8_t { Unchecked, Compiled, Decompose };

struct Entry {
  std::mutex mu;
  Mode mode = Mode::Unchecked;
  std::shared_ptr<detail::CompiledState> state;
};

struct Cache {
  std::mutex mu;
  std::unordered_map<Key, std::shared_ptr<Entry>, KeyHash> map;
};

Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: compiled code may run during static destruction
  return *c;
}

bool shares_storage(const std::vector<Tensor>& outs, const std::vector<Tensor>& ins) {
  for (const Tensor& o : outs)
    for (const Tensor& i : ins)
      if (o.defined() && i.defined() && o.impl()->storage().get() == i.impl()->storage().get()) return true;
  return false;
}

std::shared_ptr<detail::CompiledState> new_state(ir::OpKind op) {
  CompileOptions opts;
  opts.dynamic = Dynamic::True;
  opts.fullgraph = true;  // a data-dependent op raises instead of warning and running eagerly
  opts.cache_size_limit = 64;
  opts.name = fmt::format("eager {}", ir::op_name(op));
  // A user's lowering of this op may run the op eagerly itself (as the prims' eager kernels,
  // these programs do without lowerings; eager ops never ran them).
  return detail::make_compiled_state(std::move(opts), /*use_lowerings=*/false);
}

enum class Ran : uint8_t { Program, Decomposition, Neither };
Ran try_program(const OpCall& call, std::vector<Tensor>& out);

// frontend/dispatch.h's EagerComposite.
bool run_eager_composite(const OpCall& call, std::vector<Tensor>& out) {
  const Ran ran = try_program(call, out);
  (ran == Ran::Program ? g_programs : g_decomposed).fetch_add(1, std::memory_order_relaxed);
  return ran != Ran::Neither;
}

// The call run as one compiled program; or, on the first call of a key, its decomposition (run
// here, to see whether it returns a view); or neither (dispatch then runs the decomposition).
Ran try_program(const OpCall& call, std::vector<Tensor>& out) {
  if (t_in_fallback > 0) return Ran::Neither;
  const ir::OpInfo& info = ir::op_info(call.op);
  if (info.has(ir::traits::Random) || info.family == ir::OpFamily::Custom) return Ran::Neither;
  if (call.inputs.empty() || call.inputs.size() > kMaxInputs) return Ran::Neither;
  Key key{call.op, static_cast<uint8_t>(call.inputs.size()), {}, call.attrs};
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const TensorImpl* t = call.inputs[i].impl();
    if (!t || !t->device().is_cpu() || t->is_traced() || t->sizes().size() > 255) return Ran::Neither;
    key.inputs[i] = input_code(*t);
  }
  std::shared_ptr<Entry> e;
  {
    Cache& c = cache();
    std::lock_guard lock(c.mu);
    std::shared_ptr<Entry>& slot = c.map[key];
    if (!slot) slot = std::make_shared<Entry>();
    e = slot;
  }
  {
    std::unique_lock lock(e->mu);
    if (e->mode == Mode::Decompose) return Ran::Neither;
    if (e->mode == Mode::Unchecked) {
      // The first call runs the decomposition and looks whether the op returns a view.
      {
        const InFallback guard;
        out = run_composite_eager(call);
      }
      if (shares_storage(out, call.inputs)) {
        e->mode = Mode::Decompose;
      } else {
        e->mode = Mode::Compiled;
        e->state = new_state(call.op);
      }
      return Ran::Decomposition;
    }
  }
  std::vector<detail::ArgValue> args(call.inputs.begin(), call.inputs.end());
  const detail::TraceFn trace = [&call](const std::vector<detail::ArgValue>& a) {
    std::vector<Tensor> ins;
    ins.reserve(a.size());
    for (const detail::ArgValue& v : a) ins.push_back(std::get<Tensor>(v));
    const InFallback guard;  // traced inputs record the op; eager ones (the limit) decompose
    return dispatch(OpCall{call.op, std::move(ins), call.attrs});
  };
  auto give_up = [&] {
    std::lock_guard lock(e->mu);
    if (detail::compiled_stats(*e->state).compiles == 0) e->mode = Mode::Decompose;
    return Ran::Neither;
  };
  // A data-dependent op, a shape the compiler cannot handle, or the user's own mistake: the
  // decomposition runs instead (and raises the user's error where there is one). An internal
  // error is a compiler bug the eager op must not inherit (one is known: lerp traced directly
  // on a stride-0 weight, whose shape function and decomposition disagree under symbolic
  // sizes; docs/compiler.md).
  try {
    out = detail::call_compiled(*e->state, args, trace);
    return Ran::Program;
  } catch (const Error&) {
    return give_up();
  } catch (const InternalError&) {
    return give_up();
  }
}

const bool installed = (install_eager_composite(&run_eager_composite), true);

}  // namespace

std::pair<int64_t, int64_t> eager_composite_counts() { return {g_programs.load(), g_decomposed.load()}; }

}  // namespace kiln::rt
