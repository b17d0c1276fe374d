// kiln/runtime/pipeline.cpp — compile_graph: every stage of a compilation, in order.
#include "runtime/pipeline.h"

#include "base/error.h"
#include "base/timing.h"
#include "frontend/custom_op.h"
#include "frontend/decompositions.h"
#include "frontend/ops_factory.h"
#include "ir/graph_dot.h"
#include "ir/text.h"
#include "ir/verifier.h"
#include "ir/shape_env.h"
#include "passes/decompose.h"
#include "passes/simplify_indices.h"
#include "passes/fuse.h"
#include "passes/simplify.h"
#include "runtime/extend.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/log.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>

namespace kiln::rt {

namespace {

// fold_constants' evaluator: the reference interpreter on 0-d tensors, so folding matches
// execution bit for bit. A transcendental function of floats (traits::Approximate) is not
// folded: the interpreter's libm and the kernels' math (libmvec on the cpu, CUDA's library)
// differ in the last bits, and a program that computed sin(c) one way and sin(x) with x == c
// the other would see two values for one.
std::optional<Scalar> evaluate_constant(const ir::Node& n, const std::vector<Scalar>& inputs) {
  if (n.info().has(ir::traits::Approximate) && is_floating_point(n.output()->type().dtype)) return std::nullopt;
  std::vector<Tensor> args;
  for (size_t i = 0; i < inputs.size(); ++i) args.push_back(kiln::full({}, inputs[i], n.input(i)->type().dtype));
  try {
    return interpret_op(n.op(), args, n.attrs()).at(0).item();
  } catch (const Error&) {
    return std::nullopt;
  }
}

// Rewrites registered for this backend replace their nodes (once: a rewrite may emit the op
// it rewrites, which then lowers as usual).
bool apply_rewrites(ir::Graph& g, const Backend& b) {
  std::vector<std::pair<ir::Node*, const Lowering*>> todo;
  for (ir::Node* n : g.nodes())
    if (const Lowering* l = find_lowering(b.name(), n->op()); l && l->rewrite) todo.emplace_back(n, l);
  for (auto& [n, l] : todo) passes::inline_expansion(g, n, *trace_rule(*n, l->rewrite));
  return !todo.empty();
}

// A stage's graph as text, with the trace's symbols and guards (a dump that parses again).
std::string graph_text(const ir::Graph& g) { return ir::print_graph(g, ir::ShapeEnv::current()); }

std::string unique_prefix(const std::string& name) {
  static std::atomic<uint64_t> counter{0};
  std::string stem = name;
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return fmt::format("{}_{}_k", stem, counter.fetch_add(1));
}

}  // namespace

std::map<std::string, ParamSource> params_from_inputs(const ir::Graph& g) {
  std::map<std::string, ParamSource> out;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const std::vector<ir::Expr>& sz = g.inputs()[i]->type().sizes;
    for (size_t d = 0; d < sz.size(); ++d)
      if (sz[d].is_symbol())
        out.emplace(sz[d].symbol_name(), ParamSource{static_cast<int>(i), static_cast<int>(d), false});
  }
  return out;
}

bool Compilation::stage(const std::string& name, const std::function<bool(ir::Graph&)>& fn) {
  if (!opts.only_stages.empty() &&
      std::find(opts.only_stages.begin(), opts.only_stages.end(), name) == opts.only_stages.end())
    return false;
  const auto t0 = std::chrono::steady_clock::now();
  const bool changed = fn(*graph);
  ir::verify(*graph);
  stages.push_back({name, ms_since(t0), changed});
  if (opts.keep_stage_texts || !opts.dump_dir.empty() || (opts.keep_text && name == "decompose"))
    snapshot(name, "kir", graph_text(*graph));
  return changed;
}

