// kiln/runtime/compile/compile.cpp — the compiled-function cache: guards, tracing, compiling, running.
//
// A call checks the entries' guard sets in order, without a lock (the fast path); the
// first that passes runs its Program. A miss takes the function's compile lock (so one thread
// compiles a new signature while others wait), looks again, then traces the callable on
// traced tensors, runs the pass pipeline, generates and links the kernels and appends the
// entry. Past cache_size_limit the function runs eagerly and warns once. A function whose trace
// reaches an op with a data-dependent result (nonzero, item(), ...) gets an eager entry for
// that signature instead: its guards are the static ones, and a hit calls the function as it
// is (a graph break of the whole function; CompileOptions::fullgraph refuses it).
#include "runtime/compile/compile.h"
#include "runtime/compile/compile_export.h"

#include "base/error.h"
#include "base/timing.h"
#include "frontend/tracer.h"
#include "frontend/ops_view.h"
#include "ir/graph_rebuild.h"
#include "ir/shape_env.h"
#include "ir/text.h"
#include "frontend/grad_mode.h"
#include "runtime/backend.h"
#include "runtime/compile/compiled_backward.h"
#include "runtime/pipeline.h"
#include "runtime/scratch.h"
#include "runtime/log.h"
#include "runtime/program.h"
#include "runtime/repro_hooks.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <type_traits>

namespace kiln::detail {

namespace {

// Whether the graph value `v`, the new contents of the graph input `input`, was only ever
// written under NoGradGuard: a chain of no_grad_copy writes from the input itself.
bool written_without_grad(const ir::Value* v, const ir::Value* input) {
  while (v != input) {
    if (!v->producer() || v->producer()->op() != ir::OpKind::no_grad_copy) return false;
    v = v->producer()->input(0);
  }
  return true;
}

// The guard view of a call's arguments, on the stack for up to kInline arguments (the warm
// path allocates nothing and initializes only the arguments it has).
class GuardView {
 public:
  explicit GuardView(const std::vector<ArgValue>& args) {
    guards::GuardArg* out = nullptr;
    if (args.size() > kInline) {
      heap_.resize(args.size());
      out = heap_.data();
      for (size_t i = 0; i < args.size(); ++i) out[i] = to_guard_arg(args[i]);
    } else {
      for (size_t i = 0; i < args.size(); ++i) {
        guards::GuardArg* p = std::construct_at(reinterpret_cast<guards::GuardArg*>(inline_) + i, to_guard_arg(args[i]));
        if (i == 0) out = p;
      }
    }
    view_ = {out, args.size()};
  }
  GuardView(const GuardView&) = delete;
  GuardView& operator=(const GuardView&) = delete;
  guards::GuardArgs args() const { return view_; }

  static guards::GuardArg to_guard_arg(const ArgValue& a) {
    switch (a.index()) {
      case 0: return std::get<Tensor>(a).impl();
      case 1: return std::get<int64_t>(a);
      case 2: return std::get<double>(a);
      default: return std::get<bool>(a);
    }
  }

 private:
  static constexpr size_t kInline = 16;
  static_assert(std::is_trivially_destructible_v<guards::GuardArg>);
  alignas(guards::GuardArg) unsigned char inline_[kInline * sizeof(guards::GuardArg)];
  std::vector<guards::GuardArg> heap_;
  guards::GuardArgs view_;
};

std::vector<Tensor> tensors_of(const std::vector<ArgValue>& args) {
  std::vector<Tensor> ts;
  for (const ArgValue& a : args)
    if (const Tensor* t = std::get_if<Tensor>(&a)) ts.push_back(*t);
  return ts;
}

std::string signature_str(const std::vector<ArgValue>& args) {
  std::string s;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) s += ", ";
    if (const Tensor* t = std::get_if<Tensor>(&args[i]))
      s += fmt::format("{}{}", dtype_short_name(t->dtype()), shape_str(t->sizes()));
    else if (const int64_t* v = std::get_if<int64_t>(&args[i])) s += std::to_string(*v);
    else if (const double* d = std::get_if<double>(&args[i])) s += fmt::format("{}", *d);
    else s += std::get<bool>(args[i]) ? "true" : "false";
  }
  return s;
}

// What a miss compares to find dims that changed size: everything about the arguments but
// their sizes (kinds, dtypes, devices, ranks, scalar values).
std::string meta_key(const std::vector<ArgValue>& args) {
  std::string k;
  for (const ArgValue& a : args) {
    if (const Tensor* t = std::get_if<Tensor>(&a))
      k += fmt::format("T{}:{}:{};", static_cast<int>(t->dtype()), t->device().str(), t->dim());
    else if (const int64_t* v = std::get_if<int64_t>(&a)) k += fmt::format("i{};", *v);
    else if (const double* d = std::get_if<double>(&a)) k += fmt::format("d{};", *d);
    else k += std::get<bool>(a) ? "b1;" : "b0;";
  }
  return k;
}

std::vector<std::vector<int64_t>> sizes_of(const std::vector<ArgValue>& args) {
  std::vector<std::vector<int64_t>> out;
  for (const ArgValue& a : args)
    if (const Tensor* t = std::get_if<Tensor>(&a)) out.push_back(t->impl()->sizes().vec());
    else out.emplace_back();
  return out;
}

std::vector<bool> requires_grad_of(const std::vector<ArgValue>& args) {
  std::vector<bool> out;
  for (const ArgValue& a : args)
    if (const Tensor* t = std::get_if<Tensor>(&a)) out.push_back(t->requires_grad());
  return out;
}

bool any_of(const std::vector<bool>& v) { return std::find(v.begin(), v.end(), true) != v.end(); }

