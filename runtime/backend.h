// kiln/runtime/backend.h — the Backend interface and the registry of backends by name.
//
// A backend turns a graph into something that runs. It has a name, the op level it
// consumes (Core: softmax, layer_norm, gelu, mean, var ... stay whole; Prim: everything is
// decomposed), the ops above that level it lowers itself, optional lowering stages (kernel
// backends fuse the graph into an ir::ExecPlan and plan its memory there) and compile(),
// which returns an Executable or a status carrying the error and the compiler's log (the
// caller decides: report or fall back). The compile driver (runtime/pipeline.h) calls these in
// order. "cpu", "cuda", "interpreter" and "eager" are registered at start-up; users add theirs
// with kiln::register_backend (runtime/extend.h).
#pragma once

#include "frontend/tensor.h"
#include "ir/graph.h"
#include "ir/op.h"
#include "runtime/program.h"

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::rt {

struct Compilation;  // runtime/pipeline.h

struct LibraryKernel {
  std::string_view name;  // empty: none
  ExternKernelFn fn;
  explicit operator bool() const { return static_cast<bool>(fn); }
};

// A compiled graph: called with the graph's inputs (the user's tensors, then lifted ones),
// returns its outputs. Must be callable from several threads at once.
class Executable {
 public:
  virtual ~Executable() = default;
  virtual std::vector<Tensor> run(const std::vector<Tensor>& inputs) const = 0;
  virtual int64_t kernels() const { return 0; }  // generated kernels (stats, explain)
};

// What compile() returns: an executable, or why there is none.
struct CompileStatus {
  std::unique_ptr<Executable> exe;
  std::string error;  // set when exe is null
  std::string log;    // the compiler's own log (NVRTC, a user backend's), when it has one
  bool ok() const { return exe != nullptr; }
  static CompileStatus failure(std::string error, std::string log = {}) {
    CompileStatus s;
    s.error = std::move(error);
    s.log = std::move(log);
    return s;
  }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const std::string& name() const = 0;
  // The level the decompose stage lowers graphs to for this backend.
  virtual ir::OpLevel level() const = 0;
  // Nodes above level() the backend takes as they are (a registered extern lowering).
  virtual bool lowers(const ir::Node& /*n*/) const { return false; }
  // Whether extern lowerings (register_lowering's extern_call) can run in its plans.
  virtual bool runs_extern_lowerings() const { return false; }
  // false for "eager": compile() runs the function as it is and never traces.
  virtual bool traces() const { return true; }
  // Kernel backends: fusion, kernel building and memory planning (Compilation::stage each).
  virtual void lower(Compilation& c) const { (void)c; }
  virtual CompileStatus compile(Compilation& c) const = 0;
  // The library kernel this backend runs `op` with as an extern step, on its own device's
  // tensors, and the library's name ("blas", "scan"); {} when it has none. The cpu backend's
  // serve its plans and eager ops, and other backends stage steps through the host with them.
  virtual LibraryKernel library_kernel(ir::OpKind /*op*/) const { return {}; }
};

// Adds a backend; throws kiln::Error when the name is taken. Thread-safe.
void add_backend(std::shared_ptr<const Backend> b);
// The backend called `name`; an unknown name is a kiln::Error listing the registered ones.
std::shared_ptr<const Backend> find_backend(std::string_view name, std::string_view op = "compile");
std::vector<std::string> backend_names();

// The built-in backends (runtime/cpu/backend_cpu.cpp; runtime/backend_interpreter.cpp has both
// others).
std::shared_ptr<const Backend> make_cpu_backend();
std::shared_ptr<const Backend> make_cuda_backend();  // runtime/cuda/backend_cuda.cpp
std::shared_ptr<const Backend> make_interpreter_backend();
std::shared_ptr<const Backend> make_eager_backend();

}  // namespace kiln::rt