bool Compilation::plan_stage(const std::string& name, const std::function<bool(ir::ExecPlan&)>& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  const bool changed = fn(plan);
  for (const ir::Kernel* k : plan.kernels()) ir::verify_kernel(*k);
  stages.push_back({name, ms_since(t0), changed});
  if (opts.keep_stage_texts || !opts.dump_dir.empty()) snapshot(name, "kk", plan.str());
  return changed;
}

void Compilation::timed(const std::string& name, const std::function<void()>& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  stages.push_back({name, ms_since(t0), true});
}

void Compilation::snapshot(const std::string& name, const std::string& ext, std::string text) {
  if (!keeps_texts()) return;
  Snapshot s{name, fmt::format("{:02}_{}.{}", texts.size(), name, ext), std::move(text)};
  if (!opts.dump_dir.empty()) {
    debug_dump(opts.dump_dir, s.file, s.text);
    if (ext == "kir") debug_dump(opts.dump_dir, s.file.substr(0, s.file.size() - 4) + ".dot", ir::graph_dot(*graph, s.file));
  }
  texts.push_back(std::move(s));
}

const std::string& Compilation::text(const std::string& name) const {
  static const std::string none;
  for (auto it = texts.rbegin(); it != texts.rend(); ++it)
    if (it->name == name) return it->text;
  return none;
}

double Compilation::total_ms() const {
  double t = 0;
  for (const StageRecord& s : stages) t += s.ms;
  return t;
}

void lower_to_kernels(Compilation& c, passes::LowerOptions lo, const passes::ScheduleTarget& target,
                      const std::vector<PlanPass>& backend_passes) {
  lo.input_strides = c.opts.input_strides;
  lo.name_prefix = c.prefix;
  lo.hints = c.opts.hints;
  lo.donations = c.opts.donations;
  if (c.opts.split_reduction_min >= 0) lo.split_reduction_min = c.opts.split_reduction_min;
  c.timed("fuse", [&] { c.fusion = passes::fuse(*c.graph, lo); });
  c.has_fusion = true;
  if (c.keeps_texts()) c.snapshot("fuse", "kir", ir::print_fused_graph(*c.graph, c.fusion, ir::ShapeEnv::current()));
  c.timed("build_kernels", [&] { c.plan = passes::build_kernels(*c.graph, c.fusion, lo); });
  c.has_plan = true;
  if (c.opts.keep_stage_texts || !c.opts.dump_dir.empty()) c.snapshot("build_kernels", "kk", c.plan.str());
  // The trace's facts (a dynamic size is >= 2, what its guards taught); none outside a trace.
  static const ir::ExprFacts kNoFacts;
  const ir::ShapeEnv* env = ir::ShapeEnv::current();
  c.plan_stage("simplify_indices",
               [&](ir::ExecPlan& p) { return passes::simplify_indices(p, env ? env->facts() : kNoFacts); });
  const passes::ScheduleTarget& t = c.opts.schedule_target ? *c.opts.schedule_target : target;
  c.plan_stage("schedule_tiles", [&](ir::ExecPlan& p) { return passes::schedule_tiles(p, t); });
  for (const PlanPass& pass : backend_passes)
    c.plan_stage(pass.name, [&](ir::ExecPlan& p) { return pass.run(p, t); });
  c.timed("plan_memory", [&] { passes::plan_memory(c.plan); });
  if (!c.opts.donations.empty())
    c.plan_stage("donate_buffers", [&](ir::ExecPlan& p) { return passes::donate_buffers(p, c.opts.donations); });
  if (c.keeps_texts()) c.snapshot("plan", "kk", c.plan.str());
}

std::vector<ParamSource> plan_param_sources(const Compilation& c, std::string_view backend) {
  std::vector<ParamSource> params;
  for (const std::string& p : c.plan.params) {
    if (p == ir::kRandomSeedParam || p == ir::kRandomBaseParam) {
      ParamSource src;
      src.random = p == ir::kRandomSeedParam ? ParamSource::Random::Seed : ParamSource::Random::Base;
      params.push_back(src);
      continue;
    }
    auto it = c.opts.params.find(p);
    if (it == c.opts.params.end()) internal_fail("{} backend: plan parameter {} has no source", backend, p);
    params.push_back(it->second);
  }
  return params;
}