// One compiled signature.
struct Entry {
  // What a call reads, together: the guards, the executable and what to pass and write back.
  guards::GuardSet guards;
  std::unique_ptr<rt::Executable> exe;       // what the backend made of the graph
  std::vector<Tensor> lifted;                // captured tensors, passed after the user's
  // In-place updates of arguments and captured tensors: (position among the executable's
  // inputs — tensor arguments, then lifted tensors —, extra graph output) pairs,
  // written back into the caller's tensors after each run; user outputs come first.
  std::vector<std::pair<size_t, size_t>> writebacks;
  size_t num_outputs = 0;
  int64_t kernels = 0;
  // Non-empty: the trace reached a data-dependent op (this message) and a call runs the
  // function eagerly; `exe` is null.
  std::string eager_reason;
  // KILN_VERIFY / KILN_REPRO_DIR (runtime/repro_hooks.h): the traced graph before the passes.
  std::shared_ptr<const ir::Graph> traced;
  // What a miss compares (automatic dynamic).
  std::string meta;                           // meta_key of the arguments it was traced with
  std::vector<std::vector<int64_t>> sizes;    // their sizes (per argument; empty for scalars)
  // Inspection (explain / debug dumps): the stages, their timings and texts.
  rt::Compilation comp;
  double trace_ms = 0;
  // requires_grad of the tensor arguments and the captured tensors when traced; `training`: the
  // entry of a call under grad mode on which some of them require grad, which runs a compiled
  // forward and backward (runtime/compile/compiled_backward.h) instead of `exe`.
  std::vector<bool> arg_grad, lifted_grad;
  std::shared_ptr<const rt::TrainingProgram> training;
  std::string guards_text;
  std::string symbols_text;  // "s0 = a.size(0) = b.size(0) (hint 37)" per symbol
};

// Whether entry e serves a call in grad mode `grad`: outside grad mode, an inference entry; in
// it, an inference entry when no argument or captured tensor requires grad (the common case,
// checked first: one load per tensor), else a training entry traced with the same requires_grad
// flags. An eager entry serves every call.
bool grad_state_matches(const Entry& e, const std::vector<ArgValue>& args, bool grad) {
  if (!e.eager_reason.empty()) return true;
  if (!grad) return !e.training;
  if (!e.training) {
    for (const ArgValue& a : args)
      if (const Tensor* t = std::get_if<Tensor>(&a); t && t->impl()->requires_grad()) return false;
    for (const Tensor& t : e.lifted)
      if (t.impl()->requires_grad()) return false;
    return true;
  }
  size_t k = 0;
  for (const ArgValue& a : args)
    if (const Tensor* t = std::get_if<Tensor>(&a)) {
      if (k >= e.arg_grad.size() || t->impl()->requires_grad() != e.arg_grad[k]) return false;
      ++k;
    }
  for (size_t j = 0; j < e.lifted.size(); ++j)
    if (j >= e.lifted_grad.size() || e.lifted[j].impl()->requires_grad() != e.lifted_grad[j]) return false;
  return true;
}

// A crash (not a user error) compiling or running `traced`: writes a repro of the graph and
// these inputs (runtime/repro_hooks.h) and rethrows with its directory appended (an
// InternalError again: its "internal error: " prefix is not repeated); without a repro
// directory, rethrows the error as it is.
[[noreturn]] void rethrow_with_repro(const std::exception& err, const std::string& fn, const ir::Graph& traced,
                                     const std::vector<Tensor>& inputs, const std::string& what) {
  const std::string dir = rt::write_failure_repro(fn, traced, inputs, fmt::format("{}: {}", what, err.what()));
  if (dir.empty()) throw;
  std::string msg = err.what();
  const std::string_view prefix = "internal error: ";
  if (msg.rfind(prefix, 0) == 0) msg.erase(0, prefix.size());
  throw InternalError(fmt::format("{} (compiled function '{}'; repro: {})", msg, fn, dir));
}

// A compiled function's entries, append-only: a call walks them without a lock (an entry, once
// published, never changes or goes away while its function lives); appends happen under the
// function's compile lock, so there is one writer at a time.
class EntryList {
 public:
  EntryList() = default;
  EntryList(const EntryList&) = delete;
  EntryList& operator=(const EntryList&) = delete;
  ~EntryList() {
    for (Node* n = head_.load(std::memory_order_relaxed); n != nullptr;) delete std::exchange(n, n->next.load());
  }

  // The first entry for which pred holds, or null.
  template <typename Pred> const Entry* find(Pred&& pred) const {
    for (const Node* n = head_.load(std::memory_order_acquire); n != nullptr; n = n->next.load(std::memory_order_acquire))
      if (pred(*n->entry)) return n->entry.get();
    return nullptr;
  }
  // Under the compile lock only:
  void append(std::shared_ptr<const Entry> e) {
    Node* n = new Node{std::move(e), {nullptr}};
    (tail_ ? tail_->next : head_).store(n, std::memory_order_release);
    tail_ = n;
    ++size_;
  }
  size_t size() const { return size_; }
  const Entry* back() const { return tail_ ? tail_->entry.get() : nullptr; }

 private:
  struct Node {
    std::shared_ptr<const Entry> entry;
    std::atomic<Node*> next;
  };
  std::atomic<Node*> head_{nullptr};
  Node* tail_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

class CompiledState {
 public:
  explicit CompiledState(CompileOptions o)
      : opts(std::move(o)), backend(rt::find_backend(opts.backend)), traces_graphs(backend->traces()) {
    if (opts.cache_size_limit < 0) fail("compile", "cache_size_limit must be >= 0, got {}", opts.cache_size_limit);
  }

