// kiln/runtime/compile.cpp — the compiled-function cache: guards, tracing, compiling, running.
//
// A call checks the entries' guard sets in order under a shared lock (the fast path); the
// first that passes runs its Program. A miss takes the function's compile lock (so one thread
// compiles a new signature while others wait), looks again, then traces the callable on
// traced tensors, runs the pass pipeline, generates and links the kernels and appends the
// entry. Past cache_size_limit the function runs eagerly and warns once.
#include "runtime/compile.h"

#include "codegen_cpu/kernel_codegen.h"
#include "base/error.h"
#include "frontend/tracer.h"
#include "frontend/views.h"
#include "ir/shape_env.h"
#include "ir/text.h"
#include "passes/lower.h"
#include "passes/pipeline.h"
#include "runtime/interpreter.h"
#include "runtime/log.h"
#include "runtime/program.h"
#include "runtime/repro_hooks.h"

#include <fmt/format.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>

namespace kiln::detail {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

enum class Backend { Cpu, Interpreter, Eager };

Backend parse_backend(const std::string& name) {
  if (name.empty() || name == "cpu") return Backend::Cpu;
  if (name == "interpreter") return Backend::Interpreter;
  if (name == "eager") return Backend::Eager;
  fail("compile", "unknown backend '{}'; expected \"cpu\", \"interpreter\" or \"eager\"", name);
}

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
    if (const Tensor* t = std::get_if<Tensor>(&a)) out.push_back(t->impl()->sizes());
    else out.emplace_back();
  return out;
}

// One compiled signature.
struct Entry {
  std::string meta;                           // meta_key of the arguments it was traced with
  std::vector<std::vector<int64_t>> sizes;    // their sizes (per argument; empty for scalars)
  guards::GuardSet guards;
  std::vector<Tensor> lifted;                // captured tensors, passed after the user's
  std::unique_ptr<rt::Program> program;      // cpu backend
  std::shared_ptr<ir::Graph> graph;          // interpreter backend (decomposed graph)
  int64_t kernels = 0;
  // Inspection (explain / debug dumps).
  passes::PipelineResult pipeline;
  cpu::CodegenResult code;
  double trace_ms = 0;
  std::string guards_text;
  std::string symbols_text;  // "s0 = a.size(0) = b.size(0) (hint 37)" per symbol
  // In-place updates of arguments: (tensor argument position, extra graph output) pairs,
  // written back into the caller's tensors after each run; user outputs come first.
  std::vector<std::pair<size_t, size_t>> writebacks;
  size_t num_outputs = 0;
  // KILN_VERIFY / KILN_REPRO_DIR (runtime/repro_hooks.h): the traced graph before the passes.
  std::shared_ptr<const ir::Graph> traced;
};

// The message of a non-user error with the repro's directory appended (an InternalError
// again: its "internal error: " prefix is not repeated).
[[noreturn]] void rethrow_with_repro(const std::exception& err, const std::string& fn, const std::string& dir) {
  std::string msg = err.what();
  const std::string_view prefix = "internal error: ";
  if (msg.rfind(prefix, 0) == 0) msg.erase(0, prefix.size());
  throw InternalError(fmt::format("{} (compiled function '{}'; repro: {})", msg, fn, dir));
}

}  // namespace

class CompiledState {
 public:
  explicit CompiledState(CompileOptions o) : opts(std::move(o)), backend(parse_backend(opts.backend)) {
    if (opts.cache_size_limit < 0) fail("compile", "cache_size_limit must be >= 0, got {}", opts.cache_size_limit);
  }

