// kiln/runtime/debug/run_graph.cpp — run_graph on "cpu" (pipeline, codegen, Program) or the interpreter.
#include "runtime/debug/run_graph.h"

#include "base/error.h"
#include "ir/graph_rebuild.h"
#include "runtime/backend.h"
#include "runtime/pipeline.h"
#include "runtime/interpreter/interpreter.h"

#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <cstring>

namespace kiln::rt {

namespace {

// Any backend but the interpreter: the compile driver on a specialized copy of the graph.
std::vector<Tensor> run_compiled(const ir::Graph& g, const std::vector<Tensor>& inputs, const Backend& backend) {
  std::shared_ptr<ir::Graph> copy = specialize_graph(g, inputs);  // the driver edits in place
  DriverOptions opts;
  opts.name = "run_graph";
  opts.example_inputs = inputs;
  for (const Tensor& t : inputs) opts.input_strides.push_back(ir::to_exprs(t.strides().vec()));
  Compilation c = compile_graph(std::move(copy), backend, std::move(opts));
  if (!c.status.ok()) internal_fail("run_graph: {}", c.status.error);
  return c.status.exe->run(inputs);
}

// Per dtype: (rtol, atol).
std::pair<double, double> default_tolerance(ScalarType dt) {
  switch (dt) {
    case ScalarType::Double: return {1e-7, 1e-7};
    case ScalarType::Half: return {1e-2, 1e-3};
    case ScalarType::BFloat16: return {3e-2, 1e-2};
    default: return {1e-4, 1e-5};
  }
}

const char* status_name(RunResult::Status s) {
  switch (s) {
    case RunResult::Status::Ok: return "ok";
    case RunResult::Status::UserError: return "user error";
    case RunResult::Status::InternalError: return "internal error";
  }
  return "?";
}

std::string compare_tensor(const Tensor& a, const Tensor& b, const Tolerance& tol) {
  if (a.dtype() != b.dtype())
    return fmt::format("dtype {} vs {}", dtype_short_name(a.dtype()), dtype_short_name(b.dtype()));
  if (a.sizes().vec() != b.sizes().vec()) return fmt::format("sizes {} vs {}", shape_str(a.sizes()), shape_str(b.sizes()));
  const int64_t n = a.numel();
  if (n == 0) return {};
  if (!is_floating_point(a.dtype())) {
    const Tensor ca = a.contiguous(), cb = b.contiguous();
    const size_t es = a.element_size();
    const auto* pa = static_cast<const uint8_t*>(ca.data_ptr());
    const auto* pb = static_cast<const uint8_t*>(cb.data_ptr());
    int64_t count = 0, first = -1;
    for (int64_t i = 0; i < n; ++i)
      if (std::memcmp(pa + i * es, pb + i * es, es) != 0) {
        if (first < 0) first = i;
        ++count;
      }
    if (count == 0) return {};
    const Tensor fa = ca.reshape({-1}).to(kInt64), fb = cb.reshape({-1}).to(kInt64);
    return fmt::format("{} of {} elements differ, first at index {} ({} vs {})", count, n, first,
                       fa.to_vector<int64_t>()[first], fb.to_vector<int64_t>()[first]);
  }
  auto [rtol, atol] = default_tolerance(a.dtype());
  if (tol.rtol >= 0) rtol = tol.rtol;
  if (tol.atol >= 0) atol = tol.atol;
  const std::vector<double> va = a.to(kDouble).contiguous().to_vector<double>();
  const std::vector<double> vb = b.to(kDouble).contiguous().to_vector<double>();
  int64_t count = 0, worst = -1;
  double worst_diff = -1;
  for (int64_t i = 0; i < n; ++i) {
    const double x = va[i], y = vb[i];
    if (std::isnan(x) && std::isnan(y)) continue;
    if (x == y) continue;  // equal infinities
    const double d = std::fabs(x - y);
    if (!(d <= atol + rtol * std::fabs(y))) {
      ++count;
      const double key = std::isnan(d) ? INFINITY : d;
      if (key > worst_diff) worst_diff = key, worst = i;
    }
  }
  if (count == 0) return {};
  return fmt::format("{} of {} elements differ, max abs diff {} at index {} ({} vs {})", count, n,
                     std::fabs(va[worst] - vb[worst]), worst, va[worst], vb[worst]);
}

}  // namespace

std::unique_ptr<ir::Graph> specialize_graph(const ir::Graph& g, const std::vector<Tensor>& inputs) {
  bind_graph_inputs(g, inputs, "run_graph");  // a static size is kept, not retyped to the tensor's
  ir::RebuildSpec spec;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::TensorType& ty = g.inputs()[i]->type();
    if (inputs[i].device() != ty.device)
      fail("run_graph", "input {} is typed {} on {}, but the tensor given is on {}", i, ty.str(), ty.device.str(),
           inputs[i].device().str());
    spec.input_types[i] = ir::TensorType(ty.dtype, ir::to_exprs(inputs[i].sizes().vec()), ty.device);
  }
  spec.keep_all_inputs = true;
  return ir::rebuild_graph(g, spec).graph;
}

RunResult run_graph(const ir::Graph& g, const std::vector<Tensor>& inputs, std::string_view backend) {
  const std::shared_ptr<const Backend> b = find_backend(backend, "run_graph");
  if (!b->traces()) fail("run_graph", "backend '{}' runs functions, not graphs", backend);
  RunResult r;
  try {
    // A graph typed for a device runs there or not at all (never silently on the host).
    for (size_t i = 0; i < g.inputs().size() && i < inputs.size(); ++i) {
      const Device want = g.inputs()[i]->type().device;
      if (inputs[i].device() != want)
        fail("run_graph", "input {} is typed on {}, but the tensor given is on {}", i, want.str(),
             inputs[i].device().str());
      if (want.is_cuda() && (b->name() == "cpu" || b->name() == "interpreter"))
        fail("run_graph", "backend '{}' runs on the cpu, but input {} is on {}", b->name(), i, want.str());
    }
    r.outputs = b->name() == "interpreter" ? interpret(g, inputs) : run_compiled(g, inputs, *b);
  } catch (const Error& e) {
    r.status = RunResult::Status::UserError;
    r.message = e.what();
  } catch (const std::exception& e) {
    r.status = RunResult::Status::InternalError;
    r.message = e.what();
  }
  return r;
}

GraphRunner backend_runner(std::string backend) {
  find_backend(backend, "run_graph");  // an unknown name fails now, listing the registered ones
  return [backend](const ir::Graph& g, const std::vector<Tensor>& inputs) { return run_graph(g, inputs, backend); };
}

std::string compare_runs(const RunResult& a, const RunResult& b, const Tolerance& tol, int* first_diff_output) {
  if (first_diff_output) *first_diff_output = -1;
  if (!a.ok() || !b.ok()) {
    if (a.status == b.status) return {};
    return fmt::format("{} vs {}: {}", status_name(a.status), status_name(b.status), a.ok() ? b.message : a.message);
  }
  if (a.outputs.size() != b.outputs.size())
    return fmt::format("{} outputs vs {}", a.outputs.size(), b.outputs.size());
  for (size_t k = 0; k < a.outputs.size(); ++k) {
    std::string d = compare_tensor(a.outputs[k], b.outputs[k], tol);
    if (d.empty()) continue;
    if (first_diff_output) *first_diff_output = static_cast<int>(k);
    return fmt::format("output {}: {}", k, d);
  }
  return {};
}

}  // namespace kiln::rt