  std::unique_ptr<Entry> build(const std::vector<ArgValue>& args, const TraceFn& fn, bool inspect);
  // build's steps (in order).
  struct InputTypes {
    guards::SymbolicInputs sym;
    std::vector<ir::TensorType> types;
    std::map<std::string, rt::ParamSource> sources;  // symbol -> where a call reads it
  };
  InputTypes input_types(const std::vector<ArgValue>& args, const std::vector<std::string>& names,
                         ir::ShapeEnv& env) const;
  std::optional<TracedProgram> trace(const std::vector<ArgValue>& args, const TraceFn& fn, const InputTypes& in,
                                     std::vector<Tensor>& traced_args, std::string* eager_reason) const;
  rt::DriverOptions driver_options(const std::vector<ArgValue>& args, const TracedProgram& tp, const InputTypes& in,
                                   const ir::ShapeEnv& env, bool inspect) const;
  const rt::Backend& pick_backend(const rt::DriverOptions& d) const;
  void compile_entry(Entry& e, const TracedProgram& tp, const std::vector<ArgValue>& args, const rt::Backend& be,
                     rt::DriverOptions d) const;
  void record_compile(const Entry& e, double total_ms);
  void build_training(Entry& e, const std::vector<ArgValue>& args, const TraceFn& fn,
                      const std::vector<std::string>& names, ir::ShapeEnv& env, InputTypes& in, bool inspect,
                      std::chrono::steady_clock::time_point t0);
  // The entry of a signature whose trace reached a data-dependent op: static guards, no executable.
  std::unique_ptr<Entry> eager_entry(std::unique_ptr<Entry> e, const std::vector<ArgValue>& args,
                                     const std::vector<std::string>& names, std::string reason);
  const std::string& backend_name() const { return backend->name(); }
  // Under Dynamic::Auto: the dims whose size differs from an entry traced with otherwise equal
  // arguments become dynamic for this and later compiles; returns their names.
  std::vector<std::string> note_changed_sizes(const std::vector<ArgValue>& args);
  bool is_dynamic(const std::vector<ArgValue>& args, size_t arg, size_t dim) const;
  std::string arg_name(size_t i) const {
    return i < opts.arg_names.size() && !opts.arg_names[i].empty() ? opts.arg_names[i] : fmt::format("arg{}", i);
  }
  std::vector<Tensor> run(const Entry& e, const std::vector<ArgValue>& args, const TraceFn& fn) const;

