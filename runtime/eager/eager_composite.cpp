// kiln/runtime/eager/eager_composite.cpp — an eager composite op (softmax, layer_norm, gelu, ...)
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
//  - it draws random numbers (dropout too), is a custom op or has no tensor input;
//  - its trace meets a data-dependent op or its compilation fails (the decomposition then
//    raises the user's error, or runs);
//  - it is called from a composite's own eager fallback (no recursion).
// A call that discards some outputs (OpCall::unused_outputs: max_pool2d's indices) keys its own
// program, which leaves them out; they come back undefined.
#include "runtime/eager/eager.h"
#include "runtime/wiring.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "frontend/dispatch.h"
#include "runtime/compile/compile.h"
#include "runtime/cache_bound.h"
#include "runtime/eager/eager_key.h"

#include <fmt/format.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
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

enum class Mode : uint8_t { Unchecked, Compiled, Decompose };

// mode is read on every call without a lock; mu serializes the first call and the switch to
// Decompose. state is set once, before mode becomes Compiled.
struct Entry : UsedFlag {
  std::mutex mu;
  std::atomic<Mode> mode{Mode::Unchecked};
  std::shared_ptr<detail::CompiledState> state;
};

// At most kMaxCompositePrograms keys (runtime/cache_bound.h); a caller holds its entry.
constexpr size_t kMaxCompositePrograms = 1024;

struct Cache {
  std::shared_mutex mu;
  std::unordered_map<EagerKey, std::shared_ptr<Entry>, EagerKeyHash> map;
  std::vector<EagerKey> order;  // keys by insertion, for eviction
};

Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: compiled code may run during static destruction
  return *c;
}

std::shared_ptr<Entry> entry_for(const EagerKey& key) {
  Cache& c = cache();
  {
    std::shared_lock lock(c.mu);
    if (auto it = c.map.find(key); it != c.map.end()) {
      it->second->touch();
      return it->second;
    }
  }
  std::unique_lock lock(c.mu);
  if (auto it = c.map.find(key); it != c.map.end()) return it->second;
  make_room(c.map, c.order, kMaxCompositePrograms);
  c.order.push_back(key);
  return c.map.emplace(key, std::make_shared<Entry>()).first->second;
}

bool shares_storage(const std::vector<Tensor>& outs, const std::vector<Tensor>& ins) {
  for (const Tensor& o : outs)
    for (const Tensor& i : ins)
      if (o.defined() && i.defined() && o.impl()->storage().get() == i.impl()->storage().get()) return true;
  return false;
}

bool any_empty(const std::vector<Tensor>& outs) {
  for (const Tensor& o : outs)
    if (o.defined() && o.numel() == 0) return true;
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


// The call run as one compiled program; or, on the first call of a key, its decomposition (run
// here, to see whether it returns a view); or neither (dispatch then runs the decomposition).
Ran try_program(const OpCall& call, std::vector<Tensor>& out) {
  if (t_in_fallback > 0) return Ran::Neither;
  const ir::OpInfo& info = ir::op_info(call.op);
  // An op that draws (a random prim, or dropout with its (seed, offset) attributes) keeps its
  // own draw: a compiled program would reserve the generator's next offsets per call instead
  // (ir/exec_plan.h), so a replay after manual_seed would differ from the first run.
  if (info.has(ir::traits::Random) || info.family == ir::OpFamily::Dropout || info.family == ir::OpFamily::Custom)
    return Ran::Neither;
  if (call.inputs.empty() || !keyable(call.inputs)) return Ran::Neither;
  for (const Tensor& t : call.inputs)
    if (t.device() != call.inputs[0].device() || t.is_traced()) return Ran::Neither;
  EagerKey key = make_eager_key(call.op, call.inputs, call.attrs);
  key.unused_outputs = call.unused_outputs;
  const std::shared_ptr<Entry> e = entry_for(key);
  Mode mode = e->mode.load(std::memory_order_acquire);
  if (mode == Mode::Decompose) return Ran::Neither;
  if (mode == Mode::Unchecked) {
    std::unique_lock lock(e->mu);
    mode = e->mode.load(std::memory_order_acquire);
    if (mode == Mode::Decompose) return Ran::Neither;
    if (mode == Mode::Unchecked) {
      // The first call runs the decomposition and looks whether the op returns a view.
      {
        const InFallback guard;
        out = run_composite_eager(call);
      }
      // An empty result of an empty input tells nothing (softmax over an empty dim returns its
      // input as is): the key stays unchecked until a call with elements. An op whose result
      // is empty by its nature (native_batch_norm's statistics in evaluation) is judged on a
      // call whose inputs have elements, or it would never be compiled.
      if (any_empty(out) && any_empty(call.inputs)) return Ran::Decomposition;
      if (shares_storage(out, call.inputs)) {
        e->mode.store(Mode::Decompose, std::memory_order_release);
      } else {
        e->state = new_state(call.op);
        e->mode.store(Mode::Compiled, std::memory_order_release);
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
    std::vector<Tensor> all = dispatch(OpCall{call.op, std::move(ins), call.attrs});
    if (call.unused_outputs == 0) return all;
    std::vector<Tensor> used;
    for (size_t i = 0; i < all.size(); ++i)
      if (!(call.unused_outputs >> i & 1)) used.push_back(std::move(all[i]));
    return used;
  };
  auto give_up = [&] {
    std::lock_guard lock(e->mu);
    if (detail::compiled_stats(*e->state).compiles == 0) e->mode.store(Mode::Decompose, std::memory_order_release);
    return Ran::Neither;
  };
  // A data-dependent op, a shape the compiler cannot handle, or the user's own mistake: the
  // decomposition runs instead (and raises the user's error where there is one). An internal
  // error is a compiler bug the eager op must not inherit.
  try {
    out = detail::call_compiled(*e->state, args, trace);
    if (call.unused_outputs != 0) {  // the left-out outputs back in their places, undefined
      std::vector<Tensor> all;
      size_t next = 0;
      for (size_t i = 0; next < out.size() || (call.unused_outputs >> i) != 0; ++i)
        all.push_back(call.unused_outputs >> i & 1 ? Tensor() : std::move(out[next++]));
      out = std::move(all);
    }
    return Ran::Program;
  } catch (const Error&) {
    return give_up();
  } catch (const InternalError&) {
    return give_up();
  }
}

}  // namespace

// frontend/dispatch.h's EagerComposite.
bool run_eager_composite(const OpCall& call, std::vector<Tensor>& out) {
  const Ran ran = try_program(call, out);
  (ran == Ran::Program ? g_programs : g_decomposed).fetch_add(1, std::memory_order_relaxed);
  return ran != Ran::Neither;
}

void wire_eager_composite() { install_eager_composite(&run_eager_composite); }

std::pair<int64_t, int64_t> eager_composite_counts() { return {g_programs.load(), g_decomposed.load()}; }

}  // namespace kiln::rt