  std::unique_ptr<Entry> build(const std::vector<ArgValue>& args, const TraceFn& fn, bool inspect);
  void build_backend(Entry& e, TracedProgram& tp, const passes::PipelineOptions& po,
                     const std::map<std::string, rt::ParamSource>& sources, bool want_code);
  const char* backend_name() const { return backend == Backend::Interpreter ? "interpreter" : "cpu"; }
  // Under Dynamic::Auto: the dims whose size differs from an entry traced with otherwise equal
  // arguments become dynamic for this and later compiles; returns their names.
  std::vector<std::string> note_changed_sizes(const std::vector<ArgValue>& args);
  bool is_dynamic(const std::vector<ArgValue>& args, size_t arg, size_t dim) const;
  std::string arg_name(size_t i) const {
    return i < opts.arg_names.size() && !opts.arg_names[i].empty() ? opts.arg_names[i] : fmt::format("arg{}", i);
  }
  std::vector<Tensor> run(const Entry& e, const std::vector<ArgValue>& args) const;

  CompileOptions opts;
  Backend backend;
  mutable std::shared_mutex entries_mu;
  std::vector<std::shared_ptr<const Entry>> entries;
  std::mutex compile_mu;
  std::atomic<int64_t> traces{0}, compiles{0}, hits{0}, misses{0}, kernels{0};
  bool warned_limit = false;
  std::set<std::pair<size_t, size_t>> auto_dynamic;  // (argument, dim), under compile_mu
};