  CompileOptions opts;
  std::shared_ptr<const rt::Backend> backend;
  std::shared_ptr<const rt::Backend> cuda_backend = rt::find_backend("cuda");
  bool traces_graphs;  // backend->traces(), read on every call
  // Whether users' registered lowerings apply (false for kiln's eager composites, whose
  // programs a user's extern call may itself run eagerly).
  bool use_lowerings = true;
  // Kernel backends: the machine the kernels are scheduled for, instead of this host (an
  // exported program's x86-64 levels: compile_for_export).
  std::optional<passes::ScheduleTarget> schedule_target;
  bool plan_only = false;  // plan without compiling the kernels (export_program compiles them per target)
  EntryList entries;
  std::mutex compile_mu;
  std::atomic<int64_t> traces{0}, compiles{0}, hits{0}, misses{0}, kernels{0};
  std::atomic<int64_t> code_from_memory{0}, code_from_disk{0}, code_from_remote{0};
  bool warned_limit = false;
  std::set<std::pair<size_t, size_t>> auto_dynamic;  // (argument, dim), under compile_mu
};

std::vector<std::string> CompiledState::note_changed_sizes(const std::vector<ArgValue>& args) {
  std::vector<std::string> added;
  if (opts.dynamic != Dynamic::Auto) return added;
  const std::string meta = meta_key(args);
  const auto now = sizes_of(args);
  entries.find([&](const Entry& e) {
    if (e.meta != meta) return false;
    for (size_t i = 0; i < now.size(); ++i)
      for (size_t d = 0; d < now[i].size(); ++d)
        if (now[i][d] != e.sizes[i][d] && auto_dynamic.insert({i, d}).second)
          added.push_back(fmt::format("{}.size({})", arg_name(i), d));
    return false;  // every entry
  });
  return added;
}

bool CompiledState::is_dynamic(const std::vector<ArgValue>& args, size_t arg, size_t dim) const {
  const TensorImpl& impl = *std::get<Tensor>(args[arg]).impl();
  if (impl.sizes()[dim] < 2 || !impl.is_contiguous()) return false;  // 0/1 specialization; see docs
  const uint64_t bit = uint64_t{1} << std::min<size_t>(dim, 63);
  if (impl.marked_static() & bit) return false;
  if (impl.marked_dynamic() & bit) return true;
  switch (opts.dynamic) {
    case Dynamic::True: return true;
    case Dynamic::False: return false;
    case Dynamic::Auto: return auto_dynamic.count({arg, dim}) != 0;
  }
  return false;
}

// ---- CompiledState::build, step by step ------------------------------------------------------

// The input types of a new entry: a symbol for every dynamic dim (ShapeEnv, duck-sized), else
// the size, and where a call reads each symbol.
CompiledState::InputTypes CompiledState::input_types(const std::vector<ArgValue>& args,
                                                     const std::vector<std::string>& names, ir::ShapeEnv& env) const {
  InputTypes in;
  in.sym.env = &env;
  // A 0-dim cpu tensor beside cuda tensors joins their ops as a scalar, as in eager ops (and
  // PyTorch): traced on that device, moved there by the cuda backend's executable on each call
  // (a user's backend gets the graph's devices as they are). Its guards keep the cpu. A result
  // computed from it alone is on the device, where eager would leave it on the cpu.
  std::optional<Device> program_device;
  if (opts.backend.empty() || opts.backend == "cuda")
    for (const ArgValue& a : args)
      if (const Tensor* t = std::get_if<Tensor>(&a); t && t->defined() && t->device().is_cuda()) {
        program_device = t->device();
        break;
      }
  for (size_t i = 0; i < args.size(); ++i) {
    const Tensor* t = std::get_if<Tensor>(&args[i]);
    if (!t) continue;
    const Device device = program_device && t->device().is_cpu() && t->dim() == 0 ? *program_device : t->device();
    std::vector<ir::Expr> sizes;
    for (size_t d = 0; d < static_cast<size_t>(t->dim()); ++d) {
      const int64_t n = t->impl()->sizes()[d];
      if (!is_dynamic(args, i, d)) {
        sizes.emplace_back(n);
        continue;
      }
      ir::Expr s = env.create_symbol(n, fmt::format("{}.size({})", names[i], d));
      in.sources.emplace(s.symbol_name(), rt::ParamSource{static_cast<int>(in.types.size()), static_cast<int>(d), false});
      sizes.push_back(s);
    }
    in.sym.sizes.push_back(sizes);
    in.types.emplace_back(t->dtype(), sizes, device);
  }
  return in;
}

// Traces fn on stand-ins of the tensor arguments (scalars are passed as they are). A
// data-dependent op gives nullopt and its message in *eager_reason (the entry then runs fn
// eagerly), unless fullgraph is set; other errors name the function and signature.
std::optional<TracedProgram> CompiledState::trace(const std::vector<ArgValue>& args, const TraceFn& fn,
                                                  const InputTypes& in, std::vector<Tensor>& traced_args,
                                                  std::string* eager_reason) const {
  try {
    return trace_types(
        [&](const std::vector<Tensor>& traced) {
          traced_args = traced;
          std::vector<ArgValue> targs = args;
          size_t k = 0;
          for (ArgValue& a : targs)
            if (std::holds_alternative<Tensor>(a)) a = traced.at(k++);
          return fn(targs);
        },
        in.types);
  } catch (const DataDependentError& err) {
    if (opts.fullgraph)
      throw DataDependentError(fmt::format("{}\n  (while tracing compiled function '{}' called with ({}); fullgraph is set, "
                                           "so it cannot run eagerly)", err.what(), opts.name, signature_str(args)));
    *eager_reason = err.what();
    return std::nullopt;
  } catch (const Error& err) {
    throw Error(fmt::format("{}\n  (while tracing compiled function '{}' called with ({}))", err.what(), opts.name,
                            signature_str(args)));
  }
}

// An argument updated in place (a.add_(1)) was rebound to a new value by the tracer: that value
// becomes an extra output, copied back into the caller's tensor after each run. So is a
// captured tensor updated in place (running statistics); it is passed after the arguments.
void record_writebacks(Entry& e, TracedProgram& tp, const std::vector<Tensor>& traced_args) {
  e.num_outputs = tp.graph->outputs().size();
  for (size_t k = 0; k < traced_args.size(); ++k) {
    ir::Value* now = traced_args[k].impl()->value();
    if (now != tp.graph->inputs().at(k)) {
      e.writebacks.push_back({k, tp.graph->outputs().size()});
      tp.graph->add_output(now);
    }
  }
  for (const auto& [k, now] : tp.lifted_updates) {
    e.writebacks.push_back({traced_args.size() + k, tp.graph->outputs().size()});
    tp.graph->add_output(now);
  }
  e.lifted = tp.lifted;
}

// Symbols the trace's guards pin to one value (a shape check decided `s1 == 512`): every call
// the entry serves has that size.
std::map<std::string, ir::Expr> pinned_symbols(const ir::ShapeEnv& env) {
  std::map<std::string, ir::Expr> out;
  for (const ir::Expr& g : env.guards()) {
    if (g.kind() != ir::ExprKind::Eq) continue;
    const ir::Expr& a = g.operands()[0];
    const ir::Expr& b = g.operands()[1];
    if (a.is_symbol() && b.is_const()) out.emplace(a.symbol_name(), b);
    else if (b.is_symbol() && a.is_const()) out.emplace(b.symbol_name(), a);
  }
  return out;
}

// The graph with its pinned symbols as the constants they are (after record_writebacks, which
// turned value pointers into output positions; a rebuild keeps inputs and outputs in order), so
// that the compiler proves what a symbol would hide: a scatter's index within self, a split
// that divides. The guards still check the sizes.
void specialize_pinned(TracedProgram& tp, const std::map<std::string, ir::Expr>& pinned) {
  if (pinned.empty()) return;
  ir::RebuildSpec spec;
  spec.keep_all_inputs = true;
  for (size_t i = 0; i < tp.graph->inputs().size(); ++i) {
    ir::TensorType t = tp.graph->inputs()[i]->type();
    bool changed = false;
    for (ir::Expr& e : t.sizes) {
      const ir::Expr c = e.is_const() ? e : e.substitute(pinned);
      changed = changed || !(c == e);
      e = c;
    }
    if (changed) spec.input_types[i] = t;
  }
  if (spec.input_types.empty()) return;
  tp.graph = std::shared_ptr<ir::Graph>(ir::rebuild_graph(*tp.graph, spec).graph.release());
  tp.lifted_updates.clear();  // pointers into the old graph, already recorded as output positions
}

// What the compile driver needs to know: names, symbols and their hints, example inputs and
// their strides, which texts to keep, the device.
rt::DriverOptions CompiledState::driver_options(const std::vector<ArgValue>& args, const TracedProgram& tp,
                                                const InputTypes& in, const ir::ShapeEnv& env, bool inspect) const {
  rt::DriverOptions d;
  d.name = opts.name;
  d.cuda_graphs = opts.cuda_graphs;
  d.use_lowerings = use_lowerings;
  d.schedule_target = schedule_target;
  d.stop_before_compile = plan_only;
  d.keep_text = inspect || rt::log_enabled(rt::LogChannel::Decomp) || rt::log_enabled(rt::LogChannel::Fusion);
  d.want_code = inspect;
  if (rt::debug_dir_enabled()) d.dump_dir = rt::debug_dump_dir(opts.name);
  d.params = in.sources;
  d.hints = env.hints();  // for performance choices only (e.g. splitting a big reduction)
  d.example_inputs = tensors_of(args);
  d.example_inputs.insert(d.example_inputs.end(), tp.lifted.begin(), tp.lifted.end());
  // Kernels read the inputs with the strides they have now (the guards pin them); inputs with
  // symbolic sizes are contiguous (guarded), so their strides follow from the sizes.
  for (size_t k = 0; k < d.example_inputs.size(); ++k) {
    const Tensor& t = d.example_inputs[k];
    const bool symbolic = k < in.types.size() && !ir::all_const(in.types[k].sizes);
    d.input_strides.push_back(symbolic ? ir::contiguous_strides(in.types[k].sizes) : ir::to_exprs(t.strides().vec()));
  }
  for (const Tensor& t : d.example_inputs)
    if (t.defined() && t.device().is_cuda()) {
      d.device = t.device();
      break;
    }
  return d;
}

// Without a named backend, the inputs' device picks it: "cuda" for cuda tensors (captured ones
// included), else "cpu". The guards pin every input's device; kiln's host backends read their
// inputs' memory on the cpu.
const rt::Backend& CompiledState::pick_backend(const rt::DriverOptions& d) const {
  const rt::Backend* be = backend.get();
  if (d.device.is_cuda() && opts.backend.empty()) be = cuda_backend.get();
  if (d.device.is_cuda() && (be->name() == "cpu" || be->name() == "interpreter"))
    fail("compile", "function '{}': backend '{}' runs on the cpu, but an input is on {}; move the inputs with "
         ".cpu() or compile for the \"cuda\" backend", opts.name, be->name(), d.device.str());
  return *be;
}

// compile_graph; a crash (not a user error) writes a repro of the traced graph when the repro
// hooks are on (runtime/repro_hooks.h) and names its directory.
void CompiledState::compile_entry(Entry& e, const TracedProgram& tp, const std::vector<ArgValue>& args,
                                  const rt::Backend& be, rt::DriverOptions d) const {
  try {
    e.comp = rt::compile_graph(tp.graph, be, std::move(d));
  } catch (const Error&) {
    throw;  // the user's mistake: nothing to reproduce
  } catch (const std::exception& err) {
    if (!e.traced) throw;
    std::vector<Tensor> inputs = tensors_of(args);
    inputs.insert(inputs.end(), tp.lifted.begin(), tp.lifted.end());
    rethrow_with_repro(err, opts.name, *e.traced, inputs, fmt::format("{} failed to compile", backend_name()));
  }
  if (!e.comp.status.ok() && !plan_only)
    fail("compile", "function '{}': {}{}", opts.name, e.comp.status.error,
         e.comp.status.log.empty() ? "" : "\n" + e.comp.status.log);
  e.exe = std::move(e.comp.status.exe);
  e.comp.opts.example_inputs.clear();  // the entry must not keep the caller's tensors alive
  e.kernels = e.exe ? e.exe->kernels() : static_cast<int64_t>(e.comp.plan.kernels().size());  // plan_only: none
}

// The guards, last: decomposition may decide (and so guard) more about the symbols.
void guard_entry(Entry& e, const std::vector<ArgValue>& args, const std::vector<std::string>& names,
                 guards::SymbolicInputs& sym, const ir::ShapeEnv& env) {
  e.guards = guards::GuardSet::from_args(GuardView(args).args(), names, &sym);
  e.guards_text = e.guards.str();
  for (const ir::SymbolInfo& si : env.symbols()) {
    e.symbols_text += si.name;
    for (const std::string& src : si.sources) e.symbols_text += " = " + src;
    e.symbols_text += fmt::format(" (hint {})\n", si.hint);
  }
}

// The counters compile_stats() reports, and the logs a compile writes (KILN_LOG, KILN_DEBUG_DIR).
void CompiledState::record_compile(const Entry& e, double total_ms) {
  compiles.fetch_add(1);
  if (e.comp.code_source) {
    switch (*e.comp.code_source) {
      case CodeSource::Compiled: break;
      case CodeSource::Memory: code_from_memory.fetch_add(1); break;
      case CodeSource::Disk: code_from_disk.fetch_add(1); break;
      case CodeSource::Remote: code_from_remote.fetch_add(1); break;
    }
  }
  // A training entry compiled two programs: each is logged, named.
  std::vector<std::pair<std::string, const rt::Compilation*>> comps;
  if (e.training) {
    comps = {{opts.name + " (forward)", &e.training->forward_comp}, {opts.name + " (backward)", &e.training->backward_comp}};
  } else {
    comps = {{opts.name, &e.comp}};
  }
  for (const auto& [name, c] : comps) {
    KILN_LOG_IF(rt::LogChannel::Decomp, "{}: decomposed graph\n{}", name, c->text("decompose"));
    KILN_LOG_IF(rt::LogChannel::Fusion, "{}: plan\n{}", name, c->text("plan"));
  }
  if (rt::log_enabled(rt::LogChannel::Perf)) {
    std::string parts;
    for (const auto& [name, c] : comps)
      for (const rt::StageRecord& st : c->stages)
        if (st.ms >= 0.05) parts += fmt::format(", {} {:.2f}", st.name, st.ms);
    rt::log(rt::LogChannel::Perf, fmt::format("{}: compiled in {:.2f} ms (trace {:.2f}{}), {} kernels{}", opts.name,
                                              total_ms, e.trace_ms, parts, e.kernels,
                                              e.comp.code_source ? fmt::format(", code {}", code_source_name(*e.comp.code_source)) : ""));
  }
  KILN_LOG_IF(rt::LogChannel::Guards, "{}: guards of the new entry\n{}", opts.name, e.guards_text);
  if (!e.comp.opts.dump_dir.empty()) rt::debug_dump(e.comp.opts.dump_dir, "guards.txt", e.guards_text);
}

// A new entry for a signature no entry accepts, as named steps: the input types, the trace,
// the write-backs, the compile and the guards.
std::unique_ptr<Entry> CompiledState::build(const std::vector<ArgValue>& args, const TraceFn& fn, bool inspect) {
  auto e = std::make_unique<Entry>();
  e->meta = meta_key(args);
  e->sizes = sizes_of(args);
  std::vector<std::string> names;
  for (size_t i = 0; i < args.size(); ++i) names.push_back(arg_name(i));
  ir::ShapeEnv env;
  ir::ShapeEnvScope env_scope(&env);
  InputTypes in = input_types(args, names, env);

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Tensor> traced_args;
  std::string eager_reason;
  std::optional<TracedProgram> tp = trace(args, fn, in, traced_args, &eager_reason);
  if (!tp) return eager_entry(std::move(e), args, names, std::move(eager_reason));
  e->trace_ms = ms_since(t0);
  traces.fetch_add(1);
  e->arg_grad = requires_grad_of(args);
  for (const Tensor& t : tp->lifted) e->lifted_grad.push_back(t.requires_grad());
  if (GradMode::is_enabled() && (any_of(e->arg_grad) || any_of(e->lifted_grad))) {
    build_training(*e, args, fn, names, env, in, inspect, t0);
    return e;
  }
  record_writebacks(*e, *tp, traced_args);
  KILN_LOG_IF(rt::LogChannel::Graph, "{}: traced graph\n{}", opts.name, ir::print_graph(*tp->graph, &env));
  if (rt::repro_hooks_enabled()) e->traced = ir::parse_graph(ir::print_graph(*tp->graph));

  const std::map<std::string, ir::Expr> pinned = pinned_symbols(env);
  specialize_pinned(*tp, pinned);
  rt::DriverOptions d = driver_options(args, *tp, in, env, inspect);
  for (std::vector<ir::Expr>& strides : d.input_strides)
    for (ir::Expr& e : strides) e = e.is_const() ? e : e.substitute(pinned);
  // Updated inputs may be computed in their own memory (passes/donate.h); not when every run is
  // checked against the interpreter, which reads the inputs afterwards.
  if (!rt::config().verify)
    for (const auto& [input, out] : e->writebacks)
      d.donations.push_back({static_cast<int>(input), static_cast<int>(out)});
  const rt::Backend& be = pick_backend(d);
  compile_entry(*e, *tp, args, be, std::move(d));
  guard_entry(*e, args, names, in.sym, env);
  record_compile(*e, ms_since(t0));
  return e;
}

// A training entry: the joint forward-and-backward trace (the first trace, of the forward
// alone, told which captured tensors require grad), partitioned and compiled in two programs.
void CompiledState::build_training(Entry& e, const std::vector<ArgValue>& args, const TraceFn& fn,
                                   const std::vector<std::string>& names, ir::ShapeEnv& env, InputTypes& in, bool inspect,
                                   std::chrono::steady_clock::time_point t0) {
  rt::JointInfo info;
  auto on_tensors = [&](const std::vector<Tensor>& traced) {
    std::vector<ArgValue> targs = args;
    size_t k = 0;
    for (ArgValue& a : targs)
      if (std::holds_alternative<Tensor>(a)) a = traced.at(k++);
    return fn(targs);
  };
  auto joint = rt::joint_trace_fn(on_tensors, e.arg_grad, &info);
  const TraceFn joint_fn = [&](const std::vector<ArgValue>& targs) { return joint(tensors_of(targs)); };
  std::vector<Tensor> traced_args;
  std::string eager_reason;
  std::optional<TracedProgram> tp = trace(args, joint_fn, in, traced_args, &eager_reason);
  if (!tp) fail("compile", "function '{}': {}", opts.name, eager_reason);
  record_writebacks(e, *tp, traced_args);  // (one trace counted per entry: the first's)
  // In-place updates (a batch norm's running statistics) are forward outputs copied back; one
  // into a tensor that requires grad would change what the backward differentiates, unless
  // every write into it was made under NoGradGuard (an optimizer's step inside the function),
  // which keeps the tensor's place for the gradient (no_grad_copy).
  std::vector<std::pair<size_t, const ir::Value*>> updates;
  const std::vector<Tensor> targets = [&] {
    std::vector<Tensor> t = tensors_of(args);
    t.insert(t.end(), tp->lifted.begin(), tp->lifted.end());
    return t;
  }();
  for (const auto& [input, out] : e.writebacks) {
    if (targets.at(input).requires_grad() &&
        !written_without_grad(tp->graph->outputs().at(out), tp->graph->inputs().at(input)))
      fail("compile", "function '{}' writes in place into a tensor that requires grad ({}); a compiled training step "
                      "may update buffers in place, not tensors it differentiates", opts.name,
           input < traced_args.size() ? arg_name(input) : "a captured tensor");
    updates.emplace_back(input, tp->graph->outputs().at(out));
  }
  e.writebacks.clear();
  e.trace_ms = ms_since(t0);
  KILN_LOG_IF(rt::LogChannel::Graph, "{}: joint graph\n{}", opts.name, ir::print_graph(*tp->graph, &env));
  rt::DriverOptions d = driver_options(args, *tp, in, env, inspect);
  const rt::Backend& be = pick_backend(d);
  e.comp.opts.dump_dir = d.dump_dir;  // guards.txt beside the joint graph and the partition
  e.training =
      rt::build_training(tp->graph, std::move(info), tensors_of(args).size(), tp->lifted, updates, be, std::move(d));
  e.num_outputs = e.training->joint.num_outputs;
  e.kernels = e.training->forward->kernels() + e.training->backward->kernels();
  guard_entry(e, args, names, in.sym, env);
  record_compile(e, ms_since(t0));
}

std::unique_ptr<Entry> CompiledState::eager_entry(std::unique_ptr<Entry> e, const std::vector<ArgValue>& args,
                                                  const std::vector<std::string>& names, std::string reason) {
  traces.fetch_add(1);
  e->eager_reason = std::move(reason);
  e->guards = guards::GuardSet::from_args(GuardView(args).args(), names);
  e->guards_text = e->guards.str();
  rt::warn(fmt::format("compiled function '{}' runs eagerly for ({}): {}", opts.name, signature_str(args), e->eager_reason));
  return e;
}

// A call's input list, leased per thread and nesting depth (runtime/scratch.h): no allocation
// on a warm call.
namespace {
struct CallInputs {
  std::vector<Tensor> v;
  void drop_references() { v.clear(); }
};
}  // namespace

std::vector<Tensor> CompiledState::run(const Entry& e, const std::vector<ArgValue>& args, const TraceFn& fn) const {
  if (e.training) {
    std::vector<Tensor> inputs = tensors_of(args);
    inputs.insert(inputs.end(), e.lifted.begin(), e.lifted.end());
    return rt::run_training(e.training, inputs);
  }
  if (!e.exe) return fn(args);  // an eager entry
  const rt::ScratchLease<CallInputs> lease;
  std::vector<Tensor>& inputs = (*lease).v;
  for (const ArgValue& a : args)
    if (const Tensor* t = std::get_if<Tensor>(&a)) inputs.push_back(*t);
  inputs.insert(inputs.end(), e.lifted.begin(), e.lifted.end());
  std::vector<Tensor> outs;
  try {
    outs = e.exe->run(inputs);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& err) {
    if (!e.traced) throw;
    rethrow_with_repro(err, opts.name, *e.traced, inputs, fmt::format("{} failed to run", backend_name()));
  }
  if (e.traced && backend_name() != "interpreter" && rt::config().verify) rt::verify_outputs(opts.name, *e.traced, inputs, outs);
  if (e.writebacks.empty()) return outs;
  for (const auto& [arg, out] : e.writebacks) {
    const Tensor& now = outs.at(out);
    if (now.impl() == inputs[arg].impl()) {
      inputs[arg].impl()->storage()->bump_version();  // computed in place: the write still counts
    } else {
      inputs[arg].copy_(now);
    }
  }
  outs.resize(e.num_outputs);
  return outs;
}

std::vector<guards::GuardArg> guard_args(const std::vector<ArgValue>& args) {
  std::vector<guards::GuardArg> out;
  out.reserve(args.size());
  for (const ArgValue& a : args) out.push_back(GuardView::to_guard_arg(a));
  return out;
}

CompiledForExport compile_for_export(const TraceFn& fn, const std::vector<ArgValue>& args, CompileOptions opts,
                                     const std::vector<std::pair<size_t, int64_t>>& dynamic,
                                     const passes::ScheduleTarget& target, const std::string& backend) {
  opts.backend = backend;
  opts.dynamic = Dynamic::Auto;  // static, but for the dims seeded below
  CompiledState s(std::move(opts));
  s.schedule_target = target;
  s.plan_only = true;  // the exporter compiles the kernels for each of its targets
  for (const auto& [arg, dim] : dynamic) s.auto_dynamic.insert({arg, static_cast<size_t>(dim)});
  std::unique_ptr<Entry> e = s.build(args, fn, /*inspect=*/false);
  const std::string& name = s.opts.name;
  if (!e->eager_reason.empty())
    fail("export_program", "'{}' cannot be exported as one program: {}", name, e->eager_reason);
  if (e->training)
    fail("export_program", "'{}': a tensor requires grad; an exported program runs inference (export under NoGradGuard, "
         "or detach the tensors)", name);
  if (!e->writebacks.empty())
    fail("export_program", "'{}' updates an argument or a captured tensor in place; an exported program only returns "
         "new tensors", name);
  for (const auto& [arg, dim] : dynamic) {
    const bool bound = std::any_of(e->guards.guards().begin(), e->guards.guards().end(), [&](const guards::Guard& g) {
      return g.arg == static_cast<int>(arg) && g.dim == dim &&
             (g.kind == guards::GuardKind::SymbolBind || g.kind == guards::GuardKind::SymbolEq);
    });
    if (!bound)
      fail("export_program", "'{}': {}.size({}) is declared dynamic, but the trace made it static (sizes 0 and 1 are "
           "always specialized, and so is a dim the function's result depends on); its guards:\n{}",
           name, s.arg_name(arg), dim, e->guards_text);
  }
  CompiledForExport out;
  out.plan = e->comp.plan;
  out.params = rt::plan_param_sources(e->comp, backend);
  out.guards = e->guards;
  out.lifted = e->lifted;
  return out;
}

std::shared_ptr<CompiledState> make_compiled_state(CompileOptions opts, bool use_lowerings) {
  auto s = std::make_shared<CompiledState>(std::move(opts));
  s->use_lowerings = use_lowerings;
  return s;
}

std::vector<Tensor> call_compiled(CompiledState& s, const std::vector<ArgValue>& args, const TraceFn& fn) {
  if (!s.traces_graphs) return fn(args);
  for (const ArgValue& a : args)
    if (const Tensor* t = std::get_if<Tensor>(&a); t && !t->defined())
      fail("compile", "function '{}' received an undefined tensor", s.opts.name);
  const GuardView view(args);
  const bool grad = GradMode::is_enabled();
  const auto passes = [&](const Entry& e) { return e.guards.check(view.args()) && grad_state_matches(e, args, grad); };
  if (const Entry* e = s.entries.find(passes)) {
    s.hits.fetch_add(1, std::memory_order_relaxed);
    KILN_LOG_IF(rt::LogChannel::Cache, "{}: cache hit", s.opts.name);
    s.kernels.store(e->kernels, std::memory_order_relaxed);
    return s.run(*e, args, fn);
  }
  std::unique_lock compile_lock(s.compile_mu);
  if (const Entry* e = s.entries.find(passes)) {  // compiled by another thread meanwhile
    s.hits.fetch_add(1);
    s.kernels.store(e->kernels);
    compile_lock.unlock();
    return s.run(*e, args, fn);
  }
  const Entry* last = s.entries.back();
  s.misses.fetch_add(1);
  KILN_LOG_IF(rt::LogChannel::Cache, "{}: cache miss ({} entries)", s.opts.name, s.entries.size());
  std::string why = "no entry yet";
  if (last) {
    if (auto f = last->guards.first_failure(view.args())) why = "guard failed: " + f->str();
    else why = GradMode::is_enabled() ? "requires_grad of an argument or captured tensor differs" : "grad mode is off";
  }
  if (static_cast<int>(s.entries.size()) >= s.opts.cache_size_limit) {
    if (!s.warned_limit) {
      s.warned_limit = true;
      rt::warn(fmt::format("compiled function '{}' reached cache_size_limit ({}); it runs eagerly from now on (last miss: {})",
                           s.opts.name, s.opts.cache_size_limit, why));
    }
    compile_lock.unlock();
    return fn(args);
  }
  if (last) KILN_LOG_IF(rt::LogChannel::Recompiles, "{}: recompiling ({}): {}", s.opts.name, signature_str(args), why);
  for (const std::string& dim : s.note_changed_sizes(args))
    KILN_LOG_IF(rt::LogChannel::Recompiles, "{}: automatic dynamic: {}", s.opts.name, dim);
  std::shared_ptr<const Entry> e = s.build(args, fn, /*inspect=*/false);
  s.entries.append(e);
  compile_lock.unlock();
  s.kernels.store(e->kernels);
  return s.run(*e, args, fn);
}

std::string explain_compiled(CompiledState& s, const std::vector<ArgValue>& args, const TraceFn& fn) {
  if (!s.backend->traces())
    return fmt::format("compiled function '{}': backend \"{}\" (nothing compiled)\n", s.opts.name, s.backend_name());
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Entry> e = s.build(args, fn, /*inspect=*/true);
  const double total = ms_since(t0);
  s.traces.fetch_sub(1);  // explain does not count as a call
  if (!e->eager_reason.empty())
    return fmt::format("=== compiled function '{}' ({}) ===\nruns eagerly: {}\n\n--- guards ---\n{}", s.opts.name,
                       signature_str(args), e->eager_reason, e->guards_text);
  s.compiles.fetch_sub(1);
  std::string out = fmt::format("=== compiled function '{}' ({}) ===\nbackend \"{}\", decomposed to level {}\n",
                                s.opts.name, signature_str(args), s.backend_name(), ir::level_name(s.backend->level()));
  out += "\n--- symbols ---\n" + (e->symbols_text.empty() ? std::string("(none: static shapes)\n") : e->symbols_text);
  out += "\n--- guards ---\n" + e->guards_text;
  if (e->training) {
    const rt::TrainingProgram& t = *e->training;
    out += "\n--- joint forward and backward graph ---\n" + t.joint_text;
    out += "\n--- " + t.partition_report;
    for (const auto* part : {&t.forward_comp, &t.backward_comp}) {
      const bool fwd = part == &t.forward_comp;
      out += fmt::format("\n--- {} program: optimized graph ---\n{}", fwd ? "forward" : "backward", part->text("fuse"));
      if (part->has_plan)
        out += fmt::format("\n--- {} program: plan, {} kernels ---\n{}", fwd ? "forward" : "backward",
                           part->plan.kernels().size(), part->text("plan"));
    }
    out += fmt::format("\n--- timings ---\ntrace (joint) {:.3f} ms\ntotal {:.3f} ms\n", e->trace_ms, total);
    return out;
  }
  const rt::Compilation& c = e->comp;
  out += "\n--- traced graph ---\n" + c.text("traced");
  out += "\n--- decomposed graph ---\n" + c.text("decompose");
  out += "\n--- optimized graph ---\n" + c.text("fuse");
  if (c.has_plan) out += fmt::format("\n--- plan: {} kernels ---\n", c.plan.kernels().size()) + c.text("plan");
  if (!c.text("llvm_ir").empty()) {
    out += "\n--- LLVM IR (optimized) ---\n" + c.text("llvm_ir");
    out += "\n--- assembly ---\n" + c.text("assembly");
  }
  out += "\n--- timings ---\n";
  out += fmt::format("trace {:.3f} ms\n", e->trace_ms);
  for (const rt::StageRecord& p : c.stages)
    out += fmt::format("stage {:<17} {:.3f} ms{}\n", p.name, p.ms, p.changed ? "" : " (no change)");
  out += fmt::format("total {:.3f} ms\n", total);
  if (c.code_source) out += fmt::format("code {}\n", code_source_name(*c.code_source));
  return out;
}

}  // namespace kiln::detail

namespace kiln {

namespace {
void mark(const Tensor& t, int64_t dim, bool dynamic, std::string_view op) {
  if (!t.defined()) fail(op, "called on an undefined tensor");
  const int64_t d = normalize_dim(op, dim, t.dim(), false);
  if (d >= 64) fail(op, "dim {} is beyond the 64 dims that can be marked", d);
  t.impl()->mark(d, dynamic);
}
}  // namespace

void mark_dynamic(const Tensor& t, int64_t dim) { mark(t, dim, true, "mark_dynamic"); }
void mark_static(const Tensor& t, int64_t dim) { mark(t, dim, false, "mark_static"); }

}  // namespace kiln

namespace kiln::detail {

CompileStats compiled_stats(const CompiledState& s) {
  CompileStats st{s.traces.load(), s.compiles.load(), s.hits.load(), s.misses.load(), s.kernels.load()};
  st.code_from_memory = s.code_from_memory.load();
  st.code_from_disk = s.code_from_disk.load();
  st.code_from_remote = s.code_from_remote.load();
  return st;
}

}  // namespace kiln::detail
