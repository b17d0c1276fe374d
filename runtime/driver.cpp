// kiln/runtime/driver.cpp — compile_graph: every stage of a compilation, in order.
#include "runtime/driver.h"

#include "base/error.h"
#include "base/timing.h"
#include "frontend/custom_op.h"
#include "frontend/decompositions.h"
#include "frontend/factories.h"
#include "ir/graph_dot.h"
#include "ir/text.h"
#include "ir/verifier.h"
#include "passes/decompose.h"
#include "passes/fuse.h"
#include "passes/simplify.h"
#include "runtime/extend.h"
#include "runtime/interpreter.h"
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
// execution bit for bit.
std::optional<Scalar> evaluate_constant(const ir::Node& n, const std::vector<Scalar>& inputs) {
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
  if (!opts.dump_dir.empty())
    debug_dump(opts.dump_dir, fmt::format("passes/{:02}_{}.kir", stages.size(), name), ir::print_graph(*graph));
  if (opts.keep_stage_texts) texts.emplace_back("after " + name, ir::print_graph(*graph));
  return changed;
}

void Compilation::timed(const std::string& name, const std::function<void()>& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  stages.push_back({name, ms_since(t0), true});
}

void Compilation::keep(const std::string& label, std::string text) {
  if (!opts.keep_text && opts.dump_dir.empty()) return;
  if (!opts.dump_dir.empty()) {
    debug_dump(opts.dump_dir, label, text);
    if (label.size() > 4 && label.compare(label.size() - 4, 4, ".kir") == 0)
      debug_dump(opts.dump_dir, label.substr(0, label.size() - 4) + ".dot", ir::graph_dot(*graph, label));
  }
  texts.emplace_back(label, std::move(text));
}

const std::string& Compilation::text(const std::string& label) const {
  static const std::string none;
  for (const auto& [l, t] : texts)
    if (l == label) return t;
  return none;
}

double Compilation::total_ms() const {
  double t = 0;
  for (const StageRecord& s : stages) t += s.ms;
  return t;
}

void lower_to_kernels(Compilation& c, passes::LowerOptions lo) {
  lo.input_strides = c.opts.input_strides;
  lo.name_prefix = c.prefix;
  lo.hints = c.opts.hints;
  if (c.opts.split_reduction_min >= 0) lo.split_reduction_min = c.opts.split_reduction_min;
  c.timed("fuse", [&] { c.fusion = passes::fuse(*c.graph, lo); });
  c.has_fusion = true;
  c.timed("build_kernels", [&] { c.plan = passes::build_kernels(*c.graph, c.fusion, lo); });
  c.timed("plan_memory", [&] { passes::plan_memory(c.plan); });
  c.has_plan = true;
}

std::vector<ParamSource> plan_param_sources(const Compilation& c, std::string_view backend) {
  std::vector<ParamSource> params;
  for (const std::string& p : c.plan.params) {
    auto it = c.opts.params.find(p);
    if (it == c.opts.params.end()) internal_fail("{} backend: plan parameter {} has no source", backend, p);
    params.push_back(it->second);
  }
  return params;
}

std::vector<ExternKernelFn> plan_extern_fns(const Compilation& c, std::string_view backend) {
  std::vector<ExternKernelFn> fns;
  bool any = false;
  for (const ir::PlanStep& st : c.plan.steps) {
    ExternKernelFn fn;
    if (st.kind == ir::StepKind::Extern) {
      if (const Lowering* l = c.opts.use_lowerings ? find_lowering(backend, st.op) : nullptr; l && l->call) {
        fn = l->call;
      } else if (ir::op_info(st.op).family == ir::OpFamily::Custom) {
        fn = [op = st.op](const std::vector<Tensor>& in, const ir::AttrList& attrs, const std::vector<Tensor>& out) {
          std::vector<Tensor> r = run_custom_op(op, in, attrs);
          for (size_t i = 0; i < out.size(); ++i) Tensor(out[i]).copy_(r.at(i));
        };
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
  if (c.opts.keep_text || !c.opts.dump_dir.empty()) c.keep("000_traced.kir", ir::print_graph(*c.graph));

  c.stage("lowerings", [&](ir::Graph& g) { return c.opts.use_lowerings && apply_rewrites(g, backend); });
  passes::DecomposeOptions dopts;
  dopts.level = c.opts.level.value_or(backend.level());
  dopts.expand = [](const ir::Node& n) { return trace_decomposition(n); };
  dopts.keep = [&](const ir::Node& n) { return c.opts.use_lowerings && backend.lowers(n); };
  c.stage("decompose", [&](ir::Graph& g) { return passes::decompose(g, dopts); });
  if (c.opts.keep_text || !c.opts.dump_dir.empty()) c.keep("010_decomposed.kir", ir::print_graph(*c.graph));

  c.stage("dce", passes::dce);
  c.stage("cse", passes::cse);
  c.stage("fold_constants", [](ir::Graph& g) { return passes::fold_constants(g, evaluate_constant); });
  c.stage("simplify_algebra", passes::simplify_algebra);
  c.stage("cse", passes::cse);
  c.stage("dce", passes::dce);

  backend.lower(c);  // kernel backends: "fuse" (c.fusion), "build_kernels", "plan_memory" (c.plan)
  if (c.opts.keep_text || !c.opts.dump_dir.empty())  // with the fusion groups marked, when there are any
    c.keep("020_fused.kir", c.has_fusion ? ir::print_fused_graph(*c.graph, c.fusion) : ir::print_graph(*c.graph));
  if (c.has_plan) c.keep("030_kernels.kk", c.plan.str());
  if (c.opts.stop_before_compile) return c;

  const auto t0 = std::chrono::steady_clock::now();
  c.status = backend.compile(c);
  c.stages.push_back({"backend_compile", ms_since(t0), true});  // includes the backend's own records
  return c;
}

}  // namespace kiln::rt