std::vector<std::string> CompiledState::note_changed_sizes(const std::vector<ArgValue>& args) {
  std::vector<std::string> added;
  if (opts.dynamic != Dynamic::Auto) return added;
  const std::string meta = meta_key(args);
  const auto now = sizes_of(args);
  std::shared_lock lock(entries_mu);
  for (const auto& e : entries) {
    if (e->meta != meta) continue;
    for (size_t i = 0; i < now.size(); ++i)
      for (size_t d = 0; d < now[i].size(); ++d)
        if (now[i][d] != e->sizes[i][d] && auto_dynamic.insert({i, d}).second)
          added.push_back(fmt::format("{}.size({})", arg_name(i), d));
  }
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

// Runs the pass pipeline on the traced graph and compiles it for the backend.
void CompiledState::build_backend(Entry& e, TracedProgram& tp, const passes::PipelineOptions& po,
                                  const std::map<std::string, rt::ParamSource>& sources, bool want_code) {
  e.pipeline = passes::run_pipeline(*tp.graph, po);
  KILN_LOG_IF(rt::LogChannel::Decomp, "{}: decomposed graph\n{}", opts.name, e.pipeline.decomposed_text);
  KILN_LOG_IF(rt::LogChannel::Fusion, "{}: plan\n{}", opts.name, e.pipeline.plan.str());

  if (backend == Backend::Interpreter) {
    e.graph = tp.graph;
  } else {
    std::vector<const ir::Kernel*> ks = e.pipeline.plan.kernels();
    cpu::CodegenOptions co;
    co.want_ir = want_code;
    co.want_asm = want_code;
    e.code = cpu::compile_kernels(ks, co);
    std::vector<cpu::KernelFn> fns;
    for (const cpu::CompiledKernel& k : e.code.kernels) fns.push_back(k.fn);
    e.kernels = static_cast<int64_t>(fns.size());
    passes::ExecPlan plan = e.pipeline.plan;
    std::vector<rt::ParamSource> params;
    for (const std::string& p : plan.params) {
      auto it = sources.find(p);
      if (it == sources.end()) internal_fail("compile: plan parameter {} is not an input size", p);
      params.push_back(it->second);
    }
    e.program = std::make_unique<rt::Program>(std::move(plan), std::move(fns), std::move(params));
    KILN_LOG_IF(rt::LogChannel::Kernels, "{}: {} kernels, codegen {:.2f} ms (build {:.2f}, optimize {:.2f}, emit {:.2f})",
                opts.name, e.kernels, e.code.build_ms + e.code.optimize_ms + e.code.codegen_ms, e.code.build_ms,
                e.code.optimize_ms, e.code.codegen_ms);
  }
}

std::unique_ptr<Entry> CompiledState::build(const std::vector<ArgValue>& args, const TraceFn& fn, bool inspect) {
  auto e = std::make_unique<Entry>();
  e->meta = meta_key(args);
  e->sizes = sizes_of(args);
  std::vector<std::string> names;
  for (size_t i = 0; i < args.size(); ++i) names.push_back(arg_name(i));

  // The input types: a symbol for every dynamic dim (ShapeEnv, duck-sized), else the size.
  ir::ShapeEnv env;
  ir::ShapeEnvScope env_scope(&env);
  guards::SymbolicInputs sym;
  sym.env = &env;
  std::vector<ir::TensorType> types;
  std::map<std::string, rt::ParamSource> sources;  // symbol -> where a call reads it
  for (size_t i = 0; i < args.size(); ++i) {
    const Tensor* t = std::get_if<Tensor>(&args[i]);
    if (!t) continue;
    std::vector<ir::Expr> sizes;
    for (size_t d = 0; d < static_cast<size_t>(t->dim()); ++d) {
      const int64_t n = t->impl()->sizes()[d];
      if (!is_dynamic(args, i, d)) {
        sizes.emplace_back(n);
        continue;
      }
      ir::Expr s = env.create_symbol(n, fmt::format("{}.size({})", names[i], d));
      sources.emplace(s.symbol_name(), rt::ParamSource{static_cast<int>(types.size()), static_cast<int>(d), false});
      sizes.push_back(s);
    }
    sym.sizes.push_back(sizes);
    types.emplace_back(t->dtype(), sizes, t->device());
  }

  // Trace: tensors are replaced by traced stand-ins; scalars are passed as they are.
  const auto t0 = std::chrono::steady_clock::now();
  TracedProgram tp;
  std::vector<Tensor> traced_args;
  try {
    tp = trace_types(
        [&](const std::vector<Tensor>& traced) {
          traced_args = traced;
          std::vector<ArgValue> targs = args;
          size_t k = 0;
          for (ArgValue& a : targs)
            if (std::holds_alternative<Tensor>(a)) a = traced.at(k++);
          return fn(targs);
        },
        types);
  } catch (const Error& err) {
    throw Error(fmt::format("{}\n  (while tracing compiled function '{}' called with ({}))", err.what(), opts.name,
                            signature_str(args)));
  }
  e->trace_ms = ms_since(t0);
  traces.fetch_add(1);
  // An argument updated in place (a.add_(1)) was rebound to a new value by the tracer: that
  // value becomes an extra output, copied back into the caller's tensor after each run.
  e->num_outputs = tp.graph->outputs().size();
  for (size_t k = 0; k < traced_args.size(); ++k) {
    ir::Value* now = traced_args[k].impl()->value();
    if (now != tp.graph->inputs().at(k)) {
      e->writebacks.push_back({k, tp.graph->outputs().size()});
      tp.graph->add_output(now);
    }
  }
  e->lifted = tp.lifted;
  KILN_LOG_IF(rt::LogChannel::Graph, "{}: traced graph\n{}", opts.name, ir::print_graph(*tp.graph));

  if (rt::repro_hooks_enabled()) e->traced = ir::parse_graph(ir::print_graph(*tp.graph));
  const bool dump = rt::debug_dir_enabled();
  passes::PipelineOptions po;
  po.keep_text = inspect || dump || rt::log_enabled(rt::LogChannel::Decomp) || rt::log_enabled(rt::LogChannel::Fusion);
  // Kernels read the inputs with the strides they have now (the guards pin them); inputs with
  // symbolic sizes are contiguous (guarded), so their strides follow from the sizes.
  {
    size_t k = 0;
    for (const Tensor& t : tensors_of(args)) {
      const ir::TensorType& ty = types[k++];
      po.lower.input_strides.push_back(ir::all_const(ty.sizes) ? ir::to_exprs(t.strides().vec())
                                                               : passes::contiguous_strides(ty.sizes));
    }
  }
  for (const Tensor& t : tp.lifted) po.lower.input_strides.push_back(ir::to_exprs(t.strides().vec()));
  po.lower.hints = env.hints();  // for performance choices only (e.g. splitting a big reduction)
  static std::atomic<uint64_t> compilation_counter{0};
  std::string stem = opts.name;
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  po.lower.name_prefix = fmt::format("{}_{}_k", stem, compilation_counter.fetch_add(1));
  try {
    build_backend(*e, tp, po, sources, inspect || dump);
  } catch (const Error&) {
    throw;  // the user's mistake: nothing to reproduce
  } catch (const std::exception& err) {
    if (!e->traced) throw;
    std::vector<Tensor> inputs = tensors_of(args);
    inputs.insert(inputs.end(), tp.lifted.begin(), tp.lifted.end());
    const std::string dir = rt::write_failure_repro(opts.name, *e->traced, inputs,
                                                    fmt::format("{} failed to compile: {}", backend_name(), err.what()));
    if (dir.empty()) throw;
    rethrow_with_repro(err, opts.name, dir);
  }
  // Guards last: decomposition may decide (and so guard) more about the symbols.
  e->guards = guards::GuardSet::from_args(args, names, &sym);
  e->guards_text = e->guards.str();
  for (const ir::SymbolInfo& si : env.symbols()) {
    e->symbols_text += si.name;
    for (const std::string& src : si.sources) e->symbols_text += " = " + src;
    e->symbols_text += fmt::format(" (hint {})\n", si.hint);
  }
  compiles.fetch_add(1);
  if (rt::log_enabled(rt::LogChannel::Perf)) {
    double passes_ms = 0;
    for (const passes::PassRecord& p : e->pipeline.passes) passes_ms += p.ms;
    rt::log(rt::LogChannel::Perf,
            fmt::format("{}: compiled in {:.2f} ms (trace {:.2f}, passes {:.2f}, LLVM build {:.2f}, optimize {:.2f}, "
                        "machine code {:.2f}), {} kernels",
                        opts.name, ms_since(t0), e->trace_ms, passes_ms, e->code.build_ms, e->code.optimize_ms,
                        e->code.codegen_ms, e->kernels));
  }
  KILN_LOG_IF(rt::LogChannel::Guards, "{}: guards of the new entry\n{}", opts.name, e->guards_text);
  if (dump) {
    const std::string dir = rt::debug_dump_dir(opts.name);
    rt::debug_dump(dir, "000_traced.kir", e->pipeline.traced_text);
    rt::debug_dump(dir, "010_decomposed.kir", e->pipeline.decomposed_text);
    rt::debug_dump(dir, "020_fused.kir", e->pipeline.optimized_text);
    rt::debug_dump(dir, "030_kernels.kk", e->pipeline.plan.str());
    rt::debug_dump(dir, "kernels.ll", e->code.llvm_ir);
    rt::debug_dump(dir, "kernels.s", e->code.assembly);
    rt::debug_dump(dir, "guards.txt", e->guards_text);
  }
  return e;
}

std::vector<Tensor> CompiledState::run(const Entry& e, const std::vector<ArgValue>& args) const {
  std::vector<Tensor> inputs;
  inputs.reserve(args.size() + e.lifted.size());
  for (const ArgValue& a : args)
    if (const Tensor* t = std::get_if<Tensor>(&a)) inputs.push_back(*t);
  inputs.insert(inputs.end(), e.lifted.begin(), e.lifted.end());
  std::vector<Tensor> outs;
  try {
    outs = e.program ? e.program->run(inputs) : rt::interpret(*e.graph, inputs);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& err) {
    if (!e.traced) throw;
    const std::string dir = rt::write_failure_repro(opts.name, *e.traced, inputs,
                                                    fmt::format("{} failed to run: {}", backend_name(), err.what()));
    if (dir.empty()) throw;
    rethrow_with_repro(err, opts.name, dir);
  }
  if (e.traced && e.program && rt::config().verify) rt::verify_outputs(opts.name, *e.traced, inputs, outs);
  if (e.writebacks.empty()) return outs;
  for (const auto& [arg, out] : e.writebacks) inputs[arg].copy_(outs.at(out));
  outs.resize(e.num_outputs);
  return outs;
}

std::shared_ptr<CompiledState> make_compiled_state(CompileOptions opts) {
  return std::make_shared<CompiledState>(std::move(opts));
}

std::vector<Tensor> call_compiled(CompiledState& s, const std::vector<ArgValue>& args, const TraceFn& fn) {
  if (s.backend == Backend::Eager) return fn(args);
  for (const ArgValue& a : args)
    if (const Tensor* t = std::get_if<Tensor>(&a); t && !t->defined())
      fail("compile", "function '{}' received an undefined tensor", s.opts.name);
  {
    std::shared_lock lock(s.entries_mu);
    for (const auto& e : s.entries)
      if (e->guards.check(args)) {
        s.hits.fetch_add(1, std::memory_order_relaxed);
        KILN_LOG_IF(rt::LogChannel::Cache, "{}: cache hit", s.opts.name);
        s.kernels.store(e->kernels, std::memory_order_relaxed);
        std::shared_ptr<const Entry> keep = e;
        lock.unlock();
        return s.run(*keep, args);
      }
  }
  std::unique_lock compile_lock(s.compile_mu);
  std::shared_ptr<const Entry> last;
  {
    std::shared_lock lock(s.entries_mu);
    for (const auto& e : s.entries)
      if (e->guards.check(args)) {  // compiled by another thread meanwhile
        s.hits.fetch_add(1);
        s.kernels.store(e->kernels);
        std::shared_ptr<const Entry> keep = e;
        lock.unlock();
        compile_lock.unlock();
        return s.run(*keep, args);
      }
    if (!s.entries.empty()) last = s.entries.back();
  }
  s.misses.fetch_add(1);
  KILN_LOG_IF(rt::LogChannel::Cache, "{}: cache miss ({} entries)", s.opts.name, s.entries.size());
  std::string why = "no entry yet";
  if (last) {
    if (auto f = last->guards.first_failure(args)) why = "guard failed: " + f->str();
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
  {
    std::unique_lock lock(s.entries_mu);
    s.entries.push_back(e);
  }
  compile_lock.unlock();
  s.kernels.store(e->kernels);
  return s.run(*e, args);
}

std::string explain_compiled(CompiledState& s, const std::vector<ArgValue>& args, const TraceFn& fn) {
  if (s.backend == Backend::Eager) return fmt::format("compiled function '{}': backend \"eager\" (nothing compiled)\n", s.opts.name);
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Entry> e = s.build(args, fn, /*inspect=*/true);
  const double total = ms_since(t0);
  s.traces.fetch_sub(1);  // explain does not count as a call
  s.compiles.fetch_sub(1);
  std::string out = fmt::format("=== compiled function '{}' ({}) ===\n", s.opts.name, signature_str(args));
  out += "\n--- symbols ---\n" + (e->symbols_text.empty() ? std::string("(none: static shapes)\n") : e->symbols_text);
  out += "\n--- guards ---\n" + e->guards_text;
  out += "\n--- traced graph ---\n" + e->pipeline.traced_text;
  out += "\n--- decomposed graph ---\n" + e->pipeline.decomposed_text;
  out += "\n--- optimized graph ---\n" + e->pipeline.optimized_text;
  out += fmt::format("\n--- plan: {} kernels ---\n", e->pipeline.plan.kernels().size()) + e->pipeline.plan.str();
  if (s.backend == Backend::Cpu) {
    out += "\n--- LLVM IR (optimized) ---\n" + e->code.llvm_ir;
    out += "\n--- assembly ---\n" + e->code.assembly;
  }
  out += "\n--- timings ---\n";
  out += fmt::format("trace {:.3f} ms\n", e->trace_ms);
  for (const passes::PassRecord& p : e->pipeline.passes)
    out += fmt::format("pass {:<17} {:.3f} ms{}\n", p.name, p.ms, p.changed ? "" : " (no change)");
  if (s.backend == Backend::Cpu)
    out += fmt::format("codegen: build IR {:.3f} ms, optimize {:.3f} ms, machine code {:.3f} ms\n", e->code.build_ms,
                       e->code.optimize_ms, e->code.codegen_ms);
  out += fmt::format("total {:.3f} ms\n", total);
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
  return CompileStats{s.traces.load(), s.compiles.load(), s.hits.load(), s.misses.load(), s.kernels.load()};
}

}  // namespace kiln::detail