std::vector<ExternKernelFn> plan_step_fns(const Compilation& c, const Backend& backend) {
  return plan_step_fns(c.plan, backend, c.opts.use_lowerings);
}

std::vector<ExternKernelFn> plan_step_fns(const ir::ExecPlan& plan, const Backend& backend, bool use_lowerings) {
  std::vector<ExternKernelFn> fns;
  bool any = false;
  for (const ir::PlanStep& st : plan.steps) {
    ExternKernelFn fn;
    if (st.kind == ir::StepKind::Extern) {
      if (const Lowering* l = use_lowerings ? find_lowering(backend.name(), st.op) : nullptr; l && l->call) {
        fn = l->call;
      } else if (ir::op_info(st.op).family == ir::OpFamily::Custom) {
        fn = [op = st.op](const std::vector<Tensor>& in, const ir::AttrList& attrs, const std::vector<Tensor>& out) {
          std::vector<Tensor> r = run_custom_op(op, in, attrs);
          for (size_t i = 0; i < out.size(); ++i) Tensor(out[i]).copy_(r.at(i));
        };
      } else if (LibraryKernel lib = backend.library_kernel(st.op)) {
        fn = std::move(lib.fn);
      }
    }
    any = any || static_cast<bool>(fn);
    fns.push_back(std::move(fn));
  }
  if (!any) fns.clear();
  return fns;
}

const std::vector<std::string>& graph_stage_names() {
  static const std::vector<std::string> names = {"lowerings", "decompose", "dce", "cse", "fold_constants",
                                                 "simplify_algebra"};
  return names;
}

Compilation compile_graph(std::shared_ptr<ir::Graph> graph, const Backend& backend, DriverOptions opts) {
  for (const std::string& s : opts.only_stages)
    if (std::find(graph_stage_names().begin(), graph_stage_names().end(), s) == graph_stage_names().end())
      fail("opt", "unknown pass '{}'; the graph passes are {}", s, fmt::join(graph_stage_names(), ", "));
  Compilation c;
  c.graph = std::move(graph);
  c.backend = &backend;
  c.opts = std::move(opts);
  c.prefix = unique_prefix(c.opts.name);
  if (c.keeps_texts()) c.snapshot("traced", "kir", graph_text(*c.graph));

  c.stage("lowerings", [&](ir::Graph& g) { return c.opts.use_lowerings && apply_rewrites(g, backend); });
  passes::DecomposeOptions dopts;
  dopts.level = c.opts.level.value_or(backend.level());
  dopts.expand = [](const ir::Node& n) { return trace_decomposition(n); };
  dopts.keep = [&](const ir::Node& n) { return c.opts.use_lowerings && backend.lowers(n); };
  c.stage("decompose", [&](ir::Graph& g) { return passes::decompose(g, dopts); });

  c.stage("dce", passes::dce);
  c.stage("cse", passes::cse);
  c.stage("fold_constants", [&](ir::Graph& g) { return passes::fold_constants(g, evaluate_constant, dopts.keep); });
  c.stage("simplify_algebra", [&](ir::Graph& g) { return passes::simplify_algebra(g, dopts.keep); });
  c.stage("cse", passes::cse);
  c.stage("dce", passes::dce);

  // Kernel backends: "fuse" (c.fusion), "build_kernels", the schedule passes, "plan_memory" (c.plan).
  backend.lower(c);
  if (!c.has_fusion && c.keeps_texts()) c.snapshot("fuse", "kir", graph_text(*c.graph));  // nothing fused: the graph
  if (c.opts.stop_before_compile) return c;

  const auto t0 = std::chrono::steady_clock::now();
  c.status = backend.compile(c);
  c.stages.push_back({"backend_compile", ms_since(t0), true});  // includes the backend's own records
  return c;
}

}  // namespace kiln::rt
